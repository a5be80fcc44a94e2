// CPU tests of the judge's arithmetic: the seed's floors and score (lab1_roofline.py) reproduced from its
// tables, the statistics (medians, order-statistic intervals, bootstrap), the correctness rules, the shape
// tables. Deterministic; the seed in every message is the one SOLGEMM_TEST_SEED would set.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "check.hpp"
#include "cli.hpp"
#include "score.hpp"
#include "seed_tables.hpp"
#include "shapes.hpp"
#include "stats.hpp"
#include "testing.hpp"

namespace sj = solgemm::judge;

namespace {

// lab1_roofline.py floor() of every scored shape, us, [load][layer] (printed by python at 9 decimals).
const double kLab1Floor[6][5] = {
    {7.868693333, 3.499093333, 13.986133333, 1.749760000, 1.751253333},
    {7.934293333, 3.556693333, 14.062933333, 14.062933333, 1.805653333},
    {8.004266667, 3.618133333, 14.144853333, 14.144853333, 1.863680000},
    {7.899306667, 3.525973333, 14.021973333, 1.764693333, 1.776640000},
    {8.424106667, 3.986773333, 14.636373333, 14.636373333, 2.211840000},
    {9.771159167, 4.478293333, 17.370949630, 17.370949630, 2.676053333},
};
// Per-load floor sums with WEIGHT_BITS = 12 (lab1's "things to try").
const double kLab1Floor12Sum[6] = {20.990613, 30.499840, 30.853120, 21.124267, 32.972800, 50.439583};

}  // namespace

TEST(JudgeFloors, ReproduceLab1PerShape) {
  for (int ld = 0; ld < sj::kLoadCount; ++ld)
    for (int l = 0; l < sj::kLayerCount; ++l) {
      const auto& layer = sj::layers()[l];
      const int64_t m = sj::loads()[ld].m;
      const sj::Floor f = sj::datasheet_floor(layer, m);
      EXPECT_NEAR(f.us, kLab1Floor[ld][l], 1e-6) << sj::loads()[ld].name << " " << layer.name;
    }
}

TEST(JudgeFloors, BoundAndBytes) {
  const auto& L = sj::layers();
  // verify 32 qkv_gate / pooler are math-bound in lab1; everything at m <= 128 is memory-bound.
  EXPECT_TRUE(sj::datasheet_floor(L[0], 256).math_bound);
  EXPECT_TRUE(sj::datasheet_floor(L[2], 256).math_bound);
  EXPECT_FALSE(sj::datasheet_floor(L[1], 256).math_bound);
  EXPECT_FALSE(sj::datasheet_floor(L[2], 128).math_bound);
  // decode 1 pooler: 4096 * 8192 * 2 + 8192 * 2 + 4096 * 2 bytes.
  EXPECT_DOUBLE_EQ(sj::datasheet_floor(L[2], 1).bytes, 4096.0 * 8192 * 2 + 8192 * 2 + 4096 * 2);
  // router: FP32 weights and out.
  EXPECT_DOUBLE_EQ(sj::datasheet_floor(L[4], 1).bytes, 256.0 * 8192 * 4 + 8192 * 2 + 256 * 4);
  // unpooler at m <= 8 computes 1024 rows.
  EXPECT_EQ(sj::out_rows(L[3], 8), 1024);
  EXPECT_EQ(sj::out_rows(L[3], 9), 8192);
  EXPECT_DOUBLE_EQ(sj::datasheet_floor(L[3], 1).flops, 2.0 * 1024 * 4096);
}

TEST(JudgeFloors, TwelveBitSumsReproduceLab1) {
  for (int ld = 0; ld < sj::kLoadCount; ++ld) {
    double sum = 0;
    for (const auto& layer : sj::layers()) {
      // lab1 applies WEIGHT_BITS to every layer, the router included.
      sum += sj::floor_of(layer, sj::loads()[ld].m, 12).us;
    }
    EXPECT_NEAR(sum, kLab1Floor12Sum[ld], 1e-5) << sj::loads()[ld].name;
  }
}

TEST(JudgeScore, ReproducesTheSeedScore) {
  std::vector<sj::ShapeTime> st;
  for (int ld = 0; ld < sj::kLoadCount; ++ld)
    for (int l = 0; l < sj::kLayerCount; ++l)
      st.push_back({ld, sj::seed_submission_us()[ld][l], sj::seed_sglang_us()[ld][l]});
  const auto loads = sj::summarize_loads(st);
  ASSERT_EQ(loads.size(), 6u);
  EXPECT_NEAR(loads[0].base_us, 59.49, 1e-9);
  EXPECT_NEAR(loads[0].impl_us, 38.25, 1e-9);
  EXPECT_NEAR(loads[5].speedup, 100.84 / 94.80, 1e-12);
  const double s = sj::score_of(loads);
  EXPECT_NEAR(s, 1.3429238685493703, 1e-12);               // lab1's arithmetic, exactly
  EXPECT_NEAR(s, sj::kSeedOfficialScore, 2e-4);             // the official 1.3428 (tables are rounded)
}

