// Wide family: speculative-verify batches (m = 65..256), packed weights decoded into wgmma's A registers.
//
// Idea: at m = 128..256 a projection sits near the ridge (2 m N K FLOPs over ~1.5 N K bytes at 12 bits:
// ~170-340 FLOP/byte against the H200's ~206), so both the bytes and the tensor cores matter. The packed
// format's groups are already in mma A-fragment order, and wgmma.m64nNk16 with A in registers uses that same
// per-warp fragment layout: each of the four warps of a warpgroup decodes its own 16 weight rows straight
// into the A operand (no shared-memory round trip for weights, 12 bits per weight from HBM), while x (the B
// operand, K-major) streams through a 128B-swizzled shared-memory ring with cp.async.
//
//   CTA = one warpgroup: 64 weight rows (4 row tiles) x kTok tokens, a K range; grid = row blocks x token
//   chunks x split; the `split` CTAs that share an output tile form a thread-block cluster and reduce their
//   FP32 partials through distributed shared memory in a fixed rank order (deterministic, no workspace, no
//   counters: graph-safe). Rounded to BF16 once.
//
// Roofline (H200): pooler m = 128: 8.6 GFLOP -> 8.7 us at 989 TFLOP/s; 50 MB at 12 bits -> 11 us at 4.6 TB/s.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include "decode.cuh"
#include "kernels.hpp"

namespace solgemm::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kTok = 128;                    // tokens per CTA (wgmma N)
constexpr int kStages = 4;                   // x ring depth
constexpr int kXTileBytes = kTok * 128;      // (kTok tokens, 64 k) BF16, 128 B per token row, swizzled
constexpr int kThreads = 128;
constexpr int kRedBytes = 64 * kTok * 4;     // (64 rows, kTok tokens) FP32 partials
constexpr int kSmem = (kStages * kXTileBytes > kRedBytes ? kStages * kXTileBytes : kRedBytes) + 1024;

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy global -> shared; src_bytes < 16 zero-fills the rest (0: all zeros, nothing read).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// x tile (kTok tokens, 64 k) into a 128B-swizzled K-major tile: 16-byte chunk c of token row r lands at
// chunk c ^ (r & 7) of that row. Tokens >= m and k >= K are zero-filled (x is never read out of bounds).
__device__ __forceinline__ void load_x_tile(uint32_t tile, const __nv_bfloat16* __restrict__ x, int64_t m,
                                            int64_t k, int64_t tok0, int64_t k0) {
  for (int i = threadIdx.x; i < kTok * 8; i += kThreads) {
    const int r = i >> 3, c = i & 7;
    const int64_t tok = tok0 + r, kk = k0 + 8 * c;
    int bytes = 0;
    const __nv_bfloat16* src = x;
    if (tok < m && kk < k) {
      const int64_t left = k - kk;
      bytes = left >= 8 ? 16 : static_cast<int>(left) * 2;
      src = x + tok * k + kk;
    }
    cp_async16(tile + r * 128 + ((c ^ (r & 7)) << 4), src, bytes);
  }
}

