// The correctness rules of judge-spec.md "Correctness", applied to per-row error sums computed on the GPU
// (reference.cu): whole-output relative L2 error <= bound (1e-2, router 1e-4); every probe row (rows 0, 8, 16,
// ...) <= probe bound (1e-3, router 1e-4); no row above 5x the bound; no NaN or Inf (outputs are pre-filled
// with NaN, so an unwritten element fails here). Plain C++17 (reference.cu includes RowError).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace solgemm::judge {

// Per output row, from the GPU: sum (out - ref)^2 and sum ref^2 over the finite elements, and the non-finite
// elements of out (count and first column, -1 when none).
struct RowError {
  double err2 = 0;
  double ref2 = 0;
  unsigned long long nonfinite = 0;
  long long first_nonfinite_col = -1;
};

struct Bounds {
  double total = 1e-2;      // whole output
  double probe = 1e-3;      // each probe row
  double row_factor = 5.0;  // any row: <= row_factor * total
};
Bounds bounds_for(bool fp32_layer);  // BF16: 1e-2 / 1e-3; router: 1e-4 / 1e-4

struct CheckResult {
  bool ok = true;
  double rel_err = 0;                 // whole output
  double worst_probe_err = 0;         // worst probe row
  int64_t worst_probe_row = -1;
  double worst_row_err = 0;           // worst row of all
  int64_t worst_row = -1;
  unsigned long long nonfinite = 0;
  std::string failure;                // every failing check, "; "-separated ("" when ok)
};

// ||d|| / ||ref||; 0 when both are 0; infinity when only ref is 0.
double relative_error(double err2, double ref2);
// Applies the rules to the rows of one output (probe rows: i % 8 == 0).
CheckResult evaluate(const std::vector<RowError>& rows, const Bounds& b);
// Keeps the worst figures of two checks of the same shape (several inputs); the first failure text is kept.
void merge_worst(CheckResult& acc, const CheckResult& r);

}  // namespace solgemm::judge
