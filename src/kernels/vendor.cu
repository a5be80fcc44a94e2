// Vendor family: cuBLAS on the raw BF16 weights, and on the router's BF16 hi + lo terms (FP32 out).
//
// Idea: at m > 64 the big layers approach the ridge (m = 256: 2 m N K FLOPs vs 2 N K bytes puts them at
// ~256 FLOP/byte, math-bound) and cuBLAS's tensor-core kernels are a sound floor to stand on until a family of
// ours beats them there. Called exactly like torch's F.linear: out^T (rows x m) = W (rows x K) * x^T.
// The router's FP32 weights: its two (three) BF16 terms as BF16 tensor-core GEMMs summed into the FP32 output,
// the same hi + lo arithmetic as the router family (2^-17 relative per weight), instead of an FP32 SGEMM.
#include <cublas_v2.h>
#include <fmt/format.h>

#include "kernels.hpp"

namespace solgemm::kernels {
namespace {

// cublasSetStream resets the handle's workspace to cuBLAS's own pool (which may allocate during graph
// capture): set ours again after it.
cublasStatus_t bind(const Blas& blas, cudaStream_t stream) {
  auto h = static_cast<cublasHandle_t>(blas.handle);
  cublasStatus_t st = cublasSetStream(h, stream);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetWorkspace(h, blas.workspace, blas.bytes);
  return st;
}

}  // namespace

void launch_vendor(const Blas& blas, const void* W, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, int64_t k, cudaStream_t stream) {
  auto h = static_cast<cublasHandle_t>(blas.handle);
  const float one = 1.f, zero = 0.f;
  cublasStatus_t st = bind(blas, stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(m),
                      static_cast<int>(k), &one, W, CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                      static_cast<int>(k), &zero, out, CUDA_R_16BF, static_cast<int>(rows), CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Error(fmt::format("solgemm: cublasGemmEx failed ({}) for m={} rows={} K={}", cublasGetStatusString(st),
                            m, rows, k));
}

void launch_vendor_hilo(const Blas& blas, const void* hi, const void* lo, const void* lo2, const __nv_bfloat16* x,
                        int64_t m, float* out, int64_t rows, int64_t k, cudaStream_t stream) {
  auto h = static_cast<cublasHandle_t>(blas.handle);
  const void* terms[3] = {hi, lo, lo2};
  const float alpha[3] = {1.f, 1.f / 256.f, 1.f / 65536.f};
  const float zero = 0.f, one = 1.f;
  cublasStatus_t st = bind(blas, stream);
  for (int t = 0; t < 3 && st == CUBLAS_STATUS_SUCCESS && terms[t] != nullptr; ++t)
    st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(m), static_cast<int>(k),
                      &alpha[t], terms[t], CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF, static_cast<int>(k),
                      t == 0 ? &zero : &one, out, CUDA_R_32F, static_cast<int>(rows), CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Error(fmt::format("solgemm: cublasGemmEx (hi + lo) failed ({}) for m={} rows={} K={}",
                            cublasGetStatusString(st), m, rows, k));
}

}  // namespace solgemm::kernels
