// CPU tests of the vendor tuner's choice among its confirmed candidates (src/kernels/tune_choice.hpp), driven with
// made-up timings: nothing kept when no candidate beats the default by the margin; the fastest of near-equal
// finalists kept even when their ratios to the default rank them wrongly (the default's noise, perf-notes step 134);
// a finalist outside the window never compared; a tie keeps the incumbent; every comparison is against the one kept.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <utility>
#include <vector>

#include "../src/kernels/tune_choice.hpp"

namespace tc = solgemm::kernels::tune_choice;

namespace {

// A comparison by true times: challenger / kept (what the direct pairs measure, without noise).
struct ByTime {
  std::vector<float> us;
  std::vector<std::pair<size_t, size_t>> calls;
  float operator()(size_t kept, size_t challenger) {
    calls.emplace_back(kept, challenger);
    return us[challenger] / us[kept];
  }
};

TEST(TuneChoice, NothingBeatsTheDefaultByTheMargin) {
  ByTime cmp{{10.f, 10.f}, {}};
  EXPECT_EQ(tc::playoff({0.99f, 1.02f}, 0.98f, 1.05f, cmp), -1);
  EXPECT_EQ(tc::playoff({}, 0.98f, 1.05f, cmp), -1);
  EXPECT_TRUE(cmp.calls.empty());
}

TEST(TuneChoice, OneFinalistIsKeptWithoutAPlayoff) {
  ByTime cmp{{24.f, 30.f, 29.f}, {}};
  EXPECT_EQ(tc::playoff({0.80f, 0.99f, 1.01f}, 0.98f, 1.05f, cmp), 0);
  EXPECT_TRUE(cmp.calls.empty());
}

// The pooler at m = 256 (step 134): tile 125 ranked first by its ratio to the default, 17 truly faster and within
// the window: 17 is kept.
TEST(TuneChoice, NearTieDecidedHeadToHead) {
  ByTime cmp{{25.7f, 24.3f, 24.4f, 30.f}, {}};  // index 0: "125", 1 and 2: "17/x", 3: slower than the default
  const int kept = tc::playoff({0.860f, 0.870f, 0.875f, 1.1f}, 0.98f, 1.05f, cmp);
  EXPECT_EQ(kept, 1);
  ASSERT_EQ(cmp.calls.size(), 2u);
  EXPECT_EQ(cmp.calls[0], (std::pair<size_t, size_t>{0, 1}));  // 17/1 against 125
  EXPECT_EQ(cmp.calls[1], (std::pair<size_t, size_t>{1, 2}));  // then 17/2 against the one kept, 17/1
}

TEST(TuneChoice, OutsideTheWindowNeverCompared) {
  ByTime cmp{{20.f, 10.f}, {}};  // index 1 would win head to head, but its ratio is 10% worse than the best
  EXPECT_EQ(tc::playoff({0.80f, 0.89f}, 0.98f, 1.05f, cmp), 0);
  EXPECT_TRUE(cmp.calls.empty());
}

TEST(TuneChoice, TieKeepsTheIncumbent) {
  ByTime cmp{{20.f, 20.f, 20.f}, {}};
  EXPECT_EQ(tc::playoff({0.90f, 0.91f, 0.92f}, 0.98f, 1.05f, cmp), 0);
  EXPECT_EQ(cmp.calls.size(), 2u);
}

// Random near-ties: with noisy ratios to the default (+-4%) and noise-free head-to-head comparisons, the kept
// candidate is the truly fastest of those whose noisy ratio falls in the window. Seed printed on failure.
TEST(TuneChoice, RandomNearTiesKeepTheFastestInTheWindow) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> t(20.f, 22.f), noise(0.96f, 1.04f);
    const float t_default = 25.f;
    const size_t n = 1 + rng() % 5;
    ByTime cmp{{}, {}};
    std::vector<float> ratio;
    for (size_t i = 0; i < n; ++i) {
      cmp.us.push_back(t(rng));
      ratio.push_back(cmp.us.back() / t_default * noise(rng));
    }
    const int kept = tc::playoff(ratio, 0.98f, 1.05f, cmp);
    ASSERT_GE(kept, 0) << "seed " << seed;
    float best_ratio = 1e9f;
    for (float r : ratio) best_ratio = std::min(best_ratio, r);
    for (size_t i = 0; i < n; ++i) {
      if (ratio[i] <= best_ratio * 1.05f) {
        EXPECT_LE(cmp.us[static_cast<size_t>(kept)], cmp.us[i]) << "seed " << seed << ", candidate " << i;
      }
    }
  }
}

}  // namespace