TEST(JudgeStats, Median) {
  EXPECT_DOUBLE_EQ(sj::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(sj::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(sj::median({7}), 7);
  EXPECT_THROW(sj::median({}), std::invalid_argument);
  EXPECT_DOUBLE_EQ(sj::percentile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_DOUBLE_EQ(sj::percentile({1, 2}, 0.5), 1.5);
  EXPECT_NEAR(sj::geomean({1, 4, 16}), 4, 1e-12);
}

TEST(JudgeStats, OrderStatisticInterval) {
  // Textbook values: n = 100 -> x(40), x(61) (coverage 96.5%); n = 10 -> x(2), x(9); n = 6 -> x(1), x(6).
  EXPECT_EQ(sj::median_ci_rank(100), 40);
  EXPECT_EQ(sj::median_ci_rank(10), 2);
  EXPECT_EQ(sj::median_ci_rank(6), 1);
  EXPECT_EQ(sj::median_ci_rank(5), 0);
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  const sj::Interval ci = sj::median_ci(v);
  EXPECT_DOUBLE_EQ(ci.lo, 40);
  EXPECT_DOUBLE_EQ(ci.hi, 61);
  const sj::Interval small = sj::median_ci({5, 1, 3});
  EXPECT_DOUBLE_EQ(small.lo, 1);
  EXPECT_DOUBLE_EQ(small.hi, 5);
  // Large n: the interval's ranks follow n/2 -+ 0.98 sqrt(n).
  const int64_t l = sj::median_ci_rank(10000);
  EXPECT_NEAR(static_cast<double>(l), 5000 - 0.98 * 100, 2.0);
}

TEST(JudgeStats, ShapeSpeedAndCoverage) {
  const uint64_t seed = solgemm::testing::test_seed(7);
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.02);
  sj::PairedTimes t;
  for (int i = 0; i < 400; ++i) {
    t.impl.push_back(10.0 * noise(rng));
    t.base.push_back(15.0 * noise(rng));
  }
  const sj::ShapeSpeed s = sj::shape_speed(t);
  EXPECT_NEAR(s.impl_us, 10.0, 0.1) << "seed " << seed;
  EXPECT_NEAR(s.base_us, 15.0, 0.15) << "seed " << seed;
  EXPECT_NEAR(s.speedup, 1.5, 0.02) << "seed " << seed;
  EXPECT_LE(s.speedup_ci.lo, s.speedup) << "seed " << seed;
  EXPECT_GE(s.speedup_ci.hi, s.speedup) << "seed " << seed;
  EXPECT_TRUE(s.ci_met(0.015)) << "seed " << seed << " CI [" << s.speedup_ci.lo << ", " << s.speedup_ci.hi << "]";
  // Coverage: over many samples the 95% interval holds the true median (1.5) about 95% of the time.
  int covered = 0;
  const int trials = 400;
  for (int r = 0; r < trials; ++r) {
    sj::PairedTimes u;
    for (int i = 0; i < 60; ++i) {
      u.impl.push_back(10.0 * noise(rng));
      u.base.push_back(15.0 * noise(rng));
    }
    const sj::ShapeSpeed su = sj::shape_speed(u);
    covered += su.speedup_ci.lo <= 1.5 && 1.5 <= su.speedup_ci.hi;
  }
  EXPECT_GE(covered, static_cast<int>(0.91 * trials)) << "seed " << seed;
}

TEST(JudgeStats, BootstrapScoreInterval) {
  const uint64_t seed = solgemm::testing::test_seed(11);
  // Constant samples: the interval collapses onto the score.
  std::vector<int> load_of;
  std::vector<sj::PairedTimes> times;
  for (int ld = 0; ld < 6; ++ld)
    for (int l = 0; l < 5; ++l) {
      load_of.push_back(ld);
      times.push_back({std::vector<double>(30, sj::seed_submission_us()[ld][l]),
                       std::vector<double>(30, sj::seed_sglang_us()[ld][l])});
    }
  sj::Interval ci = sj::bootstrap_score_ci(load_of, times, 200, seed);
  EXPECT_NEAR(ci.lo, 1.3429238685493703, 1e-12);
  EXPECT_NEAR(ci.hi, 1.3429238685493703, 1e-12);
  // Noisy samples: the interval holds the score, is narrow, and is reproducible from its seed.
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.03);
  for (auto& t : times) {
    for (double& v : t.impl) v *= noise(rng);
    for (double& v : t.base) v *= noise(rng);
  }
  ci = sj::bootstrap_score_ci(load_of, times, 300, seed);
  EXPECT_LT(ci.lo, 1.3429 + 0.01) << "seed " << seed;
  EXPECT_GT(ci.hi, 1.3429 - 0.01) << "seed " << seed;
  EXPECT_LT(ci.hi - ci.lo, 0.05) << "seed " << seed;
  const sj::Interval again = sj::bootstrap_score_ci(load_of, times, 300, seed);
  EXPECT_EQ(ci.lo, again.lo);
  EXPECT_EQ(ci.hi, again.hi);
}

TEST(JudgeCheck, Rules) {
  const sj::Bounds bf = sj::bounds_for(false), rt = sj::bounds_for(true);
  EXPECT_EQ(bf.total, 1e-2);
  EXPECT_EQ(bf.probe, 1e-3);
  EXPECT_EQ(rt.total, 1e-4);
  EXPECT_EQ(rt.probe, 1e-4);
  // 16 rows, each with relative error 1e-3 (probe rows 0 and 8 exact).
  std::vector<sj::RowError> rows(16);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = {i % 8 == 0 ? 0.0 : 1e-6, 1.0, 0, -1};
  sj::CheckResult c = sj::evaluate(rows, bf);
  EXPECT_TRUE(c.ok) << c.failure;
  EXPECT_EQ(c.worst_probe_err, 0.0);
  EXPECT_NEAR(c.worst_row_err, 1e-3, 1e-12);
  // Router bound 1e-4: the same rows fail.
  c = sj::evaluate(rows, rt);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.failure.find("whole output"), std::string::npos) << c.failure;
  // A probe row at 2e-3 fails the probe rule (not the total).
  auto p = rows;
  p[8].err2 = 4e-6;
  c = sj::evaluate(p, bf);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.failure.find("probe row 8"), std::string::npos) << c.failure;
  // One row at 6e-2 (> 5 x 1e-2) fails although the whole output stays under 1e-2... make the others large.
  auto q = rows;
  for (auto& r : q) r.ref2 = 100.0;
  q[3] = {36e-4, 1.0, 0, -1};
  c = sj::evaluate(q, bf);
  EXPECT_FALSE(c.ok);
  EXPECT_LT(c.rel_err, 1e-2);
  EXPECT_NE(c.failure.find("row 3"), std::string::npos) << c.failure;
  // Non-finite elements (an unwritten NaN-filled output) fail, naming row and column.
  auto n = rows;
  n[5].nonfinite = 2;
  n[5].first_nonfinite_col = 17;
  c = sj::evaluate(n, bf);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.failure.find("row 5 column 17"), std::string::npos) << c.failure;
  // An all-zero reference row: 0 error is fine, any error is infinite.
  EXPECT_EQ(sj::relative_error(0, 0), 0.0);
  EXPECT_TRUE(std::isinf(sj::relative_error(1e-30, 0)));
}

