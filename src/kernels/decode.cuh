// Device decoders of the packed weight formats (include/solgemm/format.hpp, docs/format.md).
//
// One group = 16 rows x 64 k = four mma.m16n8k16 A fragments per lane (k steps s = 0..3, registers j = 0..3).
// GroupRegs<true> holds a lane's 48 bytes of a 12-bit group, GroupRegs<false> its 64 bytes of a 16-bit
// group; decode() turns them into a[s][j], BF16 pairs in A-fragment order (also wgmma's register-A layout).
// 12-bit decode per register: SHF (rotate), LOP3 (mask), PRMT (merge with the low bytes), IADD (+ base).
#pragma once

#include <cstdint>

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

template <>
struct GroupRegs<true> {
  uint4 lo01, lo23, hi;  // chunk 0: low bytes of k steps 0, 1; chunk 1: of 2, 3; chunk 2: high words
  __device__ __forceinline__ void load(const PackedView& w, int64_t row_tile, int64_t group, int lane) {
    const uint8_t* g = w.data + (row_tile * w.k_groups + group) * format::kBytes12 + lane * 16;
    lo01 = ld_stream16(g);
    lo23 = ld_stream16(g + 512);
    hi = ld_stream16(g + 1024);
  }
  // Register j of a k step: low bytes of its two halves from `low` (bytes 0,1 for even j, 2,3 for odd j),
  // sign and exponent bits 3..1 from the high word rotated back by 4 j.
  template <int J>
  __device__ __forceinline__ static uint32_t pair(uint32_t low, uint32_t high, uint32_t base2) {
    const uint32_t h = __funnelshift_l(high, high, 4 * J) & format::kHiMask;
    return __byte_perm(low, h, (J & 1) ? 0x7352 : 0x7150) + base2;
  }
  __device__ __forceinline__ void decode(const PackedView& w, uint32_t (&a)[4][4]) const {
    const uint32_t base2 = static_cast<uint32_t>(w.base) * 0x00800080u;  // (base << 7) in both halves
    const uint32_t low[4][2] = {{lo01.x, lo01.y}, {lo01.z, lo01.w}, {lo23.x, lo23.y}, {lo23.z, lo23.w}};
    const uint32_t high[4] = {hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      a[s][0] = pair<0>(low[s][0], high[s], base2);
      a[s][1] = pair<1>(low[s][0], high[s], base2);
      a[s][2] = pair<2>(low[s][1], high[s], base2);
      a[s][3] = pair<3>(low[s][1], high[s], base2);
    }
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

// Replace the exception slots of one decoded 12-bit group with their exact BF16 bits. The block's entry list
// is almost always empty; the loop is warp-uniform, and only the owning lane writes (one select per slot).
template <bool kBits12>
__device__ __forceinline__ void patch_exceptions(const PackedView& w, int64_t row_tile, int64_t group, int lane,
                                                 uint32_t (&a)[4][4]) {
  if constexpr (kBits12) {
    const int64_t block = row_tile * w.k_blocks + group / format::kGroupsPerBlock;
    const uint32_t e0 = __ldg(w.exc_off + block), e1 = __ldg(w.exc_off + block + 1);
    const int q = static_cast<int>(group % format::kGroupsPerBlock);
    for (uint32_t e = e0; e < e1; ++e) {
      const uint32_t ent = __ldg(w.exc + e);
      const int pos = static_cast<int>(ent >> 16), row = pos / format::kBlockK, kk = pos % format::kBlockK;
      if (kk / format::kGroupK != q) continue;
      const int ks = (kk % format::kGroupK) / 16, k16 = kk % 16;
      const int owner = (row & 7) * 4 + (k16 & 7) / 2;
      const int reg = (row >> 3) | ((k16 >> 3) << 1), half = k16 & 1;
      if (owner != lane) continue;
      const uint32_t v = ent & 0xFFFFu;
#pragma unroll
      for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (s == ks && j == reg) a[s][j] = half ? (a[s][j] & 0x0000FFFFu) | (v << 16) : (a[s][j] & 0xFFFF0000u) | v;
    }
  } else {
    (void)w, (void)row_tile, (void)group, (void)lane, (void)a;
  }
}

}  // namespace solgemm::kernels
