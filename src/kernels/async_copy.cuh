// mbarrier and bulk-copy helpers (PTX ISA: mbarrier, cp.async.bulk), shared by the skinny family
// (skinny_family.cuh), the wide and stream families (TMA) and the stream study (bench/stream_study.cu).
// Addresses are shared-memory (32-bit) ones.
#pragma once

#include <cstdint>

namespace solgemm::kernels::family {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Orders this thread's earlier generic-proxy accesses of shared memory (ld.shared, ldmatrix, st.shared) before later
// async-proxy accesses (cp.async.bulk, TMA) and back: needed before a slot that was read by plain loads is refilled by
// a bulk copy (perf-notes step 183).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Wait until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// TMA: the box of a 2-D tensor map at (c0 inner, c1 outer) into shared memory, counted on `bar`.
__device__ __forceinline__ void tma_2d(uint32_t dst, const void* map, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// TMA: the box of a 4-D tensor map at coordinates c0 (innermost) .. into shared memory, counted on `bar`; and the
// map's prefetch.
__device__ __forceinline__ void tma_4d(uint32_t dst, const void* map, int c0, int c1, int c2, int c3, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void prefetch_tensormap(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// One stage of a TMA-fed wgmma ring, issued by one warp: lane 0 announces the stage's `bytes` on `bar` and copies x's
// box at k = k0 (token 0) to `st`; lanes 0 .. n - 1 copy one weight group each, `group_bytes` from src(lane) to
// st + x_bytes + lane * group_bytes (the wide family's hi + lo source; bench/wide12_bench.cu).
template <class Src>
__device__ __forceinline__ void issue_stage(uint32_t bar, uint32_t st, const void* xmap, int k0, uint32_t bytes,
                                            uint32_t x_bytes, int lane, int n, uint32_t group_bytes, Src src) {
  if (lane == 0) {
    mbar_arrive_expect_tx(bar, bytes);
    tma_2d(st, xmap, k0, 0, bar);
  }
  __syncwarp();
  if (lane < n) bulk_g2s(st + x_bytes + lane * group_bytes, src(lane), group_bytes, bar);
}

}  // namespace solgemm::kernels::family
