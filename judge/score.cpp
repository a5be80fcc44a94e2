// Per-shape speedups, load sums, score and its bootstrap interval (see score.hpp).
#include "score.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>

namespace solgemm::judge {

ShapeSpeed shape_speed(const PairedTimes& t) {
  if (t.impl.empty() || t.impl.size() != t.base.size())
    throw std::invalid_argument("shape_speed: paired samples missing or of different lengths");
  ShapeSpeed s;
  s.impl_us = median(t.impl);
  s.base_us = median(t.base);
  std::vector<double> ratio(t.impl.size());
  for (size_t i = 0; i < ratio.size(); ++i) ratio[i] = t.base[i] / t.impl[i];
  s.speedup = median(ratio);
  s.speedup_ci = median_ci(std::move(ratio));
  return s;
}

std::vector<LoadSummary> summarize_loads(const std::vector<ShapeTime>& shapes) {
  std::map<int, LoadSummary> by_load;
  for (const ShapeTime& s : shapes) {
    LoadSummary& l = by_load[s.load];
    l.load = s.load;
    l.shapes += 1;
    l.impl_us += s.impl_us;
    l.base_us += s.base_us;
  }
  std::vector<LoadSummary> out;
  for (auto& [id, l] : by_load) {
    l.speedup = l.base_us / l.impl_us;
    out.push_back(l);
  }
  return out;
}

double score_of(const std::vector<LoadSummary>& loads) {
  std::vector<double> s;
  for (const LoadSummary& l : loads) s.push_back(l.speedup);
  return geomean(s);
}

Interval bootstrap_score_ci(const std::vector<int>& load_of_shape, const std::vector<PairedTimes>& times,
                            int resamples, uint64_t seed) {
  if (load_of_shape.size() != times.size() || times.empty())
    throw std::invalid_argument("bootstrap_score_ci: one load index per shape expected");
  std::mt19937_64 rng(seed);
  std::vector<double> scores;
  scores.reserve(static_cast<size_t>(resamples));
  std::vector<double> a, b;
  std::vector<ShapeTime> st(times.size());
  for (int r = 0; r < resamples; ++r) {
    for (size_t s = 0; s < times.size(); ++s) {
      const size_t n = times[s].impl.size();
      std::uniform_int_distribution<size_t> pick(0, n - 1);
      a.resize(n);
      b.resize(n);
      for (size_t i = 0; i < n; ++i) {
        const size_t j = pick(rng);
        a[i] = times[s].impl[j];
        b[i] = times[s].base[j];
      }
      st[s] = {load_of_shape[s], median(a), median(b)};
    }
    scores.push_back(score_of(summarize_loads(st)));
  }
  return {percentile(scores, 0.025), percentile(scores, 0.975)};
}

}  // namespace solgemm::judge
