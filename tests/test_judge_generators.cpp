// CPU tests of the judge's data (gen.hpp through the host copies in generators.cpp): probe rows, determinism,
// and the properties each weight generator promises. Every message names the seed (SOLGEMM_TEST_SEED).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "device.hpp"
#include "generators.hpp"
#include "shapes.hpp"
#include "testing.hpp"

namespace sj = solgemm::judge;
namespace gen = solgemm::judge::gen;

namespace {

float as_f32(uint32_t bits) { return gen::bits_f32(bits); }
uint32_t exponent(uint32_t bits) { return (bits >> 23) & 0xFF; }

struct Moments {
  double mean = 0, sd = 0;
};
Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.sd += (x - m.mean) * (x - m.mean);
  m.sd = std::sqrt(m.sd / static_cast<double>(v.size()));
  return m;
}

}  // namespace

TEST(JudgeGenerators, ProbeRowsHoldOnePowerOfTwo) {
  const uint64_t seed = solgemm::testing::test_seed(1);
  for (int64_t k : {1024, 4096, 8192}) {
    const int64_t m = 130;
    const std::vector<uint16_t> x = sj::host_x(seed, m, k);
    std::set<int64_t> cols;
    std::set<int> exps;
    for (int64_t i = 0; i < m; i += 8) {
      int nonzero = 0;
      for (int64_t c = 0; c < k; ++c) {
        const uint16_t b = x[static_cast<size_t>(i * k + c)];
        if ((b & 0x7FFF) == 0) continue;
        ++nonzero;
        EXPECT_EQ(b & 0x7F, 0) << "probe row " << i << " col " << c << " is not a power of two; seed " << seed;
        const int e = ((b >> 7) & 0xFF) - 127;
        EXPECT_GE(e, -4) << "seed " << seed;
        EXPECT_LE(e, 4) << "seed " << seed;
        cols.insert(c);
        exps.insert(e);
      }
      EXPECT_EQ(nonzero, 1) << "probe row " << i << " (k " << k << "); seed " << seed;
    }
    EXPECT_GT(cols.size(), 10u) << "probe columns should vary; seed " << seed;
    EXPECT_GT(exps.size(), 4u) << "probe exponents should vary; seed " << seed;
  }
}

TEST(JudgeGenerators, XIsStandardNormalBf16) {
  const uint64_t seed = solgemm::testing::test_seed(2);
  const int64_t m = 64, k = 4096;
  const std::vector<uint16_t> x = sj::host_x(seed, m, k);
  std::vector<double> v;
  for (int64_t i = 0; i < m; ++i) {
    if (i % 8 == 0) continue;
    for (int64_t c = 0; c < k; ++c) v.push_back(gen::bf16_f32(x[static_cast<size_t>(i * k + c)]));
  }
  const Moments mo = moments(v);
  EXPECT_NEAR(mo.mean, 0.0, 0.01) << "seed " << seed;
  EXPECT_NEAR(mo.sd, 1.0, 0.01) << "seed " << seed;
  // x does not depend on m: row i is the same in an m = 9 and an m = 64 batch.
  const std::vector<uint16_t> x9 = sj::host_x(seed, 9, k);
  for (int64_t j = 0; j < 9 * k; ++j) ASSERT_EQ(x9[static_cast<size_t>(j)], x[static_cast<size_t>(j)]) << "seed " << seed;
}

TEST(JudgeGenerators, SameSeedSameDataOtherSeedOtherData) {
  const uint64_t seed = solgemm::testing::test_seed(3);
  EXPECT_EQ(sj::host_x(seed, 17, 512), sj::host_x(seed, 17, 512)) << "seed " << seed;
  EXPECT_NE(sj::host_x(seed, 17, 512), sj::host_x(seed + 1, 17, 512)) << "seed " << seed;
  for (gen::Kind kind : {gen::Kind::normal, gen::Kind::llm_like, gen::Kind::adversarial, gen::Kind::adversarial_dense}) {
    const auto a = sj::host_weights(kind, seed, 2, 32, 512);
    EXPECT_EQ(a, sj::host_weights(kind, seed, 2, 32, 512)) << "kind " << int(kind) << " seed " << seed;
    EXPECT_NE(a, sj::host_weights(kind, seed + 1, 2, 32, 512)) << "kind " << int(kind) << " seed " << seed;
    EXPECT_NE(a, sj::host_weights(kind, seed, 3, 32, 512)) << "layers must differ; kind " << int(kind);
  }
  // x seeds of the check and of the timing differ per input, m, layer and run seed.
  std::set<uint64_t> seeds;
  for (int l = 0; l < 5; ++l)
    for (int64_t m : {1, 8, 256})
      for (int i = 0; i < 3; ++i) {
        seeds.insert(sj::check_x_seed(seed, l, m, i));
        seeds.insert(sj::timing_x_seed(seed, l, m, i));
      }
  EXPECT_EQ(seeds.size(), 5u * 3 * 3 * 2);
}

