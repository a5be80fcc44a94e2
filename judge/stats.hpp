// Robust statistics for the timing: medians, a distribution-free 95% interval for a median (order statistics of
// the binomial(n, 1/2) law, as in any nonparametrics textbook), percentiles, geometric means.
#pragma once

#include <cstdint>
#include <vector>

namespace solgemm::judge {

struct Interval {
  double lo = 0, hi = 0;
};

// Median (mean of the two middle values for even n). Throws on an empty sample.
double median(std::vector<double> v);
// Percentile q in [0, 1] with linear interpolation between order statistics (numpy's default).
double percentile(std::vector<double> v, double q);
// 95% (or `confidence`) interval for the median: [x_(l), x_(n+1-l)] (1-based order statistics) with l the
// largest index such that P(Binomial(n, 1/2) <= l - 1) <= (1 - confidence) / 2. For n too small to reach the
// confidence (n < 6 at 95%) it returns [min, max].
Interval median_ci(std::vector<double> v, double confidence = 0.95);
// The 1-based order-statistic index l used by median_ci (0 when no index reaches the confidence).
int64_t median_ci_rank(int64_t n, double confidence = 0.95);
// Geometric mean of positive values.
double geomean(const std::vector<double>& v);

}  // namespace solgemm::judge