// Below the bucket's top (serve_from): the whole bucket when the choice holds at every point; from the lowest point
// of the unbroken run that holds from the top down; only the top when the highest point fails. The pooler's case
// (perf-notes step 184): its m = 128 tile held at 97 and 120 but took 1.24x the default's time at 104 and 1.27x at 65.
TEST(TuneChoice, ServesTheWholeBucketWhenItHoldsEverywhere) {
  std::vector<int64_t> tried;
  auto at = [&](int64_t m) {
    tried.push_back(m);
    return 1.0f;
  };
  EXPECT_EQ(tc::serve_from({33, 41, 49, 57}, 64, 1.02f, at), 33);
  EXPECT_EQ(tried, (std::vector<int64_t>{57, 49, 41, 33}));  // from the top down
}

TEST(TuneChoice, ServesFromTheUnbrokenRunBelowTheTop) {
  std::vector<int64_t> tried;
  auto at = [&](int64_t m) {
    tried.push_back(m);
    return m == 105 || m == 65 ? 1.24f : 0.9f;  // holds at 97 again, but the run from the top broke at 105
  };
  EXPECT_EQ(tc::serve_from({65, 73, 81, 89, 97, 105, 113, 121}, 128, 1.02f, at), 113);
  EXPECT_EQ(tried, (std::vector<int64_t>{121, 113, 105}));  // no further once broken
}

TEST(TuneChoice, ServesOnlyTheTopWhenTheHighestPointFails) {
  auto at = [](int64_t m) { return m == 63 ? 1.03f : 0.9f; };
  EXPECT_EQ(tc::serve_from({33, 63}, 64, 1.02f, at), 64);
  EXPECT_EQ(tc::serve_from({}, 2, 1.02f, at), 2);  // (the bucket of m = 2: nothing below its top)
  auto nan = [](int64_t) { return 0.f / 0.f; };     // (an algorithm that fails to run: never serves below the top)
  EXPECT_EQ(tc::serve_from({33}, 64, 1.02f, nan), 64);
}

// The m buckets (perf-notes step 186): every m from 1 to 256 falls in exactly one bucket, the first whose top is >= m,
// and its bucket's range [bucket_low, top] holds it; past 256 no bucket. The tops below 64 are the slices' too.
TEST(TuneChoice, EveryMHasOneBucket) {
  for (int64_t m = 1; m <= tc::kBucketTop[tc::kBuckets - 1]; ++m) {
    const int b = tc::bucket_of(m);
    ASSERT_LT(b, tc::kBuckets) << "m=" << m;
    EXPECT_GE(m, tc::bucket_low(b)) << "m=" << m;
    EXPECT_LE(m, tc::kBucketTop[b]) << "m=" << m;
    if (b > 0) {
      EXPECT_GT(m, tc::kBucketTop[b - 1]) << "m=" << m;
    }
  }
  EXPECT_EQ(tc::bucket_of(257), tc::kBuckets);
  EXPECT_EQ(tc::bucket_of(4096), tc::kBuckets);
  EXPECT_EQ(tc::bucket_of(48), 6);
  EXPECT_EQ(tc::bucket_of(49), 7);
  EXPECT_EQ(tc::bucket_of(96), 8);
  EXPECT_EQ(tc::bucket_of(97), 9);
  EXPECT_EQ(tc::bucket_of(192), 10);
  EXPECT_EQ(tc::kBucketTop[tc::kSliceBuckets - 1], 64);
}

// The points where a bucket's choice is checked below its top: ascending, inside the bucket, its low end first, and
// every m of the small buckets (3..15); in the wide ones the multiples of an eighth of the bucket's width.
TEST(TuneChoice, ServePointsCoverEachBucket) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(tc::serve_points(0), V{});
  EXPECT_EQ(tc::serve_points(1), V{});  // (1, 2]: only the top
  EXPECT_EQ(tc::serve_points(2), V{3});
  EXPECT_EQ(tc::serve_points(3), (V{5, 6, 7}));
  EXPECT_EQ(tc::serve_points(4), (V{9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(tc::serve_points(6), (V{33, 34, 36, 38, 40, 42, 44, 46}));
  EXPECT_EQ(tc::serve_points(8), (V{65, 68, 72, 76, 80, 84, 88, 92}));
  EXPECT_EQ(tc::serve_points(9), (V{97, 100, 104, 108, 112, 116, 120, 124}));  // 104: the pooler's 0.81x of step 184
  EXPECT_EQ(tc::serve_points(11), (V{193, 200, 208, 216, 224, 232, 240, 248}));
  EXPECT_EQ(tc::serve_points(tc::kBuckets), V{});
  for (int b = 1; b < tc::kBuckets; ++b) {
    const V p = tc::serve_points(b);
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(tc::bucket_of(p[i]), b) << "bucket " << b << " point " << p[i];
      if (i > 0) {
        EXPECT_GT(p[i], p[i - 1]) << "bucket " << b;
      }
    }
    if (!p.empty()) {
      EXPECT_EQ(p.front(), tc::bucket_low(b)) << "bucket " << b;
    }
  }
}
