// The router (FP32 weights as BF16 hi + lo, FP32 out) through the public API: m in 1..64 and the larger
// m of issue 5 against an FP64 reference of the true FP32 weights (relative L2 <= 2e-5, probe rows too),
// NaN poison with a guard after out, 10 graph replays bitwise equal, batch invariance, the exact mode,
// a row slice, and an untuned odd shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "test_gpu_skinny_util.cuh"

namespace {

using skt::Dev;
constexpr int64_t kGuard = 4096;

struct Case {
  int64_t n, k, rows;
  bool exact;
  std::vector<int> ms;  // largest first
  double tol;
};

// family: "router" forces the router family at every m; "" lets the plan choose (router, then cuBLAS hi + lo).
void check_router(const Case& c, uint64_t seed, const std::string& family) {
  const std::string tag = "family=" + (family.empty() ? std::string("plan") : family) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " rows=" +
                          std::to_string(c.rows) + (c.exact ? " exact " : " hi+lo ") + skt::seed_msg(seed);
  cudaStream_t st;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Dev<float> dw(static_cast<size_t>(c.n * c.k));
  skt::gen_f32<<<1024, 256>>>(dw.p, c.n * c.k, seed, 0.02f);
  SKT_CK(cudaDeviceSynchronize());
  solgemm::PrepareOptions opt;
  opt.router_mode = c.exact ? solgemm::RouterMode::exact : solgemm::RouterMode::hi_lo;
  opt.kernel = family;
  auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::f32, c.n, c.k, st, opt);
  // The plan: the router family at m <= 32; verify batches of the tuned 256 x 8192 shape (all rows) go to the wide
  // family's hi + lo source from 33 to 256; everything else past 32 goes to cuBLAS hi + lo.
  const bool tuned_verify = c.n == 256 && c.k == 8192 && c.rows == 256;
  const int64_t simt_max = tuned_verify ? 6 : 0;  // the plan's simt range (src/plan.cpp kSimtWins)
  for (int m : {1, 6, 7, 64, 65, 256, 257}) {
    const std::string plan = w.plan_for(m, c.rows);
    const char* want = !family.empty()                          ? family.c_str()
                       : m <= simt_max                          ? "simt"
                       : m <= 32                                ? "router"
                       : tuned_verify && m <= 256               ? "wide"
                                                                : "vendor";
    ASSERT_EQ(plan.find(want), 0u) << plan << " " << tag;
  }
  const int64_t mmax = *std::max_element(c.ms.begin(), c.ms.end());
  ASSERT_EQ(mmax, c.ms.front());
  Dev<__nv_bfloat16> x(static_cast<size_t>(mmax * c.k));
  skt::make_x(x.p, mmax, c.k, seed);
  Dev<double> ref(static_cast<size_t>(mmax * c.rows));
  skt::ref_fp64<<<dim3(static_cast<unsigned>(c.rows), static_cast<unsigned>((mmax + 7) / 8)), 256>>>(
      x.p, dw.p, ref.p, mmax, c.rows, c.k);
  SKT_CK(cudaDeviceSynchronize());
  const std::vector<double> href = ref.get();
  const size_t total = static_cast<size_t>(mmax * c.rows + kGuard);
  Dev<uint32_t> out(total);
  // Through the plan, m > 32 runs other layouts or cuBLAS (hi, lo GEMMs, its own FP32 accumulation order: the
  // bound there is the issue's, 2e-5): batch invariance is checked inside the m <= 32 range (the tuned 256 x 8192
  // shape's router family runs one layout: src/plan.cpp, kTunedHiLo), and inside its wide range 33..256 (one
  // split, 64-, 128- or 256-token CTAs). A forced family is checked over every m.
  const bool plan_mode = family.empty();
  const int64_t invariant_max = 32;
  std::vector<float> obase, owide, osimt;
  int64_t base_m = 0, wide_m = 0, simt_m = 0;
  for (int m : c.ms) {
    const bool vendor = w.plan_for(m, c.rows).find("vendor") != std::string::npos;
    const double tol = vendor ? std::max(c.tol, 2e-5) : c.tol;
    SCOPED_TRACE("m=" + std::to_string(m) + " " + tag);
    SKT_CK(cudaMemset(out.p, 0xFF, total * 4));  // 0xFFFFFFFF: a NaN
    w.run(x.p, m, out.p, c.rows, st);
    SKT_CK(cudaStreamSynchronize(st));
    SKT_CK(cudaGetLastError());
    const std::vector<uint32_t> raw = out.get();
    const size_t used = static_cast<size_t>(m) * c.rows;
    std::vector<float> o(used);
    std::memcpy(o.data(), raw.data(), used * 4);
    const skt::PoisonCounts pc = skt::poison_counts(raw, used);
    ASSERT_EQ(pc.bad, 0u) << "NaN/Inf (unwritten?) in out";
    ASSERT_EQ(pc.guard_bad, 0u) << "written past m x rows";
    EXPECT_LE(skt::rel_l2(o, href, c.rows, 0, m), tol) << "relative L2 error";
    double worst = 0;
    int64_t worst_row = -1;
    for (int64_t r = 0; r < m; ++r) {
      const double e = skt::rel_l2(o, href, c.rows, r, r + 1);
      if (r % 8 == 0) EXPECT_LE(e, tol) << "probe row " << r;
      if (e > worst) {
        worst = e;
        worst_row = r;
      }
    }
    EXPECT_LE(worst, 5 * tol) << "worst row " << worst_row;
    // Batch invariance inside one range: the first (largest) m of the range is the base, every later m its prefix.
    auto invariant = [&](std::vector<float>& base, int64_t& bm, const char* range) {
      if (base.empty()) {
        base = o;
        bm = m;
        return;
      }
      EXPECT_TRUE(std::equal(o.begin(), o.end(), base.begin(),
                             [](float a, float b) { return std::memcmp(&a, &b, 4) == 0; }))
          << "batch invariance (" << range << "): rows differ from m=" << bm;
    };
    if (plan_mode && tuned_verify && m > 32 && m <= 256) invariant(owide, wide_m, "wide range");
    if (plan_mode && m <= simt_max) {
      invariant(osimt, simt_m, "simt range");
      continue;
    }
    if (plan_mode && m > invariant_max) continue;
    invariant(obase, base_m, "router family");
  }
  for (int m : {1, 32, 64, 256}) {
    if (m > mmax) continue;
    SCOPED_TRACE("replays m=" + std::to_string(m) + " " + tag);
    skt::expect_replays_equal(w, x.p, out, total, m, c.rows, st);
  }
  if (plan_mode && tuned_verify && mmax >= 256 && !obase.empty()) {
    // The wide range and the router family's range share the workspace (the wide family's barrier counters must not
    // disturb the router family's, which are 0 at rest): alternate them in one graph, replayed.
    SCOPED_TRACE("m=256 then m=32 in one graph " + tag);
    Dev<uint32_t> out2(static_cast<size_t>(256 * c.rows));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    SKT_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    w.run(x.p, 256, out2.p, c.rows, st);
    w.run(x.p, 32, out.p, c.rows, st);
    SKT_CK(cudaStreamEndCapture(st, &g));
    SKT_CK(cudaGraphInstantiate(&ge, g, 0));
    for (int rep = 0; rep < 4; ++rep) {
      SKT_CK(cudaMemset(out.p, 0xFF, total * 4));
      SKT_CK(cudaGraphLaunch(ge, st));
      SKT_CK(cudaStreamSynchronize(st));
      const std::vector<uint32_t> raw = out.get(static_cast<size_t>(32 * c.rows));
      std::vector<float> o(raw.size());
      std::memcpy(o.data(), raw.data(), raw.size() * 4);
      ASSERT_TRUE(std::equal(o.begin(), o.end(), obase.begin(),
                             [](float a, float b) { return std::memcmp(&a, &b, 4) == 0; }))
          << "replay " << rep << ": m=32 after m=256 differs from m=" << base_m << " (unwritten rows are NaN)";
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
  }
  cudaStreamDestroy(st);
}

std::vector<int> router_ms() {
  std::vector<int> v = {4096, 1000, 512, 257, 256, 255, 130, 129, 128, 127, 65};
  for (int m = 64; m >= 1; --m) v.push_back(m);
  return v;
}

// First in this file on purpose: the very first call of a fresh configuration (a shape no other test uses) is
// made inside a stream capture, so the launcher's one-time host queries (function attributes, SM count,
// cluster occupancy) run while capturing. The capture must succeed, and its replay must equal a plain call.
TEST(Router, FirstCallInsideCapture) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x700Bu);
  for (const auto& [n, k, m] : {std::tuple<int64_t, int64_t, int>{48, 2048, 3}, {256, 8192, 40}, {256, 8192, 100}}) {
    SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k) + " m=" + std::to_string(m) + " " +
                 skt::seed_msg(seed));
    cudaStream_t st;
    SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    Dev<float> dw(static_cast<size_t>(n * k));
    skt::gen_f32<<<1024, 256>>>(dw.p, n * k, seed, 0.02f);
    Dev<__nv_bfloat16> x(static_cast<size_t>(m * k));
    skt::make_x(x.p, m, k, seed);
    SKT_CK(cudaDeviceSynchronize());
    auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::f32, n, k, st, {});
    const size_t total = static_cast<size_t>(m * n);
    Dev<uint32_t> out(total);
    SKT_CK(cudaMemset(out.p, 0xFF, total * 4));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    SKT_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    w.run(x.p, m, out.p, n, st);
    ASSERT_EQ(cudaStreamEndCapture(st, &g), cudaSuccess) << "the first call invalidated the capture";
    SKT_CK(cudaGraphInstantiate(&ge, g, 0));
    SKT_CK(cudaGraphLaunch(ge, st));
    SKT_CK(cudaStreamSynchronize(st));
    const std::vector<uint32_t> captured = out.get();
    SKT_CK(cudaMemset(out.p, 0xFF, total * 4));
    w.run(x.p, m, out.p, n, st);
    SKT_CK(cudaStreamSynchronize(st));
    EXPECT_EQ(out.get(), captured) << "replay of the captured first call differs from a plain call";
    size_t bad = 0;
    for (uint32_t v : captured) bad += (v & 0x7F800000u) == 0x7F800000u;  // NaN/Inf: unwritten (0xFFFFFFFF)
    EXPECT_EQ(bad, 0u);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(st);
  }
}

