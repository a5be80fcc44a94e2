// The skinny family (m <= 64, packed12 / packed16 BF16 weights) through the public API: every m in 1..64 for
// the four BF16 layers (and the unpooler's 1024-row slice) against an FP64 reference; exact probe rows; NaN
// poison with a guard after out; 10 graph replays bitwise equal; batch invariance (row i identical for every
// m); exceptions patched exactly; the 16-bit fallback; shapes with N % 16 != 0 and K % 64 != 0; the ring
// bitwise deterministic with another kernel running alongside.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../bench/load_kernels.cuh"
#include "../judge/gen.hpp"
#include "../src/kernels/kernels.hpp"
#include "test_gpu_skinny_util.cuh"

namespace {

using skt::Dev;
using solgemm::format::bf16_to_f32;
using solgemm::format::f32_to_bf16_rn;

// A host-encoded matrix (format::encode_bf16) copied to the device, and its view for the family's own launches.
struct DevPacked {
  Dev<uint8_t> data;
  Dev<uint32_t> off, exc, blk;
  solgemm::kernels::PackedView view;
  explicit DevPacked(const solgemm::format::Packed& pk)
      : data(pk.data.size()), off(pk.exc_off.size()), exc(std::max<size_t>(pk.exc.size(), 1)),
        blk(std::max<size_t>(pk.exc.size(), 1)) {
    data.put(pk.data);
    off.put(pk.exc_off);
    exc.put(pk.exc);
    blk.put(solgemm::format::exception_blocks(pk));
    view = solgemm::kernels::packed_view(pk, data.p, off.p, exc.p, blk.p);
  }
};

// A split-K workspace for launches of the family itself with split_k > 1 (the library sizes its own at prepare):
// `floats` partials and 65536 zeroed counters of each kind.
struct DevSplit {
  Dev<float> ws;
  Dev<unsigned> cnt;
  Dev<unsigned long long> cnt64;
  solgemm::kernels::SplitWs split;
  explicit DevSplit(size_t floats) : ws(floats), cnt(size_t{1} << 16), cnt64(15 * (size_t{1} << 16)) {
    // (errors surface at the caller's next checked synchronisation)
    (void)cudaMemset(cnt.p, 0, (size_t{1} << 16) * sizeof(unsigned));
    (void)cudaMemset(cnt64.p, 0, 15 * (size_t{1} << 16) * sizeof(unsigned long long));
    split.ws = ws.p;
    split.cnt = cnt.p;
    split.ws_floats = floats;
    split.counters = size_t{1} << 16;
    split.cnt64 = cnt64.p;
    split.tiles64 = size_t{1} << 16;
  }
};

constexpr int64_t kGuard = 4096;
constexpr int kMaxM = 64;

// The family-level tests' setup (launches of the family itself, not through the API): an n x k matrix of N(0, 0.02^2)
// weights encoded at 12 bits (with exception entries) and copied to the device with a split-K workspace, `tok` tokens
// of x, the FP64 reference of the first `rows` outputs, and an output buffer with a guard. make() builds it (fatal
// assertions need a void function: call it under ASSERT_NO_FATAL_FAILURE); run() launches one layout into the
// NaN-poisoned buffer and checks the output: finite, nothing written past m x rows, within 1e-2 of FP64.
struct FamilyCase {
  const int64_t n, k, rows;
  const int tok;
  Dev<__nv_bfloat16> dw, x;
  std::vector<uint16_t> hw;
  std::unique_ptr<DevPacked> dp;
  DevSplit ws{size_t{1} << 22};
  solgemm::kernels::PackedView v;  // the matrix's view with the workspace
  std::vector<double> href;        // tok x rows
  const size_t total;              // tok x rows + the guard
  Dev<uint16_t> out;
  FamilyCase(int64_t n_, int64_t k_, int64_t rows_, int tok_)
      : n(n_), k(k_), rows(rows_), tok(tok_), dw(static_cast<size_t>(n_ * k_)), x(static_cast<size_t>(tok_ * k_)),
        total(static_cast<size_t>(tok_ * rows_ + kGuard)), out(total) {}
  // llm_like: the judge's llm-like weights (judge/gen.hpp; ~10x the normal weights' exceptions) instead of gen_weights'
  void make(uint64_t wseed, uint64_t xseed, bool llm_like = false) {
    if (llm_like) {
      solgemm::judge::gen::WeightSpec ws{solgemm::judge::gen::Kind::llm_like, wseed, 2, k, false};
      hw = solgemm::judge::gen::bf16_weights(ws, n);
      SKT_CK(cudaMemcpy(dw.p, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    } else {
      ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, n, k, wseed, 0.02f, &hw));
    }
    const solgemm::format::Packed pk = solgemm::format::encode_bf16(hw.data(), n, k);
    ASSERT_EQ(pk.code, solgemm::format::Code::bits12);
    ASSERT_GT(pk.exc.size(), 0u);  // (the corrections are part of every sum's order)
    dp = std::make_unique<DevPacked>(pk);
    SKT_CK(cudaDeviceSynchronize());
    v = dp->view;
    v.split = ws.split;
    skt::gen_bf16<<<1024, 256>>>(x.p, tok * k, xseed, 1.0f);
    Dev<double> ref(static_cast<size_t>(tok * rows));
    skt::ref_fp64<<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>(tok / 8)), 256>>>(x.p, dw.p, ref.p, tok,
                                                                                             rows, k);
    SKT_CK(cudaDeviceSynchronize());
    href = ref.get();
  }
  // The output into *o (launch errors propagate: a layout that does not fit throws solgemm::Error).
  void run(const solgemm::Config& cfg, const solgemm::kernels::PackedView& view, int m, const std::string& what,
           std::vector<uint16_t>* o, int* path = nullptr) {
    SKT_CK(cudaMemset(out.p, 0xFF, total * 2));
    solgemm::kernels::launch_skinny(cfg, view, x.p, m, reinterpret_cast<__nv_bfloat16*>(out.p), rows, nullptr, path);
    SKT_CK(cudaDeviceSynchronize());
    *o = out.get();
    const skt::PoisonCounts pc = skt::poison_counts(*o, static_cast<size_t>(m) * rows);
    EXPECT_EQ(pc.bad, 0u) << what << ": NaN/Inf (unwritten?) in out";
    EXPECT_EQ(pc.guard_bad, 0u) << what << ": written past m x rows";
    EXPECT_LE(skt::rel_l2(*o, href, rows, 0, m), 1e-2) << what;
  }
};

struct Case {
  int64_t n, k, rows;
  solgemm::PrepareOptions opt;
  const char* code;                 // "12-bit" or "16-bit": what the plan must say
  std::vector<int> ms;
  int probe_every = 8;
  const std::vector<int64_t>* probe_cols = nullptr;
  double tol = 1e-2;
};

