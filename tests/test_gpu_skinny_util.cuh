// Helpers of the skinny and router GPU tests: counter-based random data on the GPU, an FP64 reference GEMM,
// NaN-poisoned outputs with a guard region, and the error measures. Every failure message carries the seed.
#pragma once

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "solgemm/format.hpp"
#include "solgemm/solgemm.hpp"
#include "testing.hpp"

namespace skt {

#define SKT_CK(x) ASSERT_EQ((x), cudaSuccess) << #x << ": " << cudaGetErrorString(cudaGetLastError())

__host__ __device__ inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// N(0, sigma) from a counter (Box-Muller on two hashed uniforms).
__device__ inline float gauss(uint64_t seed, uint64_t i, float sigma) {
  const uint64_t h = mix(seed * 0x632BE59BD9B4E019ull ^ mix(i));
  const float u1 = (static_cast<float>(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
  const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
  return sigma * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}

__global__ void gen_bf16(__nv_bfloat16* p, int64_t count, uint64_t seed, float sigma) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(gauss(seed, static_cast<uint64_t>(i), sigma));
}
__global__ void gen_f32(float* p, int64_t count, uint64_t seed, float sigma) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = gauss(seed, static_cast<uint64_t>(i), sigma);
}

__device__ inline double wval(const __nv_bfloat16* w, int64_t i) { return static_cast<double>(__bfloat162float(w[i])); }
__device__ inline double wval(const float* w, int64_t i) { return static_cast<double>(w[i]); }

// ref[i, n] = sum_k x[i, k] W[n, k] in FP64. Block (256) per (row n, 8 tokens); fixed-order block reduction.
template <class WT>
__global__ void ref_fp64(const __nv_bfloat16* x, const WT* w, double* ref, int64_t m, int64_t rows, int64_t k) {
  __shared__ double red[8][256];
  const int64_t n = blockIdx.x, i0 = static_cast<int64_t>(blockIdx.y) * 8;
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t kk = threadIdx.x; kk < k; kk += 256) {
    const double wv = wval(w, n * k + kk);
#pragma unroll
    for (int t = 0; t < 8; ++t)
      if (i0 + t < m) s[t] += wv * static_cast<double>(__bfloat162float(x[(i0 + t) * k + kk]));
  }
#pragma unroll
  for (int t = 0; t < 8; ++t) red[t][threadIdx.x] = s[t];
  __syncthreads();
  if (threadIdx.x < 8 && i0 + threadIdx.x < m) {
    double a = 0;
    for (int j = 0; j < 256; ++j) a += red[threadIdx.x][j];
    ref[(i0 + threadIdx.x) * rows + n] = a;
  }
}

