// Reference kernel family: a plain shared-memory tiled GEMM on CUDA cores, FP32 accumulation.
//
// Idea: out tile (64 tokens x 64 rows) per CTA, 256 threads each computing 4 x 4, K in steps of 32.
// Roofline: none sought. This is the first entry of the plan table for every shape: correct for any m >= 1,
// any N, K, BF16 or FP32 weights. Faster families replace it shape range by shape range (docs/kernels.md).
#include <cuda_bf16.h>

#include "kernels.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::kernels {
namespace {

constexpr int kTM = 64, kTN = 64, kTK = 32;

__device__ inline float load_w(const __nv_bfloat16* w, int64_t i) { return __bfloat162float(w[i]); }
__device__ inline float load_w(const float* w, int64_t i) { return w[i]; }
__device__ inline void store_out(__nv_bfloat16* o, int64_t i, float v) { o[i] = __float2bfloat16_rn(v); }
__device__ inline void store_out(float* o, int64_t i, float v) { o[i] = v; }

template <typename WT, typename OT>
__global__ void __launch_bounds__(256) reference_gemm(const WT* __restrict__ W,
                                                      const __nv_bfloat16* __restrict__ x, OT* __restrict__ out,
                                                      int64_t m, int64_t rows, int64_t k) {
  __shared__ float xs[kTK][kTM + 1];  // (K, tokens)
  __shared__ float ws[kTK][kTN + 1];  // (K, rows)
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kTN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kTK) {
    for (int e = tid; e < kTM * kTK; e += 256) {
      const int r = e / kTK, c = e % kTK;
      const int64_t gi = m0 + r, gk = k0 + c;
      xs[c][r] = (gi < m && gk < k) ? __bfloat162float(x[gi * k + gk]) : 0.f;
      const int64_t gn = n0 + r;
      ws[c][r] = (gn < rows && gk < k) ? load_w(W, gn * k + gk) : 0.f;
    }
    __syncthreads();
#pragma unroll 8
    for (int c = 0; c < kTK; ++c) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = xs[c][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = ws[c][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t gi = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
      if (gi < m && gn < rows) store_out(out, gi * rows + gn, acc[i][j]);
    }
}

}  // namespace

void launch_reference(DType wt, const void* W, const __nv_bfloat16* x, int64_t m, void* out, int64_t rows,
                      int64_t k, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((rows + kTN - 1) / kTN), static_cast<unsigned>((m + kTM - 1) / kTM));
  if (wt == DType::bf16)
    reference_gemm<<<grid, 256, 0, stream>>>(static_cast<const __nv_bfloat16*>(W), x,
                                             static_cast<__nv_bfloat16*>(out), m, rows, k);
  else
    reference_gemm<<<grid, 256, 0, stream>>>(static_cast<const float*>(W), x, static_cast<float*>(out), m,
                                             rows, k);
}

}  // namespace solgemm::kernels
