// cuBLAS / cuBLASLt plumbing shared by the cuBLASLt benches (lt_search, lt_pair): handles bound to a stream with the
// judge baseline's 32 MB workspace, the baseline's call (cublasGemmEx as torch's F.linear makes it), and the cuBLASLt
// description of the same product, out^T (rows x m, column-major) = W (rows x k, row-major) x^T.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <cstdio>
#include <cstdlib>

#include "bench_util.cuh"

namespace bench {

struct LtBlas {
  cublasHandle_t h = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* ws = nullptr;
  size_t ws_bytes = size_t{32} << 20;
  explicit LtBlas(cudaStream_t s) {
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "bench: cannot create the cuBLAS handles\n");
      std::exit(1);
    }
    CK(cudaMalloc(&ws, ws_bytes));
    cublasSetStream(h, s);
    cublasSetWorkspace(h, ws, ws_bytes);
  }
  LtBlas(const LtBlas&) = delete;
  LtBlas& operator=(const LtBlas&) = delete;
  // The baseline: cublasGemmEx, BF16 in and out, FP32 compute, default algorithm.
  bool gemm_default(int64_t rows, int m, int64_t k, const __nv_bfloat16* w, const __nv_bfloat16* x,
                    __nv_bfloat16* out) const {
    const float one = 1.f, zero = 0.f;
    return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), m, static_cast<int>(k), &one, w,
                        CUDA_R_16BF, static_cast<int>(k), x, CUDA_R_16BF, static_cast<int>(k), &zero, out, CUDA_R_16BF,
                        static_cast<int>(rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
  }
};

// The cuBLASLt matmul description and layouts of one (rows, m, k) problem.
struct LtGemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtGemm(int64_t rows, int m, int64_t k) {
    cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n));
    cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, k, rows, k);
    cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, k, m, k);
    cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, rows, m, rows);
  }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;
  ~LtGemm() {
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(op);
  }
  // The heuristic's first `n` configurations within the workspace (how many were found).
  int heuristic(cublasLtHandle_t lt, size_t ws_bytes, int n, cublasLtMatmulHeuristicResult_t* out) const {
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    uint64_t wsb = ws_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb));
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, c, c, pref, n, out, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    return found;
  }
  // Whether cuBLASLt accepts configuration `algo` for this problem within the workspace.
  bool usable(cublasLtHandle_t lt, const cublasLtMatmulAlgo_t& algo, size_t ws_bytes) const {
    cublasLtMatmulHeuristicResult_t r{};
    return cublasLtMatmulAlgoCheck(lt, op, a, b, c, c, &algo, &r) == CUBLAS_STATUS_SUCCESS &&
           r.workspaceSize <= ws_bytes;
  }
};

}  // namespace bench