// W (device, BF16 N x K) and its host copy. Runs every check of the file on it.
void check_case(const __nv_bfloat16* d_w, const std::vector<uint16_t>& hw, const Case& c, uint64_t seed) {
  const std::string tag = "n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " rows=" +
                          std::to_string(c.rows) + " " + skt::seed_msg(seed);
  cudaStream_t st;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  solgemm::PrepareOptions opt = c.opt;
  opt.kernel = "skinny";  // the plan sends most BF16 calls to cuBLAS (docs/kernels.md): test the family itself
  auto w = solgemm::Weights::prepare(d_w, solgemm::DType::bf16, c.n, c.k, st, opt);
  for (int m : {1, 8, 9, 64}) {
    const std::string plan = w.plan_for(m, c.rows);
    ASSERT_NE(plan.find("skinny"), std::string::npos) << plan << " " << tag;
    ASSERT_NE(plan.find(c.code), std::string::npos) << plan << " " << tag << " " << w.description();
  }
  Dev<__nv_bfloat16> x(static_cast<size_t>(kMaxM * c.k));
  const skt::Probes pr = skt::make_x(x.p, kMaxM, c.k, seed, c.probe_cols, c.probe_every);
  Dev<double> ref(static_cast<size_t>(kMaxM * c.rows));
  skt::ref_fp64<<<dim3(static_cast<unsigned>(c.rows), kMaxM / 8), 256>>>(x.p, d_w, ref.p, kMaxM, c.rows, c.k);
  SKT_CK(cudaDeviceSynchronize());
  const std::vector<double> href = ref.get();
  const size_t total = static_cast<size_t>(kMaxM * c.rows + kGuard);
  Dev<uint16_t> out(total);
  std::vector<uint16_t> o64;
  std::vector<int> ms = c.ms;
  std::sort(ms.begin(), ms.end(), std::greater<int>());  // 64 first: the batch-invariance baseline
  ASSERT_EQ(ms.front(), kMaxM);
  for (int m : ms) {
    SCOPED_TRACE("m=" + std::to_string(m) + " " + tag);
    SKT_CK(cudaMemset(out.p, 0xFF, total * 2));  // 0xFFFF: a NaN
    w.run(x.p, m, out.p, c.rows, st);
    SKT_CK(cudaStreamSynchronize(st));
    SKT_CK(cudaGetLastError());
    const std::vector<uint16_t> o = out.get();
    const size_t used = static_cast<size_t>(m) * c.rows;
    const skt::PoisonCounts pc = skt::poison_counts(o, used);
    ASSERT_EQ(pc.bad, 0u) << "NaN/Inf (unwritten?) in out";
    ASSERT_EQ(pc.guard_bad, 0u) << "written past m x rows";
    const double err = skt::rel_l2(o, href, c.rows, 0, m);
    EXPECT_LE(err, c.tol) << "relative L2 error";
    for (int64_t r = 0; r < m; ++r) {
      if (r % c.probe_every == 0) {  // exact: one weight column times a power of two
        const size_t pi = static_cast<size_t>(r / c.probe_every);
        int64_t mism = 0, first = -1;
        for (int64_t n = 0; n < c.rows; ++n) {
          const float wv = bf16_to_f32(hw[static_cast<size_t>(n * c.k + pr.col[pi])]);
          const float ev = std::ldexp(wv * static_cast<float>(pr.sign[pi]), pr.e[pi]);
          const uint16_t want = f32_to_bf16_rn(ev);
          const uint16_t got = o[static_cast<size_t>(r * c.rows + n)];
          const bool ok = got == want || (std::fabs(ev) < 1.1754944e-38f && (got & 0x7FFF) == 0);  // FTZ allowed
          if (!ok && first < 0) first = n;
          mism += !ok;
        }
        EXPECT_EQ(mism, 0) << "probe row " << r << " (column " << pr.col[pi] << ", 2^" << pr.e[pi]
                           << "): first mismatch at output column " << first;
      } else {
        const double re = skt::rel_l2(o, href, c.rows, r, r + 1);
        EXPECT_LE(re, 5 * c.tol) << "row " << r;
      }
    }
    if (m == kMaxM) {
      o64.assign(o.begin(), o.begin() + used);
    } else {
      EXPECT_TRUE(std::equal(o.begin(), o.begin() + used, o64.begin())) << "batch invariance: rows differ from m=64";
    }
  }
  // Determinism and graph safety: one call captured, replayed 10 times, bitwise equal.
  for (int m : {1, 8, 16, 32, 64}) {
    SCOPED_TRACE("replays m=" + std::to_string(m) + " " + tag);
    skt::expect_replays_equal(w, x.p, out, total, m, c.rows, st);
  }
  cudaStreamDestroy(st);
}

std::vector<int> all_m() {
  std::vector<int> v;
  for (int m = 1; m <= kMaxM; ++m) v.push_back(m);
  return v;
}

struct Layer {
  const char* name;
  int64_t n, k, rows;
};
class SkinnyLayer : public ::testing::TestWithParam<Layer> {};

TEST_P(SkinnyLayer, EveryMAgainstFp64) {
  SOLGEMM_REQUIRE_GPU();
  const Layer& l = GetParam();
  const uint64_t seed = solgemm::testing::test_seed(0x51u + static_cast<uint64_t>(l.n * 7 + l.rows));
  Dev<__nv_bfloat16> dw(static_cast<size_t>(l.n * l.k));
  skt::gen_bf16<<<2048, 256>>>(dw.p, l.n * l.k, seed, 0.02f);
  SKT_CK(cudaDeviceSynchronize());
  std::vector<uint16_t> hw(static_cast<size_t>(l.n * l.k));
  SKT_CK(cudaMemcpy(hw.data(), dw.p, hw.size() * 2, cudaMemcpyDeviceToHost));
  Case c{l.n, l.k, l.rows, {}, "12-bit", all_m()};
  check_case(dw.p, hw, c, seed);
}

INSTANTIATE_TEST_SUITE_P(Layers, SkinnyLayer,
                         ::testing::Values(Layer{"qkv_gate", 2304, 8192, 2304}, Layer{"o", 8192, 1024, 8192},
                                           Layer{"pooler", 4096, 8192, 4096}, Layer{"unpooler", 8192, 4096, 8192},
                                           Layer{"unpooler_slice", 8192, 4096, 1024},
                                           // shapes the plan was not tuned on: the layout rule (perf-notes step 207)
                                           // with a split over clusters of 8, with K = 3584 (14 groups per slice) over
                                           // clusters of 4, and without a split
                                           Layer{"untuned_1280x8192", 1280, 8192, 1280},
                                           Layer{"untuned_4608x3584", 4608, 3584, 4608},
                                           Layer{"untuned_4096x4096", 4096, 4096, 4096}),
                         [](const auto& info) { return std::string(info.param.name); });

