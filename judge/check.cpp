// Correctness rules (see check.hpp).
#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace solgemm::judge {

Bounds bounds_for(bool fp32_layer) {
  Bounds b;
  if (fp32_layer) b.total = b.probe = 1e-4;
  return b;
}

double relative_error(double err2, double ref2) {
  if (ref2 > 0) return std::sqrt(err2 / ref2);
  return err2 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

CheckResult evaluate(const std::vector<RowError>& rows, const Bounds& b) {
  CheckResult c;
  double err2 = 0, ref2 = 0;
  int64_t first_bad_row = -1;
  long long first_bad_col = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowError& r = rows[i];
    const int64_t row = static_cast<int64_t>(i);
    err2 += r.err2;
    ref2 += r.ref2;
    if (r.nonfinite && first_bad_row < 0) {
      first_bad_row = row;
      first_bad_col = r.first_nonfinite_col;
    }
    c.nonfinite += r.nonfinite;
    const double e = relative_error(r.err2, r.ref2);
    if (c.worst_row < 0 || e > c.worst_row_err) {
      c.worst_row_err = e;
      c.worst_row = row;
    }
    if (row % 8 == 0 && (c.worst_probe_row < 0 || e > c.worst_probe_err)) {
      c.worst_probe_err = e;
      c.worst_probe_row = row;
    }
  }
  c.rel_err = relative_error(err2, ref2);
  std::vector<std::string> fails;
  if (c.nonfinite)
    fails.push_back(fmt::format("no NaN/Inf: {} non-finite output elements, the first at row {} column {} "
                                "(the output is pre-filled with NaN: unwritten elements show here)",
                                c.nonfinite, first_bad_row, first_bad_col));
  if (!(c.rel_err <= b.total))
    fails.push_back(fmt::format("relative L2 error of the whole output {:.3e} > {:.0e}", c.rel_err, b.total));
  if (c.worst_probe_row >= 0 && !(c.worst_probe_err <= b.probe))
    fails.push_back(fmt::format("probe row {}: relative L2 error {:.3e} > {:.0e}", c.worst_probe_row,
                                c.worst_probe_err, b.probe));
  if (c.worst_row >= 0 && !(c.worst_row_err <= b.row_factor * b.total))
    fails.push_back(fmt::format("row {}: relative L2 error {:.3e} > {} x {:.0e}", c.worst_row, c.worst_row_err,
                                b.row_factor, b.total));
  c.ok = fails.empty();
  for (size_t i = 0; i < fails.size(); ++i) c.failure += (i ? "; " : "") + fails[i];
  return c;
}

void merge_worst(CheckResult& acc, const CheckResult& r) {
  if (acc.ok && !r.ok) acc.failure = r.failure;
  acc.ok = acc.ok && r.ok;
  acc.rel_err = std::max(acc.rel_err, r.rel_err);
  if (r.worst_probe_err >= acc.worst_probe_err) {
    acc.worst_probe_err = r.worst_probe_err;
    acc.worst_probe_row = r.worst_probe_row;
  }
  if (r.worst_row_err >= acc.worst_row_err) {
    acc.worst_row_err = r.worst_row_err;
    acc.worst_row = r.worst_row;
  }
  acc.nonfinite += r.nonfinite;
}

}  // namespace solgemm::judge
