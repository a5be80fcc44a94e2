// Kernels that load the GPU around a call under test, and the bitwise comparison of its output: a race shows up only
// under some timing (perf-notes step 183). Shared by bench/race_probe.cu and the GPU test
// Skinny.RingDeterministicUnderConcurrentLoad (tests/test_gpu_skinny.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace solgemm::load {

// A bandwidth hog (run on a second stream, alongside): streams `n` uint4 from `p` (the sum kept through *sink).
__global__ void read_hog(const uint4* p, size_t n, unsigned* sink) {
  unsigned s = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    s ^= v.x ^ v.w;
  }
  if (s == 0x9E3779B9u) *sink = s;
}
// A cold L2 (run first, on the same stream): writes `n` uint4 of value v.
__global__ void write_fill(uint4* p, size_t n, unsigned v) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = make_uint4(v, v, v, v);
}
// Elements of out[0, n) that differ from gold, added to *cnt.
__global__ void count_diff(const uint16_t* out, const uint16_t* gold, size_t n, unsigned* cnt) {
  unsigned c = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    c += out[i] != gold[i];
  c = __reduce_add_sync(0xFFFFFFFFu, c);
  if ((threadIdx.x & 31) == 0 && c) atomicAdd(cnt, c);
}

}  // namespace solgemm::load
