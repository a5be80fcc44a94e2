// The vendor tuner's choice among its confirmed candidates (vendor.cu, tune_vendor), host code without CUDA so that
// a CPU test (tests/test_tune_choice.cpp) can drive it with made-up timings.
//
// Each candidate was timed against cuBLAS's default in its own interleaved pairs; those whose median ratio to the
// default is below `margin` are finalists. Two ratios to the default come from separate pair sets, so between
// finalists a few percent apart they rank by the default's noise (perf-notes step 134): the finalists within
// `window` of the best ratio therefore meet the one kept so far directly (compare: the median ratio challenger / kept
// over interleaved pairs), and a challenger takes over when that ratio is below 1.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace solgemm::kernels::tune_choice {

// The index of the candidate kept, or -1 when none beats the default by the margin. compare(kept, challenger) is
// called for each finalist in the window after the best one, in order of ratio.
template <class Compare>
int playoff(const std::vector<float>& ratio_to_default, float margin, float window, Compare&& compare) {
  std::vector<std::pair<float, size_t>> finalists;  // (ratio to the default, index)
  for (size_t i = 0; i < ratio_to_default.size(); ++i)
    if (ratio_to_default[i] < margin) finalists.emplace_back(ratio_to_default[i], i);
  if (finalists.empty()) return -1;
  std::stable_sort(finalists.begin(), finalists.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = finalists[0].second;
  for (size_t f = 1; f < finalists.size() && finalists[f].first <= finalists[0].first * window; ++f)
    if (compare(kept, finalists[f].second) < 1.f) kept = finalists[f].second;
  return static_cast<int>(kept);
}

// The m buckets: a choice is tuned at a bucket's top and serves (the previous top, top]. Powers of two to 32, then
// two tops per octave (48, 96, 192: a verify batch of 65..96 tokens ran the m = 128 choice, or the default below
// where it held, perf-notes steps 184, 186). Slices (rows < n) are tuned up to kSliceBuckets (m <= 64).
inline constexpr int kBuckets = 12;
inline constexpr int64_t kBucketTop[kBuckets] = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256};
inline constexpr int kSliceBuckets = 8;
static_assert(kBucketTop[kSliceBuckets - 1] == 64, "slices are tuned to m = 64");

// The bucket of m: the first whose top is >= m; kBuckets past the table.
inline int bucket_of(int64_t m) {
  int b = 0;
  while (b < kBuckets && kBucketTop[b] < m) ++b;
  return b;
}
// The smallest m bucket b serves.
inline int64_t bucket_low(int b) { return b == 0 ? 1 : kBucketTop[b - 1] + 1; }

// Where a bucket's choice is checked below its top (serve_from): the bucket's low end and every multiple of an eighth
// of its width above the previous top (the m a caller most often asks for: the pooler's m = 128 tile held at 105 and
// ran 0.81x cuBLAS at 104, perf-notes step 184), ascending, below the top; every m from 3 to 15 tokens.
inline std::vector<int64_t> serve_points(int b) {
  std::vector<int64_t> points;
  if (b <= 0 || b >= kBuckets) return points;
  const int64_t lo = kBucketTop[b - 1], top = kBucketTop[b], step = std::max<int64_t>(1, (top - lo) / 8);
  if (lo + 1 < top) points.push_back(lo + 1);
  for (int64_t mp = lo + step; mp < top; mp += step)
    if (mp > lo + 1) points.push_back(mp);
  return points;
}

// A choice serves the m of its bucket, bucket_low(b) .. its top, but was timed at the top only; below it a tile made for
// the top may be slower than the default (perf-notes step 184: the unpooler's m = 64 tile ran 0.81-0.98x cuBLAS at m = 33..55,
// the pooler's m = 128 tile 0.81x at m = 104 while it held at 97). The smallest m from which the kept choice serves
// calls: `points` (ascending, below the bucket's top) are tried from the highest down, ratio_at(m) being the choice's
// time over the default's at m, and the choice serves from the lowest point of the run that holds (ratio at most
// `limit`) without a break from the top; the top itself when the highest point fails.
template <class RatioAt>
int64_t serve_from(const std::vector<int64_t>& points, int64_t top, float limit, RatioAt&& ratio_at) {
  int64_t from = top;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (!(ratio_at(*it) <= limit)) break;
    from = *it;
  }
  return from;
}

}  // namespace solgemm::kernels::tune_choice