TEST(JudgeShapes, DefaultSelection) {
  sj::Options o;
  const sj::Selection s = sj::select(o);
  EXPECT_EQ(s.layers.size(), 5u);
  ASSERT_EQ(s.shapes.size(), 65u);
  int timed = 0, scored = 0;
  for (const auto& sh : s.shapes) {
    timed += sh.timed;
    scored += sh.load >= 0;
  }
  EXPECT_EQ(timed, 30);
  EXPECT_EQ(scored, 30);
  EXPECT_EQ(s.max_m, 1000);
  EXPECT_EQ(sj::find_load("verify 16"), 4);
  EXPECT_EQ(sj::find_load("Verify_16"), 4);
  EXPECT_EQ(sj::find_load("verify16"), 4);
  EXPECT_EQ(sj::find_load("verify 64"), -1);
  EXPECT_EQ(sj::find_layer("router"), 4);
  EXPECT_EQ(sj::find_layer("Router"), -1);
}

TEST(JudgeShapes, ExplicitM) {
  sj::Options o;
  o.loads = {"decode 1"};
  o.layers = {"pooler", "router"};
  o.m = {3, 1, 3};
  const sj::Selection s = sj::select(o);
  // decode 1 x 2 layers (scored), then m = 3 x 2 layers (extra, timed); m = 1 duplicates the scored shapes.
  ASSERT_EQ(s.shapes.size(), 4u);
  EXPECT_EQ(s.shapes[0].load, 0);
  EXPECT_EQ(s.shapes[2].load, -1);
  EXPECT_EQ(s.shapes[2].m, 3);
  EXPECT_TRUE(s.shapes[2].timed);
  o.loads = {"none"};
  EXPECT_EQ(sj::select(o).shapes.size(), 4u);  // m = 1 and 3, two layers
}