// Zeros, subnormals, outliers sprinkled (a 12-bit matrix with exceptions) plus one dense run (300 zeros in a
// row: > 32 entries for one warp, the slow path). Every row of x is a probe on an exception's column.
TEST(Skinny, ExceptionsPatchedExactly) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0xE5Cu);
  const int64_t n = 512, k = 4096;
  Dev<__nv_bfloat16> dw(static_cast<size_t>(n * k));
  std::vector<uint16_t> hw;
  ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, n, k, seed, 0.02f, &hw));
  std::vector<int64_t> cols;
  const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x8013, 0x0080, 0x4480, 0xC2F7, 0x3F80, 0x007F};
  for (int i = 0; i < 1200; ++i) {
    const uint64_t h = skt::mix(seed + 977 * static_cast<uint64_t>(i));
    const int64_t at = static_cast<int64_t>(h % static_cast<uint64_t>(n * k));
    hw[static_cast<size_t>(at)] = specials[i % 9];
    if (cols.size() < 128) cols.push_back(at % k);
  }
  for (int64_t kk = 700; kk < 1000; ++kk) hw[static_cast<size_t>(37 * k + kk)] = 0;  // dense: row 37
  cols[1] = 777;
  SKT_CK(cudaMemcpy(dw.p, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  Case c{n, k, n, {}, "12-bit", {1, 2, 7, 8, 9, 16, 17, 31, 33, 48, 64}, 1, &cols};
  check_case(dw.p, hw, c, seed);
  std::vector<int64_t> cols2(cols.begin() + 64, cols.end());
  Case c2 = c;
  c2.probe_cols = &cols2;
  c2.ms = {5, 64};
  check_case(dw.p, hw, c2, seed + 1);
}

// Exponents spread over the whole range: too many exceptions, the 16-bit fallback (same fragment order).
TEST(Skinny, Fallback16Adversarial) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0xADu);
  const int64_t n = 1024, k = 2048;
  std::vector<uint16_t> hw(static_cast<size_t>(n * k));
  for (size_t i = 0; i < hw.size(); ++i) {
    const uint64_t h = skt::mix(seed * 1315423911ull + i);
    hw[i] = static_cast<uint16_t>((h & 0x807F) | ((70 + (h >> 20) % 111) << 7));
  }
  Dev<__nv_bfloat16> dw(hw.size());
  SKT_CK(cudaMemcpy(dw.p, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  Case c{n, k, n, {}, "16-bit", {1, 3, 8, 16, 24, 32, 40, 64}};
  check_case(dw.p, hw, c, seed);
}

// The kernels decode in the coded domain (true * 2^d, d = A - base: kernels/decode.hpp). A matrix it cannot hold
// exactly is stored at 16 bits by prepare: (a) base 97 (d = 15) with a few weights of exponent 240 (pushed past
// 254), (b) a base above 224 (weights around 2^114). Both must say why, and compute exactly as before.
TEST(Skinny, CodedDomainFallback16) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0xC0Du);
  const int64_t n = 512, k = 2048;
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant == 0 ? "base 97 + outliers at 2^113" : "base above 224");
    Dev<__nv_bfloat16> dw(static_cast<size_t>(n * k));
    std::vector<uint16_t> hw;
    const float sigma = variant == 0 ? std::ldexp(0.02f, -11) : std::ldexp(1.f, 114);
    ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, n, k, seed + variant, sigma, &hw));
    if (variant == 0)
      for (int i = 0; i < 20; ++i) hw[static_cast<size_t>(skt::mix(seed + 31 * i) % (n * k))] = (i & 1) ? 0x7800 : 0xF855;
    SKT_CK(cudaMemcpy(dw.p, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    {
      solgemm::PrepareOptions opt;
      opt.kernel = "skinny";
      auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, n, k, nullptr, opt);
      EXPECT_NE(w.description().find("coded domain"), std::string::npos) << w.description();
    }
    Case c{n, k, n, {}, "16-bit", {1, 8, 17, 64}};
    check_case(dw.p, hw, c, seed + variant);
  }
}

// The plan (no forced family) changes a shape's layout or x path with m inside its skinny range (the pooler: 1 row
// tile per CTA with x staged at m = 1, 2 row tiles with x staged at m = 2, 1 row tile with x through the ring at
// 3..16, 2 row tiles with x through the ring at n_tiles 4 at 17..32; the unpooler: one layout, 2 row tiles per CTA, x staged at m <= 2, through the ring
// above, at 17..32 the 2-CTA n_tiles-4 variant with boxes of m rows, perf-notes steps 96, 111, 124, 128, 131, 132;
// qkv_gate: 5 row tiles per CTA at 1..4 and 9..16 tokens, 6 at 5..8, tune_plan, step 126); the K order is the same, so
// every row must come out bitwise equal at every m of the range, and within the FP64 bound.
TEST(Skinny, PlanLayoutsBatchInvariant) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0xB17u);
  struct L { int64_t n, k; int min_m, max_m; bool two_layouts; };  // one K order over min_m..max_m
  // "split_k=.. n_tiles=.. warps=.. rt_cta=.." without n_tiles: the layout part of a plan's description
  auto layout_of = [](const std::string& plan) {
    const size_t b = plan.find("split_k="), e = plan.find(']');
    std::string l = plan.substr(b, e - b);
    const size_t t = l.find(" n_tiles=");
    return l.erase(t, l.find(' ', t + 1) - t);
  };
  // (qkv_gate: one K order over 1..32 since perf-notes step 203)
  for (const L& l : {L{4096, 8192, 1, 32, true}, L{8192, 4096, 1, 32, false}, L{2304, 8192, 1, 32, true}}) {
    SCOPED_TRACE(std::to_string(l.n) + "x" + std::to_string(l.k) + " m " + std::to_string(l.min_m) + ".." +
                 std::to_string(l.max_m) + " " + skt::seed_msg(seed));
    Dev<__nv_bfloat16> dw(static_cast<size_t>(l.n * l.k));
    skt::gen_bf16<<<2048, 256>>>(dw.p, l.n * l.k, seed + l.n, 0.02f);
    SKT_CK(cudaDeviceSynchronize());
    // No vendor tuning at prepare: the plan table runs these ranges on the skinny family (their ends asserted below),
    // and the tuner's ~1000 cuBLASLt runs would keep this test from finishing under compute-sanitizer.
    solgemm::PrepareOptions opt;
    opt.tune_vendor = false;
    auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, l.n, l.k, nullptr, opt);
    ASSERT_NE(w.plan_for(l.min_m, l.n).find("skinny"), std::string::npos) << w.plan_for(l.min_m, l.n);
    ASSERT_NE(w.plan_for(l.max_m, l.n).find("skinny"), std::string::npos) << w.plan_for(l.max_m, l.n);
    std::vector<int> ms = {l.max_m};
    for (int m : {1, 2, 3, 5, 8, 9, 12, 16, 17, 24})  // (17, 24: n_tiles 4 with fewer rows than a box)
      if (m >= l.min_m && m < l.max_m) ms.push_back(m);
    if (l.two_layouts) {
      std::set<std::string> seen;
      for (int m : ms) seen.insert(layout_of(w.plan_for(m, l.n)));
      ASSERT_GE(seen.size(), 2u) << "the range should exercise two layouts: " << w.plan_for(1, l.n);
    }
    Dev<__nv_bfloat16> x(static_cast<size_t>(l.max_m * l.k));
    skt::make_x(x.p, l.max_m, l.k, seed, nullptr, 8);
    Dev<double> ref(static_cast<size_t>(l.max_m * l.n));
    skt::ref_fp64<<<dim3(static_cast<unsigned>(l.n), (l.max_m + 7) / 8), 256>>>(x.p, dw.p, ref.p, l.max_m, l.n, l.k);
    SKT_CK(cudaDeviceSynchronize());
    const std::vector<double> href = ref.get();
    Dev<uint16_t> out(static_cast<size_t>(l.max_m * l.n));
    std::vector<uint16_t> top;
    for (int m : ms) {
      SCOPED_TRACE("m=" + std::to_string(m) + " plan " + w.plan_for(m, l.n));
      SKT_CK(cudaMemset(out.p, 0xFF, static_cast<size_t>(l.max_m * l.n) * 2));
      w.run(x.p, m, out.p, l.n, nullptr);
      SKT_CK(cudaDeviceSynchronize());
      const std::vector<uint16_t> o = out.get();
      EXPECT_LE(skt::rel_l2(o, href, l.n, 0, m), 1e-2);
      if (top.empty()) {
        top = o;
      } else {
        EXPECT_TRUE(std::equal(o.begin(), o.begin() + m * l.n, top.begin())) << "rows differ from m=" << l.max_m;
      }
    }
  }
}