template <class T>
struct Dev {
  T* p = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) {
    if (cudaMalloc(&p, count * sizeof(T) + 16) != cudaSuccess) p = nullptr;
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<T> get(size_t count) const {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
  std::vector<T> get() const { return get(n); }
  static std::vector<T> get_from(const T* d, size_t count) {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
  void put(const std::vector<T>& h) { cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice); }
};

// n x k weights N(0, sigma^2) into dw (counter-based: the same seed gives the same matrix), and their bits on the host.
// (Call it under ASSERT_NO_FATAL_FAILURE: a failed CUDA call ends the helper only.)
inline void gen_weights(__nv_bfloat16* dw, int64_t n, int64_t k, uint64_t seed, float sigma,
                        std::vector<uint16_t>* host) {
  gen_bf16<<<1024, 256>>>(dw, n * k, seed, sigma);
  SKT_CK(cudaDeviceSynchronize());
  *host = Dev<uint16_t>::get_from(reinterpret_cast<const uint16_t*>(dw), static_cast<size_t>(n * k));
}

inline double to_d(uint16_t b) { return static_cast<double>(solgemm::format::bf16_to_f32(b)); }
inline double to_d(float f) { return static_cast<double>(f); }
inline bool finite(uint16_t b) { return ((b >> 7) & 0xFF) != 0xFF; }
inline bool finite(float f) { return std::isfinite(f); }

// A NaN-poisoned output (every byte 0xFF before the call) as raw bits (BF16 or FP32): the entries of [0, used) that are
// not finite (unwritten, or NaN / Inf) and those of [used, end) that changed (written past m x rows).
struct PoisonCounts {
  size_t bad = 0, guard_bad = 0;
};
inline bool finite_bits(uint16_t b) { return finite(b); }
inline bool finite_bits(uint32_t b) { return ((b >> 23) & 0xFF) != 0xFF; }
template <class T>
PoisonCounts poison_counts(const std::vector<T>& raw, size_t used) {
  PoisonCounts c;
  for (size_t i = 0; i < used; ++i) c.bad += !finite_bits(raw[i]);
  for (size_t i = used; i < raw.size(); ++i) c.guard_bad += raw[i] != static_cast<T>(~T{0});
  return c;
}

// Probe rows: rows 0, 8, 16, ... of x hold one nonzero +-2^e (e in [-4, 4]) at column col[r / 8].
struct Probes {
  std::vector<int64_t> col;
  std::vector<int> e;
  std::vector<int> sign;
};

// x (m x K, N(0,1) BF16) on the GPU, then the probe rows written over it.
inline Probes make_x(__nv_bfloat16* x, int64_t m, int64_t k, uint64_t seed, const std::vector<int64_t>* cols = nullptr,
                     int probe_every = 8) {
  gen_bf16<<<1024, 256>>>(x, m * k, seed ^ 0x5EEDull, 1.0f);
  Probes pr;
  std::vector<uint16_t> row(static_cast<size_t>(k));
  for (int64_t r = 0, i = 0; r < m; r += probe_every, ++i) {
    const uint64_t h = mix(seed * 31 + static_cast<uint64_t>(r));
    const int64_t c = cols ? (*cols)[static_cast<size_t>(i) % cols->size()] : static_cast<int64_t>(h % k);
    const int e = static_cast<int>((h >> 32) % 9) - 4;
    const int sg = (h >> 40) & 1 ? -1 : 1;
    std::fill(row.begin(), row.end(), uint16_t{0});
    row[static_cast<size_t>(c)] = solgemm::format::f32_to_bf16_rn(std::ldexp(static_cast<float>(sg), e));
    cudaMemcpy(x + r * k, row.data(), k * 2, cudaMemcpyHostToDevice);
    pr.col.push_back(c);
    pr.e.push_back(e);
    pr.sign.push_back(sg);
  }
  cudaDeviceSynchronize();
  return pr;
}

// Relative L2 error of rows [r0, r1) of out (m x rows) against ref.
template <class OT>
double rel_l2(const std::vector<OT>& out, const std::vector<double>& ref, int64_t rows, int64_t r0, int64_t r1) {
  double num = 0, den = 0;
  for (int64_t i = r0 * rows; i < r1 * rows; ++i) {
    const double d = to_d(out[static_cast<size_t>(i)]) - ref[static_cast<size_t>(i)];
    num += d * d;
    den += ref[static_cast<size_t>(i)] * ref[static_cast<size_t>(i)];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline std::string seed_msg(uint64_t seed) { return "seed " + std::to_string(seed) + " (SOLGEMM_TEST_SEED)"; }

// Determinism and graph safety: one call captured into a graph, replayed 10 times over a NaN-poisoned out
// (total elements of T), each replay's first m x rows elements bitwise equal to the first replay's.
template <class T>
void expect_replays_equal(const solgemm::Weights& w, const void* x, Dev<T>& out, size_t total, int m, int64_t rows,
                          cudaStream_t st) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  SKT_CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  w.run(x, m, out.p, rows, st);
  SKT_CK(cudaStreamEndCapture(st, &g));
  SKT_CK(cudaGraphInstantiate(&ge, g, 0));
  std::vector<T> first;
  for (int rep = 0; rep < 10; ++rep) {
    SKT_CK(cudaMemset(out.p, 0xFF, total * sizeof(T)));
    SKT_CK(cudaGraphLaunch(ge, st));
    SKT_CK(cudaStreamSynchronize(st));
    const std::vector<T> o = out.get(static_cast<size_t>(m) * rows);
    if (rep == 0)
      first = o;
    else
      ASSERT_EQ(o, first) << "replay " << rep << " differs";
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
}

}  // namespace skt
