// Vendor family: cuBLAS on the raw BF16 weights.
//
// Idea: at m > 64 the big layers approach the ridge (m = 256: 2 m N K FLOPs vs 2 N K bytes puts them at
// ~256 FLOP/byte, math-bound) and cuBLAS's tensor-core kernels are a sound floor to stand on until a family of
// ours beats them there. Called exactly like torch's F.linear: out^T (rows x m) = W (rows x K) * x^T.
#include <cublas_v2.h>
#include <fmt/format.h>

#include "kernels.hpp"

namespace solgemm::kernels {

void launch_vendor(void* handle, const void* W, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, int64_t k, cudaStream_t stream) {
  auto h = static_cast<cublasHandle_t>(handle);
  const float one = 1.f, zero = 0.f;
  cublasStatus_t st = cublasSetStream(h, stream);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(m),
                      static_cast<int>(k), &one, W, CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF,
                      static_cast<int>(k), &zero, out, CUDA_R_16BF, static_cast<int>(rows), CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Error(fmt::format("solgemm: cublasGemmEx failed ({}) for m={} rows={} K={}", cublasGetStatusString(st),
                            m, rows, k));
}

}  // namespace solgemm::kernels
