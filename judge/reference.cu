// The judge's oracle: the FP64 product of the same BF16 x and the stored W (BF16 or FP32), and the per-row error
// sums of an output against it (the rules are applied on the host, check.cpp).
//
// Reference GEMM: a plain shared-memory tiled kernel in double precision on CUDA cores. Tile: 64 tokens x 64
// rows per CTA, 256 threads each computing 4 x 4, K in steps of 16. No speed goal: one check of the largest
// shape (1000 x 8192 x 4096) is ~67 GFLOP, a few ms.
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"

namespace solgemm::judge::kernels {
namespace {

constexpr int kTM = 64, kTN = 64, kTK = 16;

__device__ inline double w_at(const uint16_t* w, int64_t i) { return gen::bf16_f32(w[i]); }
__device__ inline double w_at(const float* w, int64_t i) { return w[i]; }

template <typename WT>
__global__ void __launch_bounds__(256) ref_kernel(const WT* __restrict__ W, const uint16_t* __restrict__ x,
                                                  double* __restrict__ ref, int64_t m, int64_t rows, int64_t k) {
  __shared__ double xs[kTK][kTM + 1];  // (K, tokens)
  __shared__ double ws[kTK][kTN + 1];  // (K, rows)
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kTM, n0 = static_cast<int64_t>(blockIdx.x) * kTN;
  double acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kTK) {
    for (int e = tid; e < kTM * kTK; e += 256) {
      const int r = e / kTK, c = e % kTK;
      const int64_t gk = k0 + c;
      xs[c][r] = (m0 + r < m && gk < k) ? static_cast<double>(gen::bf16_f32(x[(m0 + r) * k + gk])) : 0.0;
      ws[c][r] = (n0 + r < rows && gk < k) ? w_at(W, (n0 + r) * k + gk) : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < kTK; ++c) {
      double a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = xs[c][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = ws[c][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t gi = m0 + ty + 16 * i, gn = n0 + tx + 16 * j;
      if (gi < m && gn < rows) ref[gi * rows + gn] = acc[i][j];
    }
}

__device__ inline double out_at(const uint16_t* o, int64_t i) { return gen::bf16_f32(o[i]); }
__device__ inline double out_at(const float* o, int64_t i) { return o[i]; }

// One CTA per output row: error sums over the row (block reduction in shared memory).
template <typename OT>
__global__ void __launch_bounds__(256) row_error_kernel(const OT* __restrict__ out, const double* __restrict__ ref,
                                                        int64_t rows, RowError* __restrict__ res) {
  __shared__ double s_err[256], s_ref[256];
  __shared__ unsigned long long s_bad[256];
  __shared__ long long s_first[256];
  const int64_t row = blockIdx.x;
  double err2 = 0, ref2 = 0;
  unsigned long long bad = 0;
  long long first = -1;
  for (int64_t n = threadIdx.x; n < rows; n += blockDim.x) {
    const double o = out_at(out, row * rows + n), r = ref[row * rows + n];
    ref2 += r * r;
    if (!isfinite(o)) {
      if (first < 0) first = n;
      ++bad;
    } else {
      err2 += (o - r) * (o - r);
    }
  }
  const int t = threadIdx.x;
  s_err[t] = err2;
  s_ref[t] = ref2;
  s_bad[t] = bad;
  s_first[t] = first;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (t < w) {
      s_err[t] += s_err[t + w];
      s_ref[t] += s_ref[t + w];
      s_bad[t] += s_bad[t + w];
      const long long a = s_first[t], b = s_first[t + w];
      s_first[t] = a < 0 ? b : (b < 0 ? a : (a < b ? a : b));
    }
    __syncthreads();
  }
  if (t == 0) res[row] = RowError{s_err[0], s_ref[0], s_bad[0], s_first[0]};
}

}  // namespace

void reference_fp64(const void* d_W, bool w_fp32, const uint16_t* d_x, int64_t m, int64_t rows, int64_t k,
                    double* d_ref, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>((rows + kTN - 1) / kTN), static_cast<unsigned>((m + kTM - 1) / kTM));
  if (w_fp32)
    ref_kernel<<<grid, 256, 0, s>>>(static_cast<const float*>(d_W), d_x, d_ref, m, rows, k);
  else
    ref_kernel<<<grid, 256, 0, s>>>(static_cast<const uint16_t*>(d_W), d_x, d_ref, m, rows, k);
  cuda_check(cudaGetLastError(), "launching the FP64 reference");
}

void row_errors(const void* d_out, bool out_fp32, const double* d_ref, int64_t m, int64_t rows, RowError* d_rows,
                cudaStream_t s) {
  if (out_fp32)
    row_error_kernel<<<static_cast<unsigned>(m), 256, 0, s>>>(static_cast<const float*>(d_out), d_ref, rows, d_rows);
  else
    row_error_kernel<<<static_cast<unsigned>(m), 256, 0, s>>>(static_cast<const uint16_t*>(d_out), d_ref, rows,
                                                              d_rows);
  cuda_check(cudaGetLastError(), "launching the error sums");
}

}  // namespace solgemm::judge::kernels
