// From timed samples to the judge's figures (judge-spec.md "Timing"): per shape the median times and the median
// of the paired ratios with its 95% interval; per load the sums of its shapes' times and their ratio; the score
// = geometric mean of the load speedups, with a 95% bootstrap interval (pairs resampled within each shape).
#pragma once

#include <cstdint>
#include <vector>

#include "stats.hpp"

namespace solgemm::judge {

// One shape's paired replays, in us, fixed cost already subtracted: impl[i] and base[i] saw the same x.
struct PairedTimes {
  std::vector<double> impl, base;
};

struct ShapeSpeed {
  double impl_us = 0, base_us = 0;  // medians
  double speedup = 0;               // median of base[i] / impl[i]
  Interval speedup_ci;              // 95%, order statistics
  bool ci_met(double rel) const {   // interval within +-rel of the speedup
    return speedup_ci.lo >= speedup * (1 - rel) && speedup_ci.hi <= speedup * (1 + rel);
  }
};
ShapeSpeed shape_speed(const PairedTimes& t);

// A shape's contribution to a load: which load, and its two times.
struct ShapeTime {
  int load = 0;
  double impl_us = 0, base_us = 0;
};

struct LoadSummary {
  int load = 0;
  int shapes = 0;                   // how many of its shapes were timed (5 in a full run)
  double impl_us = 0, base_us = 0;  // sums over its shapes
  double speedup = 0;               // base_us / impl_us
};
// One entry per load that has at least one shape, in load order.
std::vector<LoadSummary> summarize_loads(const std::vector<ShapeTime>& shapes);
// Geometric mean of the load speedups.
double score_of(const std::vector<LoadSummary>& loads);

// 95% interval of the score: `resamples` bootstrap replicates; in each, every shape's pairs are resampled with
// replacement (pairs kept together), its medians recomputed, loads summed, the score recomputed. Fixed seed.
Interval bootstrap_score_ci(const std::vector<int>& load_of_shape, const std::vector<PairedTimes>& times,
                            int resamples = 1000, uint64_t seed = 12345);

}  // namespace solgemm::judge
