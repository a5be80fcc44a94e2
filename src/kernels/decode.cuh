// Device decoders of the packed weight formats (include/solgemm/format.hpp, docs/format.md).
//
// One group = 16 rows x 64 k = four mma.m16n8k16 A fragments per lane (k steps s = 0..3, registers j = 0..3).
// GroupRegs<true> holds a lane's 48 bytes of a 12-bit group, GroupRegs<false> its 64 bytes of a 16-bit
// group; decode() turns them into a[s][j], BF16 pairs in A-fragment order (also wgmma's register-A layout).
// The per-register arithmetic lives in decode.hpp (host-testable); this file adds the loads and the patching.
#pragma once

#include <cstdint>

#include "decode.hpp"
#include "kernels.hpp"
#include "solgemm/format.hpp"

namespace solgemm::kernels {

__device__ __forceinline__ uint4 ld_stream16(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

template <bool kBits12>
struct GroupRegs;

// A lane's share of one group, from global memory (streaming loads) or from shared memory (plain loads).
template <>
struct GroupRegs<true> {
  uint4 lo01, lo23, hi;  // chunk 0: low bytes of k steps 0, 1; chunk 1: of 2, 3; chunk 2: high words
  __device__ __forceinline__ void load(const PackedView& w, int64_t row_tile, int64_t group, int lane) {
    const uint8_t* g = w.data + (row_tile * w.k_groups + group) * format::kBytes12 + lane * 16;
    lo01 = ld_stream16(g);
    lo23 = ld_stream16(g + 512);
    hi = ld_stream16(g + 1024);
  }
  __device__ __forceinline__ void load_shared(const uint8_t* group, int lane) {
    lo01 = *reinterpret_cast<const uint4*>(group + lane * 16);
    lo23 = *reinterpret_cast<const uint4*>(group + 512 + lane * 16);
    hi = *reinterpret_cast<const uint4*>(group + 1024 + lane * 16);
  }
  __device__ __forceinline__ void decode(const PackedView& w, uint32_t (&a)[4][4]) const {
    const uint32_t add = decode::base_add(w.base);
    const uint32_t low[4][2] = {{lo01.x, lo01.y}, {lo01.z, lo01.w}, {lo23.x, lo23.y}, {lo23.z, lo23.w}};
    const uint32_t high[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int s = 0; s < 4; ++s) decode::regs12(low[s][0], low[s][1], high[s], add, a[s]);
  }
};

template <>
struct GroupRegs<false> {
  uint4 r[4];  // chunk s: the four A registers of k step s, raw BF16 pairs
  __device__ __forceinline__ void load(const PackedView& w, int64_t row_tile, int64_t group, int lane) {
    const uint8_t* g = w.data + (row_tile * w.k_groups + group) * format::kBytes16 + lane * 16;
#pragma unroll
    for (int s = 0; s < 4; ++s) r[s] = ld_stream16(g + 512 * s);
  }
  __device__ __forceinline__ void load_shared(const uint8_t* group, int lane) {
#pragma unroll
    for (int s = 0; s < 4; ++s) r[s] = *reinterpret_cast<const uint4*>(group + 512 * s + lane * 16);
  }
  __device__ __forceinline__ void decode(const PackedView&, uint32_t (&a)[4][4]) const {
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      a[s][0] = r[s].x;
      a[s][1] = r[s].y;
      a[s][2] = r[s].z;
      a[s][3] = r[s].w;
    }
  }
};

// Replace the exception slots of one decoded 12-bit group (group `q` of its block, entries exc[e0 .. e1)) with
// their exact BF16 bits. The list is almost always empty; the loop is warp-uniform, the owning lane writes.
__device__ __forceinline__ void patch_exceptions(const uint32_t* __restrict__ exc, uint32_t e0, uint32_t e1, int q,
                                                 int lane, uint32_t (&a)[4][4]) {
  for (uint32_t e = e0; e < e1; ++e) {
    const uint32_t ent = __ldg(exc + e);
    const decode::ExcSlot slot = decode::exc_slot(ent);
    if (slot.group_in_block != q || slot.lane != lane) continue;
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (s == slot.step && j == slot.reg) a[s][j] = decode::patch_half(a[s][j], slot.half, ent & 0xFFFFu);
  }
}

}  // namespace solgemm::kernels