// Device memory a router Weights owns (perf-notes step 215): the plan's layouts only, not the forced router family's at
// 4096 tokens (75 MB of partials before): at most W's FP32 copy, its hi + lo twice (fragment order and row-major), the
// cuBLAS workspace and 16 MB of split-K workspace; a Weights forced to the router family sizes its own layouts.
TEST(Router, DeviceMemory) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x3E3u);
  const int64_t n = 256, k = 8192;
  cudaStream_t st;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Dev<float> dw(static_cast<size_t>(n * k));
  skt::gen_f32<<<1024, 256>>>(dw.p, n * k, seed, 0.02f);
  SKT_CK(cudaDeviceSynchronize());
  const size_t w_bytes = static_cast<size_t>(n * k) * 4;
  auto plan = solgemm::Weights::prepare(dw.p, solgemm::DType::f32, n, k, st, {});
  solgemm::PrepareOptions forced;
  forced.kernel = "router";
  auto fr = solgemm::Weights::prepare(dw.p, solgemm::DType::f32, n, k, st, forced);
  std::cout << "router 256 x 8192: " << plan.device_bytes() / 1e6 << " MB owned (forced router family: "
            << fr.device_bytes() / 1e6 << " MB; W " << w_bytes / 1e6 << " MB)\n";
  EXPECT_GE(plan.device_bytes(), 3 * w_bytes);
  EXPECT_LE(plan.device_bytes(), 3 * w_bytes + (size_t{32} << 20) + (size_t{16} << 20));
  EXPECT_GT(fr.device_bytes(), plan.device_bytes());
  cudaStreamDestroy(st);
}