// Every layout prepare may time for an untuned shape (plan.hpp untuned_skinny_candidates, perf-notes step 211), as the
// plan would configure it, against FP64 at 1, 3, 8 and 16 tokens, each m's rows bitwise those of m = 16 (one K order).
// A layout may not fit some m (a launch error: prepare's tuner then does not serve that m with it); every one must run
// at one token.
TEST(Skinny, UntunedCandidatesAgainstFp64) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x211u);
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1024, 8192}, {2048, 8192}, {4608, 3584}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k) + " " + skt::seed_msg(seed));
    FamilyCase fc(n, k, n, 16);
    ASSERT_NO_FATAL_FAILURE(fc.make(seed + static_cast<uint64_t>(n), seed + 7));
    const std::vector<solgemm::UntunedLayout> cands = solgemm::untuned_skinny_candidates(n, k, solgemm::kUntunedCandidates);
    ASSERT_GE(cands.size(), 4u);
    for (const solgemm::UntunedLayout& u : cands) {
      const solgemm::UntunedChoice c{n, u, 16};
      std::vector<uint16_t> top, o;
      for (int m : {16, 1, 3, 8}) {
        const solgemm::Plan p = solgemm::select_plan({n, k, solgemm::Storage::packed12}, m, solgemm::ExceptionLoad{}, &c);
        ASSERT_EQ(p.kernel, solgemm::Kernel::skinny) << p.str();
        const std::string what = "m=" + std::to_string(m) + " " + p.cfg.str();
        try {
          fc.run(p.cfg, fc.v, m, what, &o);
        } catch (const solgemm::Error& e) {
          EXPECT_NE(m, 1) << what << ": " << e.what();
          continue;
        }
        if (m == 16)
          top = o;
        else if (!top.empty())
          EXPECT_TRUE(std::equal(o.begin(), o.begin() + m * n, top.begin())) << what << ": rows differ from m = 16";
      }
    }
  }
}

// An untuned shape through the API as a user gets it: prepare times the candidates against the tuned cuBLASLt for each
// row count of untuned_row_sets (all N rows, and the leading N/2 of 2048 x 8192: a call of the matrix's first rows,
// perf-notes step 214) and serves the fastest at 1..max_m (whatever it chose on this GPU): the plan says skinny exactly
// there, the description names each row count's choice, every m of 1..max_m and 17 / 32 / 64 is right against FP64 with
// probe rows exact and nothing written past m x rows, the skinny range batch invariant, and replays bitwise equal.
TEST(Skinny, UntunedShapeTimedAtPrepare) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x2110u);
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{1024, 8192}, {2048, 8192}}) {
    const std::string ntag = std::to_string(n) + "x" + std::to_string(k) + " " + skt::seed_msg(seed);
    SCOPED_TRACE(ntag);
    Dev<__nv_bfloat16> dw(static_cast<size_t>(n * k));
    std::vector<uint16_t> hw;
    ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, n, k, seed + static_cast<uint64_t>(n), 0.02f, &hw));
    cudaStream_t st;
    SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, n, k, st, solgemm::PrepareOptions{});
    ASSERT_NE(w.description().find("untuned shape"), std::string::npos) << w.description();
    const std::vector<int64_t> row_sets = solgemm::untuned_row_sets(n, k);
    ASSERT_EQ(row_sets.front(), n);
    ASSERT_EQ(row_sets.size(), n == 2048 ? 2u : 1u);
    Dev<__nv_bfloat16> x(static_cast<size_t>(kMaxM * k));
    const skt::Probes pr = skt::make_x(x.p, kMaxM, k, seed, nullptr, 8);
    for (const int64_t rows : row_sets) {
      const std::string tag = ntag + ", rows " + std::to_string(rows);
      SCOPED_TRACE(tag);
      if (rows < n)  // (the description names the leading rows' own choice)
        ASSERT_NE(w.description().find("its first " + std::to_string(rows) + " rows, an untuned shape"),
                  std::string::npos) << w.description();
      auto skinny_at = [&](int m) { return w.plan_for(m, rows).rfind("skinny", 0) == 0; };  // (the family's name first)
      int served = 0;
      while (served < kMaxM && skinny_at(served + 1)) ++served;
      for (int m = served + 1; m <= kMaxM; ++m) ASSERT_FALSE(skinny_at(m)) << "m=" << m << " " << w.plan_for(m, rows);
      ASSERT_LE(served, 16) << w.description();
      if (served > 0)  // the measured layout's plan, not the rule's
        EXPECT_NE(w.plan_for(1, rows).find("when prepare timed them"), std::string::npos) << w.plan_for(1, rows);
      std::cout << tag << ": served on the skinny family at m <= " << served << "; " << w.plan_for(1, rows).substr(0, 120)
                << "\n";
      Dev<double> ref(static_cast<size_t>(kMaxM * rows));
      skt::ref_fp64<<<dim3(static_cast<unsigned>(rows), kMaxM / 8), 256>>>(x.p, dw.p, ref.p, kMaxM, rows, k);
      SKT_CK(cudaDeviceSynchronize());
      const std::vector<double> href = ref.get();
      const size_t total = static_cast<size_t>(kMaxM * rows + kGuard);
      Dev<uint16_t> out(total);
      std::vector<uint16_t> top;
      std::vector<int> ms;
      for (int m = std::max(served, 1); m >= 1; --m) ms.push_back(m);  // the skinny range's top first
      for (int m : {17, 32, 64}) ms.push_back(m);
      for (int m : ms) {
        SCOPED_TRACE("m=" + std::to_string(m) + " " + w.plan_for(m, rows));
        SKT_CK(cudaMemset(out.p, 0xFF, total * 2));
        w.run(x.p, m, out.p, rows, st);
        SKT_CK(cudaStreamSynchronize(st));
        const std::vector<uint16_t> o = out.get();
        const skt::PoisonCounts pc = skt::poison_counts(o, static_cast<size_t>(m) * rows);
        ASSERT_EQ(pc.bad, 0u) << "NaN/Inf (unwritten?) in out";
        ASSERT_EQ(pc.guard_bad, 0u) << "written past m x rows";
        EXPECT_LE(skt::rel_l2(o, href, rows, 0, m), 1e-2);
        for (int64_t r = 0; r < m; r += 8) {  // probe rows: one weight column times a power of two, exact
          const size_t pi = static_cast<size_t>(r / 8);
          int64_t mism = 0;
          for (int64_t j = 0; j < rows; ++j) {
            const float ev = std::ldexp(bf16_to_f32(hw[static_cast<size_t>(j * k + pr.col[pi])]) *
                                            static_cast<float>(pr.sign[pi]), pr.e[pi]);
            const uint16_t got = o[static_cast<size_t>(r * rows + j)];
            mism += !(got == f32_to_bf16_rn(ev) || (std::fabs(ev) < 1.1754944e-38f && (got & 0x7FFF) == 0));
          }
          EXPECT_EQ(mism, 0) << "probe row " << r;
        }
        if (m <= served) {
          if (top.empty())
            top = o;
          else
            EXPECT_TRUE(std::equal(o.begin(), o.begin() + m * rows, top.begin())) << "rows differ from m = " << served;
        }
      }
      for (int m : {1, std::max(served, 1), 32}) {
        SCOPED_TRACE("replays m=" + std::to_string(m) + " " + tag);
        skt::expect_replays_equal(w, x.p, out, total, m, rows, st);
      }
    }
    cudaStreamDestroy(st);
  }
}

