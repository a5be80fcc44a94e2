// The vendor family (cuBLAS / cuBLASLt on the raw BF16 weights) through the public API, with the prepare-time
// tuning on: all rows, the tuned leading slices (n/8: where split-K algorithms get picked) and an untuned slice
// (the default path), against an FP64 reference (relative L2 <= 1e-2, probe rows exact to 1e-3), NaN poison with
// a guard after out, and 10 graph replays bitwise equal; a second matrix of the same shape reuses the tuning.
// A matrix of 2^23 weights also goes through the tuner's broad sweep of cuBLASLt's tiles (perf-notes step 71):
// whatever it picks is checked the same way at decode and verify sizes. The tune file (PrepareOptions::tune_file)
// keeps the choice across processes: written once, read back to the same bits, bad files named in one error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "test_gpu_skinny_util.cuh"

namespace {

using skt::Dev;
constexpr int64_t kGuard = 4096;

// One call of m tokens into a NaN-poisoned out (0xFFFF: a BF16 NaN) with a guard after its m x rows outputs:
// every output written and finite, nothing past them, relative L2 error <= 1e-2 against the FP64 reference
// `href` (token-major; it may hold more tokens than m: the first m are compared), probe rows (every 8th token)
// <= 1e-3.
void check_call(const solgemm::Weights& w, const __nv_bfloat16* x, Dev<uint16_t>& out, size_t total,
                const std::vector<double>& href, int m, int64_t rows, cudaStream_t st) {
  SKT_CK(cudaMemset(out.p, 0xFF, total * 2));
  w.run(x, m, out.p, rows, st);
  SKT_CK(cudaStreamSynchronize(st));
  SKT_CK(cudaGetLastError());
  const std::vector<uint16_t> raw = out.get();
  const size_t used = static_cast<size_t>(m * rows);
  const skt::PoisonCounts pc = skt::poison_counts(raw, used);
  ASSERT_EQ(pc.bad, 0u) << "NaN/Inf (unwritten?) in out";
  ASSERT_EQ(pc.guard_bad, 0u) << "written past m x rows";
  std::vector<double> r(href.begin(), href.begin() + static_cast<std::ptrdiff_t>(used));
  EXPECT_LE(skt::rel_l2(raw, r, rows, 0, m), 1e-2) << "relative L2 error";
  for (int64_t p = 0; p < m; p += 8) EXPECT_LE(skt::rel_l2(raw, r, rows, p, p + 1), 1e-3) << "probe row " << p;
}

// One test's matrix: n x k BF16 weights ~ N(0, 0.02^2) from `seed` on the device, a stream, and options that
// force the vendor family (a CUDA failure here is a test failure; the test stops on it).
struct VendorCase {
  int64_t n, k;
  cudaStream_t st = nullptr;
  Dev<__nv_bfloat16> dw;
  solgemm::PrepareOptions opt;
  VendorCase(int64_t n_, int64_t k_, uint64_t seed) : n(n_), k(k_), dw(static_cast<size_t>(n_ * k_)) {
    EXPECT_EQ(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), cudaSuccess);
    skt::gen_bf16<<<1024, 256>>>(dw.p, n * k, seed, 0.02f);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
    opt.kernel = "vendor";
  }
  VendorCase(const VendorCase&) = delete;
  VendorCase& operator=(const VendorCase&) = delete;
  ~VendorCase() { cudaStreamDestroy(st); }
  solgemm::Weights prepare() const { return solgemm::Weights::prepare(dw.p, solgemm::DType::bf16, n, k, st, opt); }
};