// wgmma shared-memory descriptor: K-major, 128B swizzle, 8-row groups 1024 B apart.
__device__ __forceinline__ uint64_t x_desc(uint32_t addr) {
  return (static_cast<uint64_t>((addr & 0x3FFFF) >> 4)) | (uint64_t{1} << 16) | (uint64_t{1024 >> 4} << 32) |
         (uint64_t{1} << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

// D(64 x 128) += A(64 x 16, registers) * B(16 x 128, shared memory descriptor).
__device__ __forceinline__ void wgmma_m64n128(float (&d)[64], const uint32_t (&a)[4], uint64_t desc) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

template <bool kBits12>
__global__ void __launch_bounds__(kThreads, 1)
    wide_kernel(const PackedView w, const __nv_bfloat16* __restrict__ x, int64_t m, __nv_bfloat16* __restrict__ out,
                int64_t rows, int split) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t smem0 = smem_addr(smem);

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rank = static_cast<int>(blockIdx.x) % split;             // K slice (cluster rank)
  const int64_t row_block = blockIdx.x / split;                       // 64 weight rows
  const int64_t tok0 = static_cast<int64_t>(blockIdx.y) * kTok;
  const int64_t row_tile = row_block * 4 + warp;                      // this warp's 16 rows
  const bool tile_ok = row_tile < w.row_tiles;
  const int64_t g_begin = w.k_groups * rank / split, g_end = w.k_groups * (rank + 1) / split;
  const int n_iter = static_cast<int>(g_end - g_begin);

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;

  // Prologue: the first kStages - 1 x tiles.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_iter) load_x_tile(smem0 + s * kXTileBytes, x, m, w.k, tok0, (g_begin + s) * 64);
    cp_async_commit();
  }
  GroupRegs<kBits12> next;
  if (tile_ok && n_iter > 0) next.load(w, row_tile, g_begin, lane);

  for (int it = 0; it < n_iter; ++it) {
    cp_async_wait<kStages - 2>();
    __syncthreads();  // tile `it` visible to all; every warp is done with tile it - 1 (its stage is free)
    {
      const int nt = it + kStages - 1;
      if (nt < n_iter) load_x_tile(smem0 + (nt % kStages) * kXTileBytes, x, m, w.k, tok0, (g_begin + nt) * 64);
      cp_async_commit();
    }
    const GroupRegs<kBits12> cur = next;
    if (tile_ok && it + 1 < n_iter) next.load(w, row_tile, g_begin + it + 1, lane);
    uint32_t a[4][4];
    if (tile_ok) {
      cur.decode(w, a);
      patch_exceptions<kBits12>(w, row_tile, g_begin + it, lane, a);
    } else {
#pragma unroll
      for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) a[s][j] = 0u;
    }
    const uint32_t tile = smem0 + (it % kStages) * kXTileBytes;
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) wgmma_m64n128(acc, a[s], x_desc(tile + 32 * s));
    wgmma_commit();
    wgmma_wait0();
  }
  cp_async_wait<0>();
  __syncthreads();  // the x ring is dead from here: its space holds the FP32 partials

  // Accumulator fragment: n8 block i, reg 4i + q -> row g + 8 * (q >> 1), token 8i + 2t + (q & 1).
  const int g = lane >> 2, t = lane & 3;
  float* red = reinterpret_cast<float*>(smem);  // (64 rows, kTok tokens)
  if (split == 1) {
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t row = row_tile * 16 + g + 8 * (q >> 1), tok = tok0 + 8 * i + 2 * t + (q & 1);
        if (tile_ok && row < rows && tok < m) out[tok * rows + row] = __float2bfloat16_rn(acc[4 * i + q]);
      }
    return;
  }
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      red[(warp * 16 + g + 8 * (q >> 1)) * kTok + 8 * i + 2 * t + (q & 1)] = acc[4 * i + q];
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  // Rank r finishes rows [64 r / split, 64 (r + 1) / split) of the tile, summing ranks 0..split-1 in order.
  const int r0 = 64 * rank / split, r1 = 64 * (rank + 1) / split;
  for (int e = threadIdx.x; e < (r1 - r0) * kTok; e += kThreads) {
    const int lr = r0 + e / kTok, tk = e % kTok;
    float s = 0.f;
    for (int q = 0; q < split; ++q) s += cluster.map_shared_rank(red, q)[lr * kTok + tk];
    const int64_t row = row_block * 64 + lr, tok = tok0 + tk;
    if (row < rows && tok < m) out[tok * rows + row] = __float2bfloat16_rn(s);
  }
  cluster.sync();  // nobody leaves while a peer still reads its shared memory
}

template <bool kBits12>
void launch(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
            int64_t rows, cudaStream_t stream) {
  static const bool attr_ok = [] {
    return cudaFuncSetAttribute(wide_kernel<kBits12>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) ==
           cudaSuccess;
  }();
  if (!attr_ok) throw Error("solgemm: wide kernel: cannot set its shared-memory size");
  const int split = cfg.split_k;
  const int64_t row_blocks = (rows + 63) / 64;
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(static_cast<unsigned>(row_blocks * split), static_cast<unsigned>((m + kTok - 1) / kTok), 1);
  lc.blockDim = dim3(kThreads, 1, 1);
  lc.dynamicSmemBytes = kSmem;
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(split);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&lc, wide_kernel<kBits12>, w, x, m, out, rows, split);
  if (e != cudaSuccess)
    throw Error(fmt::format("solgemm: wide kernel launch (m={}, rows={}, split={}): {}", m, rows, split,
                            cudaGetErrorString(e)));
}

}  // namespace

void launch_wide(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                 int64_t rows, cudaStream_t stream) {
  if (cfg.split_k < 1 || cfg.split_k > 8) throw Error(fmt::format("solgemm: wide kernel: split {} not in 1..8", cfg.split_k));
  if (w.bits12)
    launch<true>(cfg, w, x, m, out, rows, stream);
  else
    launch<false>(cfg, w, x, m, out, rows, stream);
}

}  // namespace solgemm::kernels