// compress = false: the 16-bit layout on a normal matrix (the o layer's shape).
TEST(Skinny, Fallback16NoCompress) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x16u);
  const int64_t n = 8192, k = 1024;
  Dev<__nv_bfloat16> dw(static_cast<size_t>(n * k));
  std::vector<uint16_t> hw;
  ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, n, k, seed, 0.02f, &hw));
  solgemm::PrepareOptions opt;
  opt.compress = false;
  Case c{n, k, n, opt, "16-bit", {1, 8, 12, 16, 32, 50, 64}};
  check_case(dw.p, hw, c, seed);
}

// The split-K workspace and its counters are shared by every call of one Weights and reset by the kernel
// itself: interleave graphs and plain calls of different m and rows (different layouts and tile counts), 10
// rounds, every result bitwise equal to the first round's.
TEST(Skinny, SplitWorkspaceReuse) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x5B1u);
  const int64_t n = 8192, k = 4096;
  Dev<__nv_bfloat16> dw(static_cast<size_t>(n * k));
  skt::gen_bf16<<<2048, 256>>>(dw.p, n * k, seed, 0.02f);
  Dev<__nv_bfloat16> x(static_cast<size_t>(kMaxM * k));
  skt::gen_bf16<<<1024, 256>>>(x.p, kMaxM * k, seed + 1, 1.0f);
  SKT_CK(cudaDeviceSynchronize());
  cudaStream_t st;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  solgemm::PrepareOptions opt;
  opt.kernel = "skinny";
  opt.max_m = 64;
  auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, n, k, st, opt);
  ASSERT_EQ(w.plan_for(64, n).find("split_k=1 "), std::string::npos) << "test wants a split-K plan";
  struct Call {
    int m;
    int64_t rows;
    bool graph;
  };
  const Call calls[] = {{64, n, true}, {5, 1024, true}, {33, n, false}, {1, 1024, false}, {17, 4100, true}};
  std::vector<Dev<uint16_t>*> outs;
  std::vector<cudaGraphExec_t> ges;
  for (const Call& c : calls) {
    outs.push_back(new Dev<uint16_t>(static_cast<size_t>(c.m * c.rows)));
    cudaGraphExec_t ge = nullptr;
    if (c.graph) {
      cudaGraph_t g;
      SKT_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      w.run(x.p, c.m, outs.back()->p, c.rows, st);
      SKT_CK(cudaStreamEndCapture(st, &g));
      SKT_CK(cudaGraphInstantiate(&ge, g, 0));
      cudaGraphDestroy(g);
    }
    ges.push_back(ge);
  }
  std::vector<std::vector<uint16_t>> first(std::size(calls));
  for (int round = 0; round < 10; ++round) {
    for (size_t i = 0; i < std::size(calls); ++i) {
      SKT_CK(cudaMemsetAsync(outs[i]->p, 0xFF, outs[i]->n * 2, st));
      if (ges[i])
        SKT_CK(cudaGraphLaunch(ges[i], st));
      else
        w.run(x.p, calls[i].m, outs[i]->p, calls[i].rows, st);
    }
    SKT_CK(cudaStreamSynchronize(st));
    for (size_t i = 0; i < std::size(calls); ++i) {
      const std::vector<uint16_t> o = outs[i]->get();
      if (round == 0) {
        size_t bad = 0;
        for (uint16_t v : o) bad += !skt::finite(v);
        ASSERT_EQ(bad, 0u) << "call " << i << " left unwritten outputs";
        first[i] = o;
      } else {
        ASSERT_EQ(o, first[i]) << "round " << round << " call " << i << " differs";
      }
    }
  }
  // Rows shared by calls of the same rows agree bitwise across m (batch invariance through the workspace).
  for (int64_t r = 0; r < 1024; ++r) ASSERT_EQ(first[1][static_cast<size_t>(r)], first[3][static_cast<size_t>(r)]);
  for (int64_t r = 0; r < n; ++r) ASSERT_EQ(first[0][static_cast<size_t>(r)], first[2][static_cast<size_t>(r)]);
  for (cudaGraphExec_t ge : ges)
    if (ge) cudaGraphExecDestroy(ge);
  for (auto* o : outs) delete o;
  cudaStreamDestroy(st);
}

// `cfg` at m tokens with x through the ring and with x staged (the family's own launcher): bitwise the same outputs
// where staged x fits beside the ring (*compared set), else only the ring's run (staged x must fail as a bad layout).
void xring_vs_staged(FamilyCase& fc, const solgemm::Config& cfg, int m, bool* compared) {
  std::vector<uint16_t> o[2];
  for (int j = 0; j < 2; ++j) {
    solgemm::kernels::PackedView v = fc.v;
    v.xring = j ? 1 : -1;
    try {
      ASSERT_NO_FATAL_FAILURE(fc.run(cfg, v, m, j ? "x ring" : "x staged", &o[j]));
    } catch (const solgemm::Error& e) {  // x staged does not fit beside the ring (what the x ring is for)
      ASSERT_EQ(j, 0) << e.what();
      ASSERT_NE(std::string(e.what()).find("bad layout"), std::string::npos) << e.what();
    }
  }
  *compared = !o[0].empty();
  if (*compared) EXPECT_TRUE(o[0] == o[1]) << "x through the ring differs from x staged";
}