TEST(JudgeGenerators, DefaultWeights) {
  const uint64_t seed = solgemm::testing::test_seed(4);
  const auto w = sj::host_weights(gen::Kind::normal, seed, 2, 64, 4096);  // pooler rows
  std::vector<double> v;
  for (uint32_t b : w) {
    EXPECT_EQ(b & 0xFFFF, 0u) << "BF16 layer weight not BF16; seed " << seed;
    v.push_back(as_f32(b));
  }
  const Moments mo = moments(v);
  EXPECT_NEAR(mo.mean, 0.0, 5e-4) << "seed " << seed;
  EXPECT_NEAR(mo.sd, 0.02, 4e-4) << "seed " << seed;
  // Router: full FP32, almost never BF16-representable.
  const auto r = sj::host_weights(gen::Kind::normal, seed, 4, 16, 8192);
  size_t bf16_like = 0;
  for (uint32_t b : r) bf16_like += (b & 0xFFFF) == 0;
  EXPECT_LT(bf16_like, r.size() / 100) << "seed " << seed;
}

TEST(JudgeGenerators, LlmLikeHasRowSpreadAndOutlierColumns) {
  const uint64_t seed = solgemm::testing::test_seed(5);
  const int64_t rows = 128, k = 4096;
  const auto w = sj::host_weights(gen::Kind::llm_like, seed, 0, rows, k);
  double lo = 1e9, hi = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> v;
    for (int64_t c = 0; c < k; ++c) v.push_back(as_f32(w[static_cast<size_t>(r * k + c)]));
    const double sd = moments(v).sd;
    lo = std::min(lo, sd);
    hi = std::max(hi, sd);
  }
  EXPECT_GT(hi / lo, 4.0) << "row scales should spread; seed " << seed;
  // Outlier columns: mean |w| over rows well above the median column.
  std::vector<double> col(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c) {
    double s = 0;
    for (int64_t r = 0; r < rows; ++r) s += std::fabs(as_f32(w[static_cast<size_t>(r * k + c)]));
    col[static_cast<size_t>(c)] = s / rows;
  }
  std::vector<double> sorted = col;
  std::sort(sorted.begin(), sorted.end());
  const double med = sorted[sorted.size() / 2];
  const auto outliers = std::count_if(col.begin(), col.end(), [&](double v) { return v > 6 * med; });
  EXPECT_GE(outliers, 2) << "seed " << seed;
  EXPECT_LE(outliers, 30) << "seed " << seed;
}

TEST(JudgeGenerators, AdversarialIsFiniteAndWild) {
  const uint64_t seed = solgemm::testing::test_seed(6);
  for (int layer : {2, 4}) {  // a BF16 layer and the FP32 router
    for (gen::Kind kind : {gen::Kind::adversarial, gen::Kind::adversarial_dense}) {
      const int64_t rows = 256, k = 8192;
      const auto w = sj::host_weights(kind, seed, layer, rows, k);
      size_t zeros = 0, sub = 0, huge = 0, tiny = 0, wild = 0;
      for (uint32_t b : w) {
        const uint32_t e = exponent(b);
        ASSERT_NE(e, 0xFFu) << "Inf/NaN generated; seed " << seed;
        ASSERT_LE(e, 127u + 100) << "exponent above 2^100; seed " << seed;
        if ((b & 0x7FFFFFFF) == 0) ++zeros;
        else if (e == 0) ++sub;
        if (e > 127 + 20) ++huge;
        if (e != 0 && e < 127 - 60) ++tiny;
        if (e > 127 || (b & 0x7FFFFFFF) == 0 || e < 127 - 20) ++wild;
        if (layer != 4) {
          ASSERT_EQ(b & 0xFFFF, 0u) << "BF16 layer weight not BF16; seed " << seed;
        }
      }
      EXPECT_GT(zeros, 0u) << "seed " << seed;
      EXPECT_GT(sub, 0u) << "seed " << seed;
      EXPECT_GT(huge, 0u) << "seed " << seed;
      EXPECT_GT(tiny, 0u) << "seed " << seed;
      const double rate = static_cast<double>(wild) / static_cast<double>(w.size());
      if (kind == gen::Kind::adversarial) {
        EXPECT_GT(rate, 2e-4) << "seed " << seed;
        EXPECT_LT(rate, 4e-3) << "seed " << seed;  // a wild block adds 0.2% on this size
      } else {
        EXPECT_NEAR(rate, 0.12, 0.01) << "seed " << seed;
      }
    }
  }
}

TEST(JudgeGenerators, Names) {
  EXPECT_EQ(sj::parse_generator("default").kind, gen::Kind::normal);
  EXPECT_EQ(sj::parse_generator("llm-like").kind, gen::Kind::llm_like);
  EXPECT_EQ(sj::parse_generator("adversarial").kind, gen::Kind::adversarial);
  EXPECT_EQ(sj::parse_generator("adversarial-dense").kind, gen::Kind::adversarial_dense);
  const sj::GeneratorSpec f = sj::parse_generator("safetensors:/tmp/w.safetensors");
  EXPECT_TRUE(f.from_file());
  EXPECT_EQ(f.safetensors_path, "/tmp/w.safetensors");
  EXPECT_EQ(f.str(), "safetensors:/tmp/w.safetensors");
  EXPECT_THROW(sj::parse_generator("gaussian"), sj::UsageError);
  EXPECT_THROW(sj::parse_generator("safetensors:"), sj::UsageError);
}
