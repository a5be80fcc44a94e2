// The baseline: what a PyTorch or SGLang user gets from torch.nn.functional.linear on CUDA (judge-spec.md
// "Baseline"). BF16 layers: one cublasGemmEx, BF16 A/B/C, CUBLAS_COMPUTE_32F, default algorithm, W as the
// transposed operand: in cuBLAS's column-major view out^T (rows x m) = W (K x rows)^T * x^T (K x m), i.e.
//   cublasGemmEx(h, OP_T, OP_N, rows, m, K, &1, W, K, x, K, &0, out, rows).
// Router (FP32 weights): x.float() (a cast kernel, inside the timed call), then cublasSgemm with the default
// math mode (TF32 off). Like torch, a fixed cuBLAS workspace (32 MiB) is set after every cublasSetStream, so
// the call can be captured into a CUDA graph without cuBLAS allocating.
#pragma once

#include <memory>

#include "impl.hpp"

namespace solgemm::judge {

std::unique_ptr<Implementation> make_cublas_baseline(int64_t max_m);

}  // namespace solgemm::judge