// x through the ring (skinny_family.cuh kXR, perf-notes step 96) against x staged, on the family's own launcher:
// bitwise the same outputs (same groups, same order) where staged x fits beside the ring, every output written, the
// FP64 reference's error, for the plan's no-split layouts, one with a run that is not whole (K = 4160: 65 groups under
// 4 x 17, one 2-D x box per k warp), rows < N, 1..32 tokens (n_tiles 4: the 1-CTA-per-SM variant, and the 2-CTA one
// for the 2 x 4 x 16 layout of 8192 rows; staged x of a whole-K CTA does not fit there).
TEST(Skinny, XRingEqualsStagedX) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x4A1Bu);
  struct S {
    int64_t n, k, rows;
    int rt, wk, gpw, cs = 1;
  };
  for (const S s : {S{4096, 8192, 4096, 1, 8, 16}, S{8192, 4096, 8192, 2, 4, 16}, S{2048, 4160, 2000, 2, 4, 17},
                    S{8192, 4096, 1000, 2, 4, 16}, S{4096, 8192, 4096, 2, 8, 16}, S{8192, 4096, 8192, 4, 4, 16}}) {
    SCOPED_TRACE(std::to_string(s.n) + "x" + std::to_string(s.k) + " rows " + std::to_string(s.rows) + " cs " +
                 std::to_string(s.cs) + " " + skt::seed_msg(seed));
    FamilyCase fc(s.n, s.k, s.rows, 32);
    ASSERT_NO_FATAL_FAILURE(fc.make(seed + static_cast<uint64_t>(s.k), seed + 7));
    for (int m : {1, 3, 8, 9, 13, 16, 17, 24, 32}) {
      SCOPED_TRACE("m=" + std::to_string(m));
      const solgemm::Config cfg = solgemm::layout_config(s.cs, s.rt, s.wk, s.gpw, m <= 8 ? 1 : m <= 16 ? 2 : 4);
      bool compared = false;
      ASSERT_NO_FATAL_FAILURE(xring_vs_staged(fc, cfg, m, &compared));
    }
  }
}

// The exception corrections with x through the ring (the exception warp's x from global memory) against x staged (its
// x from shared memory) on the judge's llm-like weights (~10x the exceptions of gen_weights': several chunks of entries
// per CTA, many rows with more than one entry per chunk, so many rounds): bitwise the same outputs where staged x fits
// beside the ring, every output written, nothing past m x rows, the FP64 reference's error; the plan's x-ring layouts
// of the pooler and the unpooler at 2..16 tokens, and 17..32 on the pooler's one-CTA twin of its pair.
TEST(Skinny, XRingEqualsStagedXManyExceptions) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x46A7u);
  struct S {
    int64_t n, k;
    int rt, wk, gpw;
  };
  for (const S s : {S{4096, 8192, 1, 8, 16}, S{8192, 4096, 2, 4, 16}, S{4096, 8192, 2, 8, 16}}) {
    SCOPED_TRACE(std::to_string(s.n) + "x" + std::to_string(s.k) + " rt" + std::to_string(s.rt) + " wk" +
                 std::to_string(s.wk) + " " + skt::seed_msg(seed));
    FamilyCase fc(s.n, s.k, s.n, 32);
    ASSERT_NO_FATAL_FAILURE(fc.make(seed, seed + 11, /*llm_like=*/true));
    int compared = 0;
    for (int m : {2, 3, 8, 9, 16, 17, 32}) {
      SCOPED_TRACE("m=" + std::to_string(m));
      const solgemm::Config cfg = solgemm::layout_config(1, s.rt, s.wk, s.gpw, m <= 8 ? 1 : m <= 16 ? 2 : 4);
      bool here = false;
      ASSERT_NO_FATAL_FAILURE(xring_vs_staged(fc, cfg, m, &here));
      compared += here ? 1 : 0;
    }
    EXPECT_GT(compared, 0) << "no m where staged x fits: nothing compared";
  }
}

// A pair that sums as one sequence (Config::k_seq: the pooler's layout at 17..32 tokens, perf-notes steps 165, 166)
// gives the bits of its one-CTA twin (split_k 1, twice the k warps: the same k slices added in the same order, the
// same corrections), at every token count and n_tiles, with x through the ring; finite, nothing written past m x rows.
// Also an odd shape whose second CTA has fewer groups and an odd rt_cta (both exception warps then take every row), and
// the pair's fallback through the workspace (no cluster; checked against FP64 only: another association).
TEST(Skinny, PairSequenceEqualsOneCta) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x9A1Bu);
  struct S {
    int64_t n, k, rows;
    int rt, wk, gpw;
  };
  for (const S s : {S{4096, 8192, 4096, 2, 4, 16}, S{2048, 4160, 2000, 2, 4, 9}, S{1024, 4096, 1000, 1, 4, 8}}) {
    SCOPED_TRACE(std::to_string(s.n) + "x" + std::to_string(s.k) + " rows " + std::to_string(s.rows) + " rt" +
                 std::to_string(s.rt) + " " + skt::seed_msg(seed));
    FamilyCase fc(s.n, s.k, s.rows, 32);
    ASSERT_NO_FATAL_FAILURE(fc.make(seed + static_cast<uint64_t>(s.k), seed + 9));
    for (int m : {1, 3, 8, 9, 16, 17, 24, 32}) {
      SCOPED_TRACE("m=" + std::to_string(m));
      const int nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
      const solgemm::Config pair = solgemm::layout_config(2, s.rt, s.wk, s.gpw, nt, true);
      std::vector<uint16_t> one, seq, ws;
      int path = solgemm::kernels::kPathNone;
      ASSERT_NO_FATAL_FAILURE(fc.run(solgemm::layout_config(1, s.rt, 2 * s.wk, s.gpw, nt), fc.v, m, "one CTA", &one));
      ASSERT_NO_FATAL_FAILURE(fc.run(pair, fc.v, m, "pair", &seq, &path));
      ASSERT_EQ(path, solgemm::kernels::kPathCluster) << "the pair did not run as a cluster";
      EXPECT_TRUE(one == seq) << "the pair's sequence differs from its one-CTA twin";
      // The pair where it cannot run as a cluster (the bench's no_cluster; a GPU that cannot hold the pairs at once):
      // x still through the ring, split K through the workspace, another association: correct, finite, in bounds.
      solgemm::kernels::PackedView vn = fc.v;
      vn.no_cluster = true;
      ASSERT_NO_FATAL_FAILURE(fc.run(pair, vn, m, "pair through the workspace", &ws, &path));
      EXPECT_EQ(path, solgemm::kernels::kPathLastArrival) << "no_cluster: the x-ring kernel through the workspace";
    }
  }
}