TEST(Vendor, TunedSlicesCorrectAndDeterministic) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x7E4Du);
  const int64_t n = 2048, k = 2048;
  VendorCase c(n, k, seed);
  if (testing::Test::HasFailure()) return;
  const cudaStream_t st = c.st;
  const Dev<__nv_bfloat16>& dw = c.dw;
  const solgemm::Weights w = c.prepare();
  const std::string desc = w.description();
  EXPECT_NE(desc.find("rows 256:"), std::string::npos) << "the n/8 slice was not tuned: " << desc;
  const int64_t mmax = 100;
  Dev<__nv_bfloat16> x(static_cast<size_t>(mmax * k));
  skt::make_x(x.p, mmax, k, seed);
  const size_t total = static_cast<size_t>(mmax * n + kGuard);
  Dev<uint16_t> out(total);
  for (int64_t rows : {n, n / 8, n / 8 + 16}) {
    Dev<double> ref(static_cast<size_t>(mmax * rows));
    skt::ref_fp64<<<dim3(static_cast<unsigned>(rows), static_cast<unsigned>((mmax + 7) / 8)), 256>>>(
        x.p, dw.p, ref.p, mmax, rows, k);
    SKT_CK(cudaDeviceSynchronize());
    const std::vector<double> href = ref.get();
    for (int m : {1, 8, 64, 100}) {
      SCOPED_TRACE("rows=" + std::to_string(rows) + " m=" + std::to_string(m) + " plan=" + w.plan_for(m, rows) +
                   " " + skt::seed_msg(seed));
      check_call(w, x.p, out, total, href, m, rows, st);
      if (testing::Test::HasFatalFailure()) return;
      if (m <= 8) skt::expect_replays_equal(w, x.p, out, total, m, rows, st);
    }
  }
  // A second matrix of the same shape reuses the tuning (a process-wide cache keyed by device, shape and
  // workspace) and computes its own weights correctly with it.
  Dev<__nv_bfloat16> dw2(static_cast<size_t>(n * k));
  skt::gen_bf16<<<1024, 256>>>(dw2.p, n * k, seed + 1, 0.02f);
  SKT_CK(cudaDeviceSynchronize());
  EXPECT_EQ(desc.find("earlier prepare"), std::string::npos) << "the first prepare of this shape was cached: " << desc;
  const solgemm::Weights w2 = solgemm::Weights::prepare(dw2.p, solgemm::DType::bf16, n, k, st, c.opt);
  EXPECT_NE(w2.description().find("tuned by an earlier prepare of this shape"), std::string::npos) << w2.description();
  {
    const int64_t rows = n / 8;
    const int m = 8;
    Dev<double> ref(static_cast<size_t>(m * rows));
    skt::ref_fp64<<<dim3(static_cast<unsigned>(rows), 1), 256>>>(x.p, dw2.p, ref.p, m, rows, k);
    SKT_CK(cudaDeviceSynchronize());
    SKT_CK(cudaMemset(out.p, 0xFF, total * 2));
    w2.run(x.p, m, out.p, rows, st);
    SKT_CK(cudaStreamSynchronize(st));
    const std::vector<uint16_t> raw = out.get();
    EXPECT_LE(skt::rel_l2(raw, ref.get(), rows, 0, m), 1e-2) << "second matrix, rows=" << rows << " " << skt::seed_msg(seed);
    for (size_t i = static_cast<size_t>(m * rows); i < total; ++i) ASSERT_EQ(raw[i], 0xFFFFu) << "written past m x rows";
  }
}

// The broad sweep (matrices of >= 2^23 weights, all rows): the configurations it may pick (any tile and custom
// option of cuBLASLt's first algorithm, split K with FP32 partials) must be as right and as deterministic as the
// default's, at every m bucket the plan can send to the vendor family.
TEST(Vendor, SweptChoicesCorrectAndDeterministic) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x5EE9u);
  const int64_t n = 4096, k = 2048;  // 2^23 weights: the sweep's threshold
  VendorCase c(n, k, seed);
  if (testing::Test::HasFailure()) return;
  const cudaStream_t st = c.st;
  const Dev<__nv_bfloat16>& dw = c.dw;
  const solgemm::Weights w = c.prepare();
  const int64_t mmax = 256;
  Dev<__nv_bfloat16> x(static_cast<size_t>(mmax * k));
  skt::make_x(x.p, mmax, k, seed);
  const size_t total = static_cast<size_t>(mmax * n + kGuard);
  Dev<uint16_t> out(total);
  Dev<double> ref(static_cast<size_t>(mmax * n));
  skt::ref_fp64<<<dim3(static_cast<unsigned>(n), static_cast<unsigned>((mmax + 7) / 8)), 256>>>(x.p, dw.p, ref.p,
                                                                                                mmax, n, k);
  SKT_CK(cudaDeviceSynchronize());
  const std::vector<double> href = ref.get();
  for (int m : {1, 16, 32, 100, 128, 256}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " plan=" + w.plan_for(m, n) + " " + skt::seed_msg(seed) + " " +
                 w.description());
    check_call(w, x.p, out, total, href, m, n, st);
    if (testing::Test::HasFatalFailure()) return;
    skt::expect_replays_equal(w, x.p, out, total, m, n, st);
  }
}

