// Medians, percentiles, order-statistic intervals, geometric means (see stats.hpp).
#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace solgemm::judge {

double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median of an empty sample");
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  const double hi = v[h];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h));
  return 0.5 * (lo + hi);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, v.size() - 1);
  return v[i] + (pos - static_cast<double>(i)) * (v[j] - v[i]);
}

int64_t median_ci_rank(int64_t n, double confidence) {
  const double alpha = (1.0 - confidence) / 2.0;
  // cdf(j) = P(B <= j), B ~ Binomial(n, 1/2), accumulated in log space (n may be many thousands).
  const double ln_half_n = static_cast<double>(n) * std::log(0.5);
  const double ln_fact_n = std::lgamma(static_cast<double>(n) + 1.0);
  double cdf = 0;
  int64_t l = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double dj = static_cast<double>(j);
    cdf += std::exp(ln_fact_n - std::lgamma(dj + 1.0) - std::lgamma(static_cast<double>(n) - dj + 1.0) + ln_half_n);
    if (cdf > alpha) break;
    l = j + 1;  // P(B <= l - 1) <= alpha
  }
  return l;
}

Interval median_ci(std::vector<double> v, double confidence) {
  if (v.empty()) throw std::invalid_argument("interval of an empty sample");
  std::sort(v.begin(), v.end());
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t l = median_ci_rank(n, confidence);
  if (l < 1) return {v.front(), v.back()};
  return {v[static_cast<size_t>(l - 1)], v[static_cast<size_t>(n - l)]};
}

double geomean(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("geometric mean of an empty sample");
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

}  // namespace solgemm::judge