// A split-K layout reduced on chip (its clusters) gives the bits of the same layout through the workspace (the same
// partials added in split order): clusters of 16, the non-portable size (skinny_family.cuh launch; qkv_gate's balanced
// layout cs16 / rt9 / wk1 / g8, 256 CTAs of 72 groups, two per SM, a cluster spanning 8 SMs of one GPC) at 1..16 tokens,
// and the plan's qkv_gate row for 17..32 tokens (15 clusters of 8 at one CTA per SM); every output written, nothing past
// m x rows, the FP64 reference's error. Which reduction ran is printed: where a GPU's GPCs cannot place all the clusters
// at once both run through the workspace (then the equality is the workspace's with itself).
TEST(Skinny, ClustersEqualWorkspace) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0xC16u);
  SCOPED_TRACE(skt::seed_msg(seed));
  // cs16 / rt9 / wk1 / g8 (clusters of 16, perf-notes step 167) at 1..16 tokens, and the plan's qkv_gate row at 17..32
  // (cs8 / rt10 / wk1 / g16: 15 clusters of 8, all that an H200 holds at one CTA per SM, step 171) at n_tiles 4.
  struct L {
    int cs, rt, wk, gpw;
    std::vector<int> ms;
    const char* name;
  };
  FamilyCase fc(2304, 8192, 2304, 32);
  ASSERT_NO_FATAL_FAILURE(fc.make(seed, seed + 3));
  for (const L& l : {L{16, 9, 1, 8, {1, 2, 5, 8, 9, 16}, "cs16 / rt9 / wk1 / g8"},
                     L{8, 10, 1, 16, {17, 24, 32}, "cs8 / rt10 / wk1 / g16"}}) {
    for (int m : l.ms) {
      SCOPED_TRACE(std::string(l.name) + " m=" + std::to_string(m));
      const solgemm::Config cfg = solgemm::layout_config(l.cs, l.rt, l.wk, l.gpw, m <= 8 ? 1 : m <= 16 ? 2 : 4);
      std::vector<uint16_t> o[2];
      int path[2] = {solgemm::kernels::kPathNone, solgemm::kernels::kPathNone};
      for (int j = 0; j < 2; ++j) {
        solgemm::kernels::PackedView v = fc.v;
        v.no_cluster = j == 1;
        ASSERT_NO_FATAL_FAILURE(fc.run(cfg, v, m, j ? "workspace" : "default", &o[j], &path[j]));
      }
      EXPECT_TRUE(path[1] == solgemm::kernels::kPathCooperative || path[1] == solgemm::kernels::kPathLastArrival)
          << "no_cluster ran path " << path[1];
      EXPECT_TRUE(path[0] == solgemm::kernels::kPathCluster || path[0] == path[1]) << "default ran path " << path[0];
      EXPECT_TRUE(o[0] == o[1]) << "the clusters' sums differ from the workspace's";
      if (m == l.ms.front())
        std::printf("[ Clusters ] %s on 2304 x 8192 ran %s\n", l.name,
                    path[0] == solgemm::kernels::kPathCluster ? "as clusters (on chip)"
                                                              : "through the workspace (its clusters do not all fit)");
    }
  }
}

// The x ring's boxes hold m token rows where one chunk holds all m < 8 n_tiles tokens (perf-notes step 132): the slot
// rows past m keep whatever an earlier launch left there. Their MMA columns must never reach the output: a launch at
// 32 tokens of NaN x first, then m = 1 / 3 / 9 / 17 / 24 tokens of real x, bitwise equal to the same call after a launch
// of finite x, finite, and nothing written past m x rows (the 1-CTA and the 2-CTA variants at n_tiles 4, and 1, 2).
TEST(Skinny, XRingStaleRowsNeverReachOutput) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x5A1Eu);
  struct S {
    int64_t n, k;
    int rt, wk, gpw, cs = 1;
  };
  for (const S s : {S{8192, 4096, 2, 4, 16}, S{4096, 8192, 2, 8, 16}, S{4096, 8192, 1, 8, 16}, S{4096, 8192, 2, 4, 16, 2}}) {
    SCOPED_TRACE(std::to_string(s.n) + "x" + std::to_string(s.k) + " rt" + std::to_string(s.rt) + " cs" +
                 std::to_string(s.cs) + " " + skt::seed_msg(seed));
    Dev<__nv_bfloat16> dw(static_cast<size_t>(s.n * s.k));
    std::vector<uint16_t> hw;
    ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, s.n, s.k, seed + static_cast<uint64_t>(s.n), 0.02f, &hw));
    const solgemm::format::Packed pk = solgemm::format::encode_bf16(hw.data(), s.n, s.k);
    const DevPacked dp(pk);
    const DevSplit ws(size_t{1} << 22);
    SKT_CK(cudaDeviceSynchronize());
    solgemm::kernels::PackedView v = dp.view;
    v.split = ws.split;
    v.xring = 1;
    constexpr int kTok = 32;
    Dev<__nv_bfloat16> x(static_cast<size_t>(kTok * s.k)), xnan(static_cast<size_t>(kTok * s.k));
    skt::gen_bf16<<<1024, 256>>>(x.p, kTok * s.k, seed + 11, 1.0f);
    SKT_CK(cudaMemset(xnan.p, 0xFF, static_cast<size_t>(kTok * s.k) * 2));  // 0xFFFF: a BF16 NaN
    const size_t total = static_cast<size_t>(kTok * s.n + kGuard);
    Dev<uint16_t> out(total);
    auto call = [&](const __nv_bfloat16* xp, int m, std::vector<uint16_t>* res) {
      const solgemm::Config cfg = solgemm::layout_config(s.cs, s.rt, s.wk, s.gpw, m <= 8 ? 1 : m <= 16 ? 2 : 4, s.cs > 1);
      SKT_CK(cudaMemset(out.p, 0xFF, total * 2));
      solgemm::kernels::launch_skinny(cfg, v, xp, m, reinterpret_cast<__nv_bfloat16*>(out.p), s.n, nullptr);
      SKT_CK(cudaDeviceSynchronize());
      if (res) *res = out.get();
    };
    for (int m : {1, 3, 9, 17, 24}) {
      SCOPED_TRACE("m=" + std::to_string(m));
      const int prev = m <= 8 ? 8 : m <= 16 ? 16 : 32;  // (the same variant, so the same slots)
      std::vector<uint16_t> clean, after_nan;
      call(x.p, prev, nullptr);
      call(x.p, m, &clean);
      call(xnan.p, prev, nullptr);
      call(x.p, m, &after_nan);
      ASSERT_EQ(clean.size(), total);
      ASSERT_EQ(after_nan.size(), total);
      const size_t used = static_cast<size_t>(m) * s.n;
      const skt::PoisonCounts pc = skt::poison_counts(after_nan, used);
      EXPECT_EQ(pc.bad, 0u) << "NaN/Inf in out after a NaN launch";
      EXPECT_EQ(pc.guard_bad, 0u) << "written past m x rows";
      EXPECT_TRUE(clean == after_nan) << "the rows past m of a box reached the output";
    }
  }
}