// The tune file: a prepare writes its shape's choice once; a prepare reading it back says so and computes the same
// bits at every m bucket; a line that is not an entry, and a file that cannot be written, are one clear error each.
TEST(Vendor, TuneFileRoundTrip) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x7F11u);
  const int64_t n = 1536, k = 1024;
  const std::string path = ::testing::TempDir() + "solgemm_tune_file_test.txt";
  std::remove(path.c_str());
  VendorCase c(n, k, seed);
  if (testing::Test::HasFailure()) return;
  const cudaStream_t st = c.st;
  c.opt.tune_file = path;
  const solgemm::Weights w1 = c.prepare();
  auto lines = [&] {
    std::ifstream in(path);
    std::vector<std::string> v;
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  };
  ASSERT_EQ(lines().size(), 1u) << "the first prepare writes one entry: " << path;
  EXPECT_EQ(lines()[0].rfind("solgemm-vendor-v4 ", 0), 0u) << lines()[0].substr(0, 80);
  const solgemm::Weights w2 = c.prepare();
  EXPECT_NE(w2.description().find("read from the tune file"), std::string::npos) << w2.description();
  EXPECT_EQ(lines().size(), 1u) << "an entry read back is not written again";
  const int64_t mmax = 256;
  Dev<__nv_bfloat16> x(static_cast<size_t>(mmax * k));
  skt::make_x(x.p, mmax, k, seed);
  Dev<uint16_t> o1(static_cast<size_t>(mmax * n)), o2(static_cast<size_t>(mmax * n));
  for (int m : {1, 8, 32, 128, 256})
    for (int64_t rows : {n, n / 8}) {
      SCOPED_TRACE("m=" + std::to_string(m) + " rows=" + std::to_string(rows) + " " + skt::seed_msg(seed));
      SKT_CK(cudaMemset(o1.p, 0xFF, o1.n * 2));
      SKT_CK(cudaMemset(o2.p, 0xFF, o2.n * 2));
      w1.run(x.p, m, o1.p, rows, st);
      w2.run(x.p, m, o2.p, rows, st);
      SKT_CK(cudaStreamSynchronize(st));
      EXPECT_EQ(o1.get(), o2.get()) << "the choice read back computes other bits";
    }
  {
    std::ofstream bad(path);
    bad << "not a tune file\n";
  }
  try {
    (void)c.prepare();
    ADD_FAILURE() << "a malformed tune file was accepted";
  } catch (const solgemm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + " line 1"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  c.opt.tune_file = "/nonexistent-solgemm-dir/tune.txt";
  try {
    (void)c.prepare();
    ADD_FAILURE() << "an unwritable tune file was accepted";
  } catch (const solgemm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot append"), std::string::npos) << e.what();
  }
}

}  // namespace

// PrepareOptions::shared_workspace (perf-notes step 216): Weights prepared with it share one cuBLAS handle and
// workspace per device and own 32 MiB less each; their calls, captured together into one graph on one stream (cuBLAS
// at 64-300 tokens, the BF16 and the router's hi + lo paths, and a skinny call), give the bits of the same calls on
// Weights that own theirs, every output written, replays equal.
TEST(Vendor, SharedWorkspace) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0x5A4Eu);
  cudaStream_t st;
  SKT_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  struct Mat {
    int64_t n, k;
    bool f32;
    int m;
  };
  const Mat mats[] = {{2048, 2048, false, 128}, {1024, 4096, false, 64}, {256, 2048, true, 300}, {8192, 1024, false, 1}};
  std::vector<std::unique_ptr<Dev<uint16_t>>> ws;  // weights (as bytes)
  std::vector<solgemm::Weights> own, shared;
  solgemm::PrepareOptions sh;
  sh.shared_workspace = true;
  for (size_t i = 0; i < std::size(mats); ++i) {
    const Mat& a = mats[i];
    ws.push_back(std::make_unique<Dev<uint16_t>>(static_cast<size_t>(a.n * a.k * (a.f32 ? 2 : 1))));
    if (a.f32)
      skt::gen_f32<<<1024, 256>>>(reinterpret_cast<float*>(ws.back()->p), a.n * a.k, seed + i, 0.02f);
    else
      skt::gen_bf16<<<1024, 256>>>(reinterpret_cast<__nv_bfloat16*>(ws.back()->p), a.n * a.k, seed + i, 0.02f);
    SKT_CK(cudaDeviceSynchronize());
    const solgemm::DType dt = a.f32 ? solgemm::DType::f32 : solgemm::DType::bf16;
    own.push_back(solgemm::Weights::prepare(ws.back()->p, dt, a.n, a.k, st, {}));
    shared.push_back(solgemm::Weights::prepare(ws.back()->p, dt, a.n, a.k, st, sh));
    EXPECT_EQ(shared.back().device_bytes() + (size_t{32} << 20), own.back().device_bytes()) << a.n << " x " << a.k;
  }
  const int64_t kmax = 4096, mmax = 300;
  Dev<__nv_bfloat16> x(static_cast<size_t>(mmax * kmax));
  skt::make_x(x.p, mmax, kmax, seed);
  std::vector<std::unique_ptr<Dev<uint32_t>>> out_own, out_sh;  // (FP32-sized: room for either)
  for (const Mat& a : mats) {
    out_own.push_back(std::make_unique<Dev<uint32_t>>(static_cast<size_t>(a.m * a.n)));
    out_sh.push_back(std::make_unique<Dev<uint32_t>>(static_cast<size_t>(a.m * a.n)));
  }
  for (size_t i = 0; i < std::size(mats); ++i) {
    SKT_CK(cudaMemset(out_own[i]->p, 0xFF, out_own[i]->n * 4));
    own[i].run(x.p, mats[i].m, out_own[i]->p, mats[i].n, st);
  }
  cudaGraph_t g;
  cudaGraphExec_t ge;
  SKT_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (size_t i = 0; i < std::size(mats); ++i) shared[i].run(x.p, mats[i].m, out_sh[i]->p, mats[i].n, st);
  SKT_CK(cudaStreamEndCapture(st, &g));
  SKT_CK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 3; ++rep) {
    for (auto& o : out_sh) SKT_CK(cudaMemsetAsync(o->p, 0xFF, o->n * 4, st));
    SKT_CK(cudaGraphLaunch(ge, st));
    SKT_CK(cudaStreamSynchronize(st));
    for (size_t i = 0; i < std::size(mats); ++i) {
      const Mat& a = mats[i];
      SCOPED_TRACE(std::to_string(a.n) + " x " + std::to_string(a.k) + " m=" + std::to_string(a.m) + " replay " +
                   std::to_string(rep) + " " + shared[i].plan_for(a.m, a.n) + " " + skt::seed_msg(seed));
      const std::vector<uint32_t> o = out_own[i]->get(), s = out_sh[i]->get();
      const size_t used = static_cast<size_t>(a.m * a.n) / (a.f32 ? 1 : 2);  // (32-bit words holding the outputs)
      size_t unwritten = 0, differ = 0;
      for (size_t j = 0; j < used; ++j) {
        unwritten += s[j] == 0xFFFFFFFFu || (!a.f32 && ((s[j] & 0xFFFFu) == 0xFFFFu || (s[j] >> 16) == 0xFFFFu));
        differ += s[j] != o[j];
      }
      EXPECT_EQ(unwritten, 0u);
      EXPECT_EQ(differ, 0u) << "the shared workspace's results differ from an own workspace's";
    }
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(st);
}

