// Launchers of the judge's own kernels (generate.cu, reference.cu, bench_kernels.cu, baseline_cast.cu). Host
// code calls only these; buffers are raw device pointers, BF16 is passed as uint16_t bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "check.hpp"
#include "gen.hpp"

namespace solgemm::judge::kernels {

// generate.cu: W (rows x spec.k, FP32 when spec.fp32 else BF16) and x (m x k BF16) from gen.hpp.
void generate_weights(const gen::WeightSpec& spec, int64_t rows, void* d_W, cudaStream_t s);
void generate_x(uint64_t seed, int64_t m, int64_t k, uint16_t* d_x, cudaStream_t s);

// reference.cu: ref[i][n] = sum_k x[i][k] * W[n][k] in FP64 (W BF16 or FP32), for n < rows; and per output row
// the squared error against ref, the squared norm of ref, and the non-finite elements (RowError, check.hpp).
void reference_fp64(const void* d_W, bool w_fp32, const uint16_t* d_x, int64_t m, int64_t rows, int64_t k,
                    double* d_ref, cudaStream_t s);
void row_errors(const void* d_out, bool out_fp32, const double* d_ref, int64_t m, int64_t rows,
                RowError* d_rows, cudaStream_t s);

// bench_kernels.cu: the cold-L2 flush (reads `bytes`), the streaming-read kernel of the practical ceiling
// (16-byte ld.global.nc, `blocks` x `threads`), and an empty kernel (the fixed cost of a graph replay).
void flush_l2(const void* d_buf, size_t bytes, unsigned* d_sink, int sms, cudaStream_t s);
void stream_read(const void* d_buf, size_t bytes, int blocks, int threads, unsigned* d_sink, cudaStream_t s);
void empty_kernel(cudaStream_t s);

// baseline_cast.cu: y = float(x), n elements (what torch's x.float() does before the router's SGEMM).
void bf16_to_f32(const uint16_t* d_x, float* d_y, int64_t n, cudaStream_t s);

}  // namespace solgemm::judge::kernels
