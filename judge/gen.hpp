// The judge's data, element by element (judge-spec.md "Data"). Every value is a pure function of (seed, stream,
// position) through a counter-based hash (splitmix64), so the GPU kernels (generate.cu) and the host copies
// used by the tests (generators.cpp) compute the same data, in any order, with any launch shape.
// Compiled as CUDA (host + device) and as plain C++17.
//
// Weight generators (values returned as FP32 bits; for BF16 layers the low 16 bits are zero, i.e. BF16 values):
//   normal       N(0, 0.02^2); rounded to BF16 for BF16 layers, full FP32 for the router (the default).
//   llm_like     like real checkpoints: per-row scale 0.02 * 2^(0.75 N(0,1)) (rows spread over ~3 octaves),
//                and ~1/512 of the columns ("outlier input channels") 16x larger.
//   adversarial  for the lossless codes: N(0, 0.02^2) plus "wild" weights: whole 16 x 256 blocks (1 in 8192)
//                and scattered elements (1 in 2048). Wild = 1/4 zeros (+-0), 1/8 subnormals, 5/8 random sign
//                and mantissa with the exponent uniform over 2^-126 .. 2^100. About 0.06% exceptions: close to,
//                usually under, the 12-bit code's fallback threshold (format.hpp, 1/1024), so the exception
//                path is exercised at its heaviest.
//   adversarial_dense  1 weight in 8 wild: forces the 16-bit fallback; exponents over the whole range.
// NaN and Inf are never generated: they make the FP64 reference (and any relative error) meaningless. Exponents
// stop at 2^100 so that sums of 8192 products stay finite in FP32 and BF16.
//
// x (BF16, N(0,1)): row i is a probe row when i % 8 == 0: one nonzero entry +-2^e, e in [-4, 4], at a column
// picked by the hash; its output row is an exact scaled copy of one weight column. x does not depend on m
// (row i is the same at every m), so rows can be compared across batch sizes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__CUDACC__)
#define SOLGEMM_JUDGE_HD __host__ __device__ inline
#else
#define SOLGEMM_JUDGE_HD inline
#endif

namespace solgemm::judge::gen {

enum class Kind : int { normal = 0, llm_like = 1, adversarial = 2, adversarial_dense = 3 };

// ---- counter-based randomness ----
SOLGEMM_JUDGE_HD uint64_t mix64(uint64_t z) {  // splitmix64 finaliser: a bijection on 64 bits
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// 64 random bits at `index` of the sequence (seed, stream).
SOLGEMM_JUDGE_HD uint64_t hash(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream)) ^ index);
}
// A standard normal from 64 random bits (Box-Muller, one of the pair). |value| < 6. Host and device may
// differ in the last bit of a value (libm vs CUDA math); each side is deterministic.
SOLGEMM_JUDGE_HD float normal(uint64_t h) {
  const float u1 = (static_cast<float>(h & 0xFFFFFFu) + 0.5f) * (1.0f / 16777216.0f);  // (0, 1)
  const float u2 = static_cast<float>((h >> 40) & 0xFFFFFFu) * (1.0f / 16777216.0f);  // [0, 1)
#if defined(__CUDA_ARCH__)
  const float c = cospif(2.0f * u2);  // no slow range reduction (cosf would spill to local memory)
#else
  const float c = std::cos(6.28318530718f * u2);
#endif
  return sqrtf(-2.0f * logf(u1)) * c;
}