// A Weights lives on the device prepare ran on: a call made while another device is current is refused with one error
// (a launch there would fault on this device's buffers and end the context) and writes nothing; each device then
// runs its own Weights (the shared workspace is per device). Needs two CUDA devices (skipped otherwise).
TEST(Vendor, OtherDeviceRefused) {
  SOLGEMM_REQUIRE_GPU();
  int count = 0;
  SKT_CK(cudaGetDeviceCount(&count));
  if (count < 2) GTEST_SKIP() << "needs two CUDA devices (found " << count << ")";
  const uint64_t seed = solgemm::testing::test_seed(0x0D2Eu);
  const int64_t n = 1024, k = 1024, m = 8;
  solgemm::PrepareOptions sh;
  sh.shared_workspace = true;
  sh.tune_vendor = false;
  std::vector<std::vector<uint16_t>> outs;
  for (int dev : {0, 1}) {
    SKT_CK(cudaSetDevice(dev));
    Dev<__nv_bfloat16> w(static_cast<size_t>(n * k)), x(static_cast<size_t>(m * k));
    Dev<uint16_t> out(static_cast<size_t>(m * n));
    skt::gen_bf16<<<1024, 256>>>(w.p, n * k, seed, 0.02f);
    skt::make_x(x.p, m, k, seed);
    SKT_CK(cudaDeviceSynchronize());
    auto wt = solgemm::Weights::prepare(w.p, solgemm::DType::bf16, n, k, nullptr, sh);
    SKT_CK(cudaMemset(out.p, 0xFF, out.n * 2));
    SKT_CK(cudaSetDevice(1 - dev));
    try {
      wt.run(x.p, m, out.p, n, nullptr);
      ADD_FAILURE() << "a call from device " << 1 - dev << " of weights prepared on " << dev << " was accepted";
    } catch (const solgemm::Error& e) {
      const std::string msg = e.what(), want = "the current CUDA device is " + std::to_string(1 - dev) +
                                                  "; expected device " + std::to_string(dev);
      EXPECT_NE(msg.find(want), std::string::npos) << msg;
    }
    SKT_CK(cudaSetDevice(dev));
    SKT_CK(cudaDeviceSynchronize());
    const std::vector<uint16_t> untouched = out.get();
    EXPECT_EQ(std::count(untouched.begin(), untouched.end(), uint16_t{0xFFFF}), static_cast<long>(untouched.size()));
    wt.run(x.p, m, out.p, n, nullptr);
    SKT_CK(cudaDeviceSynchronize());
    outs.push_back(out.get());
    EXPECT_EQ(std::count(outs.back().begin(), outs.back().end(), uint16_t{0xFFFF}), 0) << "device " << dev;
  }
  EXPECT_EQ(outs[0], outs[1]) << "the same call on two devices differs " << skt::seed_msg(seed);
  SKT_CK(cudaSetDevice(0));
}