// The ring's hand-off under load (perf-notes step 183): the pooler's skinny plans with x through the ring at n_tiles 2
// and 4 (m = 9, 16, 32) on the judge's default pooler weights, 1000 calls each in bench/race_probe.cu's cycle of five
// timings (nothing; a 256 MB write first; a 1 GB read alongside on a second stream; the m + 7 call first; a 64 MB read
// alongside), every output bitwise equal to the first (made on an idle GPU). Before the slot's release was fenced,
// race_probe saw 2-40% of the calls with a read alongside differ at these m. Built with -DSOLGEMM_NEGATIVE_CONTROL=ON
// (the release without its fence) this test must fail, and does: on an H200 (perf-notes step 184,
// docs/results/dev/2026-12-02_h200_s41-negative-control/) it failed at all three m (the first bad call at 2, 2, 12 of
// 1000), and passed on the normal build. (A first version of it, 200 calls per m with a 256 MB read alongside every
// call, passed against the unfenced library: it could not catch the race.)
TEST(Skinny, RingDeterministicUnderConcurrentLoad) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0);
  SCOPED_TRACE(skt::seed_msg(seed));
  namespace gen = solgemm::judge::gen;
  constexpr int64_t kN = 4096, kK = 8192;
  constexpr int kMaxTok = 39, kReps = 1000;
  gen::WeightSpec ws;
  ws.kind = gen::Kind::normal;
  ws.seed = seed;
  ws.layer = 2;  // (the judge's pooler)
  ws.k = kK;
  std::vector<uint16_t> hw(static_cast<size_t>(kN * kK));
  for (int64_t r = 0; r < kN; ++r)
    for (int64_t c = 0; c < kK; ++c)
      hw[static_cast<size_t>(r * kK + c)] = static_cast<uint16_t>(gen::weight_bits(ws, r, c) >> 16);
  Dev<uint16_t> dw(hw.size());
  dw.put(hw);
  cudaStream_t st, st2;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  SKT_CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
  cudaEvent_t ev;
  SKT_CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  solgemm::PrepareOptions opt;
  opt.tune_vendor = false;
  opt.max_m = kMaxTok;
  auto w = solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, kN, kK, st, opt);
  const size_t hog_n = (size_t{1} << 30) / 16, fl_n = (size_t{256} << 20) / 16;
  Dev<uint4> hog(hog_n), fl(fl_n);
  Dev<unsigned> sink(1), cnt(kReps);
  SKT_CK(cudaMemset(hog.p, 1, hog_n * 16));
  const size_t used_max = static_cast<size_t>(kMaxTok) * kN;
  Dev<uint16_t> out(used_max), gold(used_max), x(static_cast<size_t>(kMaxTok * kK));
  for (int m : {9, 16, 32}) {
    const std::string plan = w.plan_for(m, kN);
    SCOPED_TRACE("m=" + std::to_string(m) + ": " + plan);
    ASSERT_NE(plan.find("skinny"), std::string::npos);
    ASSERT_NE(plan.find("x through the ring"), std::string::npos);
    std::vector<uint16_t> hx(static_cast<size_t>(kMaxTok * kK));
    for (int64_t i = 0; i < kMaxTok; ++i)
      for (int64_t c = 0; c < kK; ++c) hx[static_cast<size_t>(i * kK + c)] = gen::x_bits(seed + 0x5EED + m, kK, i, c);
    x.put(hx);
    const size_t used = static_cast<size_t>(m) * kN;
    w.run(x.p, m, gold.p, kN, st);
    SKT_CK(cudaStreamSynchronize(st));
    SKT_CK(cudaMemsetAsync(cnt.p, 0, sizeof(unsigned) * kReps, st));
    for (int r = 0; r < kReps; ++r) {
      const int mode = r % 5;
      SKT_CK(cudaMemsetAsync(out.p, 0xFF, used_max * 2, st));
      if (mode == 1) solgemm::load::write_fill<<<1024, 256, 0, st>>>(fl.p, fl_n, static_cast<unsigned>(r));
      if (mode == 2 || mode == 4) {
        SKT_CK(cudaEventRecord(ev, st));
        SKT_CK(cudaStreamWaitEvent(st2, ev));
        solgemm::load::read_hog<<<264, 512, 0, st2>>>(hog.p, mode == 2 ? hog_n : hog_n / 16, sink.p);
      }
      if (mode == 3) {
        w.run(x.p, m + 7, out.p, kN, st);
        SKT_CK(cudaMemsetAsync(out.p, 0xFF, used_max * 2, st));
      }
      w.run(x.p, m, out.p, kN, st);
      solgemm::load::count_diff<<<256, 256, 0, st>>>(out.p, gold.p, used, cnt.p + r);
      if (mode == 2 || mode == 4) {
        SKT_CK(cudaEventRecord(ev, st2));
        SKT_CK(cudaStreamWaitEvent(st, ev));
      }
      if (r % 256 == 255) SKT_CK(cudaStreamSynchronize(st));
    }
    SKT_CK(cudaStreamSynchronize(st));
    SKT_CK(cudaGetLastError());
    const std::vector<unsigned> c = cnt.get();
    int bad = 0, first = -1;
    for (int r = 0; r < kReps; ++r)
      if (c[static_cast<size_t>(r)] != 0) {
        if (first < 0) first = r;
        ++bad;
      }
    EXPECT_EQ(bad, 0) << "calls whose output differs from the first (of " << kReps << "; the first at call " << first
                      << " (timing mode " << (first >= 0 ? first % 5 : -1)
                      << "): " << (first >= 0 ? c[static_cast<size_t>(first)] : 0u) << " elements)";
  }
  cudaEventDestroy(ev);
  cudaStreamDestroy(st2);
  cudaStreamDestroy(st);
}

// Untuned shapes: N % 16 != 0, K % 64 != 0 (and K % 8 != 0: x rows not 16-byte aligned), rows < N.
TEST(Skinny, OddShapes) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x0DDu);
  struct S {
    int64_t n, k, rows;
  };
  for (const S s : {S{1000, 1000, 1000}, S{37, 77, 37}, S{300, 4100, 129}, S{4100, 200, 4100}}) {
    Dev<__nv_bfloat16> dw(static_cast<size_t>(s.n * s.k));
    std::vector<uint16_t> hw;
    ASSERT_NO_FATAL_FAILURE(skt::gen_weights(dw.p, s.n, s.k, seed + static_cast<uint64_t>(s.k), 0.02f, &hw));
    Case c{s.n, s.k, s.rows, {}, "-bit", {1, 5, 8, 13, 16, 33, 64}};  // small: either code may be chosen
    check_case(dw.p, hw, c, seed);
  }
}

}  // namespace
