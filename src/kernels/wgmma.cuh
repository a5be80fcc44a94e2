// wgmma helpers shared by the wide (wide.cu) and stream (stream.cu) families: the shared-memory descriptor of a
// K-major 128B-swizzled tile, the fence / commit / wait of the async group, and (wgmma_ops.cuh, generated) the
// m64nNk16 BF16 instruction with A from shared memory or registers, B from shared memory.
#pragma once

#include <cstdint>

#include "wgmma_ops.cuh"

namespace solgemm::kernels {

// Descriptor of a K-major tile with 128B swizzle: rows of 64 BF16 (128 bytes), 8-row groups 1024 bytes apart;
// `addr` is the shared-memory address of the (row 0, k 16 j) start (j = 0..3: + 32 j bytes inside the atom).
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr) {
  return (static_cast<uint64_t>((addr & 0x3FFFF) >> 4)) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void wgmma_wait0() { wgmma_wait<0>(); }

// The accumulator fragment of an m64nNk16 wgmma: a thread's register 4 i + q holds row 16 (warp % 4) + lane / 4 +
// 8 (q >> 1) and token 8 i + 2 (lane % 4) + (q & 1). Calls f(row within the warp's 16, token, value) for each of
// the thread's N / 2 values.
template <int N, class F>
__device__ __forceinline__ void for_each_acc(const float (&acc)[N / 2], int lane, F&& f) {
  const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
  for (int i = 0; i < N / 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q) f(g + 8 * (q >> 1), 8 * i + 2 * t4 + (q & 1), acc[4 * i + q]);
}

}  // namespace solgemm::kernels