// ---- bit helpers ----
SOLGEMM_JUDGE_HD uint32_t f32_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
SOLGEMM_JUDGE_HD float bits_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
// FP32 -> BF16 bits, round to nearest even (inputs here are finite).
SOLGEMM_JUDGE_HD uint16_t bf16_rn(float f) {
  const uint32_t u = f32_bits(f);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
SOLGEMM_JUDGE_HD float bf16_f32(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

// ---- weights ----
struct WeightSpec {
  Kind kind = Kind::normal;
  uint64_t seed = 0;
  uint32_t layer = 0;  // index in layers(): decorrelates the layers
  int64_t k = 0;       // columns (row-major N x K)
  bool fp32 = false;   // router: full FP32 values
};

// Hash streams, per layer: stream(layer, purpose).
SOLGEMM_JUDGE_HD uint64_t stream_of(uint32_t layer, uint32_t purpose) { return (uint64_t{layer} << 8) | purpose; }
enum : uint32_t { kValues = 1, kRowScale = 2, kOutlierCol = 3, kWildBlock = 4, kWildElem = 5, kWildValue = 6 };

// A "wild" weight from 64 random bits: zero, subnormal, or any exponent 2^-126 .. 2^100 (never Inf or NaN).
SOLGEMM_JUDGE_HD uint32_t wild_bits(uint64_t h, bool fp32) {
  const uint32_t sign = static_cast<uint32_t>(h >> 63) << 31;
  const uint32_t cls = static_cast<uint32_t>(h & 7u);
  const uint32_t mant = fp32 ? static_cast<uint32_t>((h >> 8) & 0x7FFFFFu)
                             : static_cast<uint32_t>((h >> 8) & 0x7Fu) << 16;
  if (cls < 2) return sign;                                                    // +-0
  if (cls == 2) return sign | (mant ? mant : (fp32 ? 1u : 1u << 16));         // subnormal
  const uint32_t e = 1u + static_cast<uint32_t>((h >> 32) % 227u);             // exponent field 1 .. 227
  return sign | (e << 23) | mant;
}

// The weight W[r][c] as FP32 bits (BF16 layers: a BF16 value, low 16 bits zero).
SOLGEMM_JUDGE_HD uint32_t weight_bits(const WeightSpec& s, int64_t r, int64_t c) {
  const uint64_t idx = static_cast<uint64_t>(r) * static_cast<uint64_t>(s.k) + static_cast<uint64_t>(c);
  float v = 0.02f * normal(hash(s.seed, stream_of(s.layer, kValues), idx));
  if (s.kind == Kind::llm_like) {
    const float row_scale = exp2f(0.75f * normal(hash(s.seed, stream_of(s.layer, kRowScale), static_cast<uint64_t>(r))));
    const bool outlier = hash(s.seed, stream_of(s.layer, kOutlierCol), static_cast<uint64_t>(c)) % 512u == 0;
    v *= row_scale * (outlier ? 16.0f : 1.0f);
  } else if (s.kind == Kind::adversarial || s.kind == Kind::adversarial_dense) {
    bool wild;
    if (s.kind == Kind::adversarial) {
      const uint64_t kb = static_cast<uint64_t>((s.k + 255) / 256);
      const uint64_t block = static_cast<uint64_t>(r / 16) * kb + static_cast<uint64_t>(c / 256);
      wild = hash(s.seed, stream_of(s.layer, kWildBlock), block) % 8192u == 0 ||
             hash(s.seed, stream_of(s.layer, kWildElem), idx) % 2048u == 0;
    } else {
      wild = hash(s.seed, stream_of(s.layer, kWildElem), idx) % 8u == 0;
    }
    if (wild) return wild_bits(hash(s.seed, stream_of(s.layer, kWildValue), idx), s.fp32);
  }
  return s.fp32 ? f32_bits(v) : static_cast<uint32_t>(bf16_rn(v)) << 16;
}

// The BF16 bits of a BF16 layer's `rows` x s.k weights, row-major, on the host (the benches' copy of the judge's data).
inline std::vector<uint16_t> bf16_weights(const WeightSpec& s, int64_t rows) {
  std::vector<uint16_t> w(static_cast<size_t>(rows * s.k));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < s.k; ++c) w[static_cast<size_t>(r * s.k + c)] = static_cast<uint16_t>(weight_bits(s, r, c) >> 16);
  return w;
}

// ---- x ----
enum : uint64_t { kXValues = 0xA11CEull, kXProbe = 0xB0B0ull };

// The probe row i (i % 8 == 0): its column and its BF16 value +-2^e.
struct Probe {
  int64_t col;
  int e;
  uint16_t bits;
};
SOLGEMM_JUDGE_HD Probe probe_of(uint64_t seed, int64_t k, int64_t i) {
  const uint64_t h = hash(seed, kXProbe, static_cast<uint64_t>(i));
  Probe p;
  p.col = static_cast<int64_t>(h % static_cast<uint64_t>(k));
  p.e = static_cast<int>((h >> 32) % 9u) - 4;
  p.bits = static_cast<uint16_t>(((h >> 48) & 1u) << 15 | static_cast<uint32_t>(127 + p.e) << 7);
  return p;
}

// x[i][c] as BF16 bits (x is m x k; the value does not depend on m).
SOLGEMM_JUDGE_HD uint16_t x_bits(uint64_t seed, int64_t k, int64_t i, int64_t c) {
  if (i % 8 == 0) {
    const Probe p = probe_of(seed, k, i);
    return c == p.col ? p.bits : uint16_t{0};
  }
  return bf16_rn(normal(hash(seed, kXValues, static_cast<uint64_t>(i) * static_cast<uint64_t>(k) + static_cast<uint64_t>(c))));
}

}  // namespace solgemm::judge::gen