TEST(Router, HiLoEveryM) {
  SOLGEMM_REQUIRE_GPU();
  for (const char* f : {"router", "wide", "simt", ""}) check_router({256, 8192, 256, false, router_ms(), 2e-5}, solgemm::testing::test_seed(0x7007u), f);
}

TEST(Router, ExactMode) {
  SOLGEMM_REQUIRE_GPU();
  for (const char* f : {"router", "wide", "simt", ""}) check_router({256, 8192, 256, true, {130, 64, 33, 16, 8, 1}, 1e-6}, solgemm::testing::test_seed(0x7008u), f);
}

TEST(Router, RowSliceAndOddShape) {
  SOLGEMM_REQUIRE_GPU();
  for (const char* f : {"router", "wide", "simt", ""}) check_router({256, 8192, 100, false, {70, 64, 9, 1}, 2e-5}, solgemm::testing::test_seed(0x7009u), f);
  for (const char* f : {"router", "wide", "simt", ""}) check_router({40, 1000, 40, false, {200, 64, 17, 3}, 2e-5}, solgemm::testing::test_seed(0x700Au), f);
  // The wide family's ring refills (6 groups per CTA through 4 stages: K = 24576 split 64 ways over 2 row blocks).
  check_router({128, 24576, 128, false, {100, 70, 3}, 2e-5}, solgemm::testing::test_seed(0x700Bu), "wide");
}

}  // namespace
