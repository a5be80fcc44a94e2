// GPU tests of the judge: its data generators and FP64 reference on the device, the NaN pre-fill catching
// unwritten outputs, the reference implementation and the cuBLAS baseline correct on all 65 shapes through the
// judge's own checks, and a small end-to-end run of the executable writing parseable JSON.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "check.hpp"
#include "cli.hpp"
#include "device.hpp"
#include "generators.hpp"
#include "kernels.hpp"
#include "run.hpp"
#include "shapes.hpp"
#include "testing.hpp"

namespace sj = solgemm::judge;
namespace gen = solgemm::judge::gen;

namespace {

template <typename T>
std::vector<T> download(const sj::DeviceBuffer& b, size_t n) {
  std::vector<T> h(n);
  sj::cuda_check(cudaMemcpy(h.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost), "download");
  return h;
}

}  // namespace

TEST(GpuJudge, DeviceDataMatchesHostData) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(21);
  const int64_t m = 40, k = 1024;
  sj::DeviceBuffer x(static_cast<size_t>(m * k) * 2, "x");
  sj::generate_x(seed, m, k, x.get(), nullptr);
  const auto dx = download<uint16_t>(x, static_cast<size_t>(m * k));
  const auto hx = sj::host_x(seed, m, k);
  size_t differ = 0;
  for (size_t i = 0; i < dx.size(); ++i) {
    if (static_cast<int64_t>(i) / k % 8 == 0) {
      ASSERT_EQ(dx[i], hx[i]) << "probe rows must match exactly; seed " << seed;
    }
    // CUDA's and libm's logf / cos may differ in the last bits, which rarely changes the BF16 rounding by an ulp.
    const float d = gen::bf16_f32(dx[i]), h = gen::bf16_f32(hx[i]);
    differ += std::fabs(d - h) > 1e-3f + 0.01f * std::fabs(h);
  }
  EXPECT_EQ(differ, 0u) << "seed " << seed;
  // Same seed on the device twice: identical bits.
  sj::generate_x(seed, m, k, x.get(), nullptr);
  EXPECT_EQ(download<uint16_t>(x, dx.size()), dx) << "seed " << seed;
}

TEST(GpuJudge, ReferenceIsExactOnSmallProblems) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(22);
  const int64_t m = 19, rows = 70, k = 300;
  for (bool fp32 : {false, true}) {
    const auto w = sj::host_weights(gen::Kind::normal, seed, fp32 ? 4 : 0, rows, k);
    std::vector<uint16_t> w16(w.size());
    for (size_t i = 0; i < w.size(); ++i) w16[i] = static_cast<uint16_t>(w[i] >> 16);
    const auto x = sj::host_x(seed, m, k);
    sj::DeviceBuffer dW(w.size() * 4, "W"), dx(x.size() * 2, "x"), dref(static_cast<size_t>(m * rows) * 8, "ref");
    sj::cuda_check(cudaMemcpy(dW.get(), fp32 ? static_cast<const void*>(w.data()) : w16.data(),
                              w.size() * (fp32 ? 4 : 2), cudaMemcpyHostToDevice), "upload");
    sj::cuda_check(cudaMemcpy(dx.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice), "upload");
    sj::kernels::reference_fp64(dW.get(), fp32, dx.as<uint16_t>(), m, rows, k, dref.as<double>(), nullptr);
    const auto ref = download<double>(dref, static_cast<size_t>(m * rows));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t n = 0; n < rows; ++n) {
        double s = 0;
        for (int64_t c = 0; c < k; ++c)
          s += static_cast<double>(gen::bf16_f32(x[static_cast<size_t>(i * k + c)])) *
               static_cast<double>(gen::bits_f32(w[static_cast<size_t>(n * k + c)]));
        ASSERT_NEAR(ref[static_cast<size_t>(i * rows + n)], s, 1e-12 * (1 + std::fabs(s)))
            << "row " << i << " col " << n << " fp32 " << fp32 << " seed " << seed;
      }
  }
}

TEST(GpuJudge, NanPrefillCatchesUnwrittenOutput) {
  SOLGEMM_REQUIRE_GPU();
  const int64_t m = 9, rows = 64;
  sj::DeviceBuffer out(static_cast<size_t>(m * rows) * 4, "out"), ref(static_cast<size_t>(m * rows) * 8, "ref"),
      re(static_cast<size_t>(m) * sizeof(sj::RowError), "rows");
  sj::cuda_check(cudaMemset(ref.get(), 0, ref.bytes()), "ref");
  for (bool fp32 : {false, true}) {
    const size_t es = fp32 ? 4 : 2;
    // The judge's pre-fill, then a "kernel" that writes everything but the last element of row 4.
    sj::cuda_check(cudaMemset(out.get(), 0xFF, static_cast<size_t>(m * rows) * es), "poison");
    sj::cuda_check(cudaMemset(out.get(), 0, static_cast<size_t>(4 * rows + rows - 1) * es), "partial write");
    sj::cuda_check(cudaMemset(static_cast<char*>(out.get()) + static_cast<size_t>(5 * rows) * es, 0,
                              static_cast<size_t>((m - 5) * rows) * es),
                   "partial write");
    sj::kernels::row_errors(out.get(), fp32, ref.as<double>(), m, rows, re.as<sj::RowError>(), nullptr);
    const auto r = download<sj::RowError>(re, static_cast<size_t>(m));
    const sj::CheckResult c = sj::evaluate(r, sj::bounds_for(fp32));
    EXPECT_FALSE(c.ok);
    EXPECT_EQ(c.nonfinite, 1u);
    EXPECT_NE(c.failure.find("row 4 column 63"), std::string::npos) << c.failure;
    // Fully written: passes.
    sj::cuda_check(cudaMemset(out.get(), 0, static_cast<size_t>(m * rows) * es), "write");
    sj::kernels::row_errors(out.get(), fp32, ref.as<double>(), m, rows, re.as<sj::RowError>(), nullptr);
    EXPECT_TRUE(sj::evaluate(download<sj::RowError>(re, static_cast<size_t>(m)), sj::bounds_for(fp32)).ok);
  }
}

// The reference implementation and the cuBLAS baseline on all 65 shapes (30 scored + 35 extra), 2 inputs each,
// through the judge's own correctness phase (NaN pre-fill, FP64 reference, every rule).
TEST(GpuJudge, ReferenceAndCublasCorrectOnAllShapes) {
  SOLGEMM_REQUIRE_GPU();
  sj::Options o;
  o.impl = "reference";
  o.baseline = "cublas";
  o.check_only = true;
  o.inputs = 2;
  o.seed = solgemm::testing::test_seed(0);
  std::ostringstream log;
  const sj::RunResult r = sj::run_judge(o, log);
  ASSERT_EQ(r.shapes.size(), 65u);
  for (const auto& s : r.shapes) {
    EXPECT_TRUE(s.impl_check.ok) << s.shape.label() << ": " << s.impl_check.failure << " (seed " << o.seed << ")";
    EXPECT_TRUE(s.base_check.ok) << s.shape.label() << ": " << s.base_check.failure << " (seed " << o.seed << ")";
    EXPECT_EQ(s.impl_check.nonfinite, 0u);
  }
  EXPECT_TRUE(r.ok()) << log.str();
}

// Adversarial weights: the checks stay meaningful (finite reference, cuBLAS passes).
TEST(GpuJudge, AdversarialWeightsCheckCleanly) {
  SOLGEMM_REQUIRE_GPU();
  sj::Options o;
  o.impl = "reference";
  o.generator = "adversarial-dense";
  o.check_only = true;
  o.inputs = 1;
  o.loads = {"decode 16"};
  o.m = {130};
  o.seed = solgemm::testing::test_seed(0);
  std::ostringstream log;
  const sj::RunResult r = sj::run_judge(o, log);
  for (const auto& f : r.failures) ADD_FAILURE() << f << " (seed " << o.seed << ")";
}

#ifdef SOLGEMM_JUDGE_EXE
namespace {
std::string judge_exe() {
  return solgemm::testing::project_exe("SOLGEMM_JUDGE_EXE", "judge/solgemm-judge", SOLGEMM_JUDGE_EXE);
}
}  // namespace

// A small run of the executable end to end: one load plus one extra m, few replays; exit 0 and parseable JSON.
TEST(GpuJudge, ExecutableEndToEnd) {
  SOLGEMM_REQUIRE_GPU();
  const uint64_t seed = solgemm::testing::test_seed(0);
  const auto dir = std::filesystem::temp_directory_path() / ("solgemm-judge-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string cmd = judge_exe() + " --impl reference --loads 'decode 1' --m 3 --replays 20,40" +
                          " --inputs 1 --seed " + std::to_string(seed) + " --json " + (dir / "r.json").string() +
                          " --md " + (dir / "r.md").string() + " --svg " + (dir / "r.svg").string() + " > " +
                          (dir / "stdout.txt").string() + " 2> " + (dir / "stderr.txt").string();
  const int status = std::system(cmd.c_str());
  std::ifstream err(dir / "stderr.txt");
  const std::string err_text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << err_text << " (seed " << seed << ")";
  std::ifstream jf(dir / "r.json");
  const nlohmann::json j = nlohmann::json::parse(jf);
  for (const char* key : {"commit", "gpu", "implementation", "baseline", "generator", "seed", "fixed_cost_us", "score",
                          "score_ci", "shapes", "loads"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["shapes"].size(), 10u);
  EXPECT_EQ(j["loads"].size(), 1u);
  EXPECT_GT(j["fixed_cost_us"].get<double>(), 0.0);
  EXPECT_GT(j["score"].get<double>(), 0.0);
  for (const auto& s : j["shapes"]) {
    EXPECT_TRUE(s["timed"].get<bool>());
    EXPECT_TRUE(s["correct"].get<bool>());
    EXPECT_GT(s["impl_us"].get<double>(), 0.0);
    EXPECT_GT(s["ceiling_us"].get<double>(), 0.0);
    EXPECT_LE(s["speedup_ci"][0].get<double>(), s["speedup"].get<double>());
  }
  EXPECT_TRUE(std::filesystem::file_size(dir / "r.md") > 100);
  EXPECT_TRUE(std::filesystem::file_size(dir / "r.svg") > 100);
  std::filesystem::remove_all(dir);
}
#endif
