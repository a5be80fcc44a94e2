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
//
// The family has two weight sources: the packed BF16 formats (wide_kernel, below) and the router's FP32 weights as
// BF16 hi + lo (wide_hilo_kernel, its own section further down: x by TMA, weights by bulk copies, K split across
// the whole GPU and reduced through the workspace in a fixed order).
#include <cooperative_groups.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "async_copy.cuh"
#include "decode.cuh"
#include "kernels.hpp"
#include "split_barrier.cuh"
#include "wgmma.cuh"

namespace solgemm::kernels {
namespace {

namespace cg = cooperative_groups;

// Configuration of one compiled variant: kTok tokens (wgmma N) x 64 * kWG weight rows per CTA.
template <bool kBits12_, int kTok_, int kWG_, int kStages_>
struct WideCfg {
  static constexpr bool kBits12 = kBits12_;
  static constexpr int kTok = kTok_;                                  // tokens per CTA
  static constexpr int kWG = kWG_;                                    // warpgroups (64 rows each)
  static constexpr int kStages = kStages_;                            // ring depth
  static constexpr int kThreads = 128 * kWG;
  static constexpr int kWarps = 4 * kWG;
  static constexpr int kGroupBytes = kBits12 ? format::kBytes12 : format::kBytes16;
  static constexpr int kXBytes = kTok * 128;                          // (kTok tokens, 64 k) BF16, swizzled
  static constexpr int kStageBytes = kXBytes + kWarps * kGroupBytes;  // x tile + one group per warp
  static constexpr int kRedBytes = 64 * kWG * kTok * 4;               // (rows, tokens) FP32 partials
  static constexpr int kRingBytes = kStages * kStageBytes;
  static constexpr int kSmem = (kRingBytes > kRedBytes ? kRingBytes : kRedBytes) + 1024;
  static constexpr int kAcc = kTok / 2;                               // FP32 accumulators per thread
  static_assert(kStageBytes % 1024 == 0, "x tiles must stay 1024-byte aligned (128B swizzle)");
};

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

// One ring stage: the x tile (kTok tokens, 64 k; 16-byte chunk c of token row r lands at chunk c ^ (r & 7) of
// that row: the 128B swizzle wgmma expects) and one packed group per warp, by cp.async from every thread.
// Each thread's chunks are fixed for the whole K loop, so their addresses are computed once (StageLoader) and
// a stage costs a handful of instructions per chunk. Tokens >= m and k >= K are zero-filled (x is never read
// out of bounds); so are row tiles past the matrix.
template <class C>
struct StageLoader {
  static constexpr int kX = C::kTok * 8 / C::kThreads;              // x chunks per thread
  static constexpr int kChunks = C::kGroupBytes / 16;
  static constexpr int kW = C::kWarps * kChunks / C::kThreads;      // weight chunks per thread
  static_assert(C::kTok * 8 % C::kThreads == 0 && C::kWarps * kChunks % C::kThreads == 0, "even split");
  static_assert(C::kThreads % 8 == 0, "a thread keeps its 16-byte column of x");

  const __nv_bfloat16* xsrc;   // token row (tok0 + tid / 8), column 8 (tid % 8), at group g_begin
  uint32_t xdst;               // offset of the first chunk in a stage (the others follow every 32 rows)
  uint32_t xrows_ok;           // bit j: row j of this thread is a real token
  int xcol;                    // k of this thread's chunk inside a group
  const uint8_t* wsrc[kW];
  uint32_t wdst[kW];
  uint32_t wok;                // bit j: chunk j belongs to a real row tile

  __device__ __forceinline__ StageLoader(const PackedView& w, const __nv_bfloat16* __restrict__ x, int64_t m,
                                         int64_t tok0, int64_t row_tile0, int64_t g_begin) {
    const int tid = threadIdx.x, r = tid >> 3, c = tid & 7;
    xcol = 8 * c;
    xdst = r * 128 + ((c ^ (r & 7)) << 4);
    xrows_ok = 0;
#pragma unroll
    for (int j = 0; j < kX; ++j) xrows_ok |= (tok0 + r + j * (C::kThreads / 8) < m ? 1u : 0u) << j;
    xsrc = (xrows_ok & 1) ? x + (tok0 + r) * w.k + g_begin * 64 + xcol : x;
    wok = 0;
#pragma unroll
    for (int j = 0; j < kW; ++j) {
      const int i = tid + j * C::kThreads, wp = i / kChunks, cc = i % kChunks;
      const int64_t rt = row_tile0 + wp;
      const bool ok = rt < w.row_tiles;
      wok |= (ok ? 1u : 0u) << j;
      wsrc[j] = w.data + ((ok ? rt : 0) * w.k_groups + g_begin) * C::kGroupBytes + cc * 16;
      wdst[j] = C::kXBytes + wp * C::kGroupBytes + cc * 16;
    }
  }

  // Stage for group g_begin + it.
  __device__ __forceinline__ void load(uint32_t stage, const PackedView& w, const __nv_bfloat16* __restrict__ x,
                                       int it, int64_t k_left) const {
    // k_left = K - (first k of this group): the K tail zero-fills (k_left >= 64 everywhere but the last group).
    const int64_t left = k_left - xcol;
    const int bytes = left >= 8 ? 16 : (left > 0 ? static_cast<int>(left) * 2 : 0);
#pragma unroll
    for (int j = 0; j < kX; ++j) {
      const bool ok = (xrows_ok >> j) & 1;
      const __nv_bfloat16* src = ok ? xsrc + it * 64 + static_cast<int64_t>(j) * (C::kThreads / 8) * w.k : x;
      cp_async16(stage + xdst + j * (C::kThreads / 8) * 128, src, ok ? bytes : 0);
    }
#pragma unroll
    for (int j = 0; j < kW; ++j)
      cp_async16(stage + wdst[j], wsrc[j] + static_cast<int64_t>(it) * C::kGroupBytes, ((wok >> j) & 1) ? 16 : 0);
  }
};

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    wide_kernel(const PackedView w, const __nv_bfloat16* __restrict__ x, int64_t m, __nv_bfloat16* __restrict__ out,
                int64_t rows, int split) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t smem0 = smem_addr(smem);
  __shared__ uint32_t exc_off[C::kWarps][2];

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rank = static_cast<int>(blockIdx.x) % split;             // K slice (cluster rank)
  const int64_t row_block = blockIdx.x / split;                       // 64 * kWG weight rows
  const int64_t tok0 = static_cast<int64_t>(blockIdx.y) * C::kTok;
  const int64_t row_tile0 = row_block * C::kWarps;
  const int64_t row_tile = row_tile0 + warp;                          // this warp's 16 rows
  const bool tile_ok = row_tile < w.row_tiles;
  const int64_t g_begin = w.k_groups * rank / split, g_end = w.k_groups * (rank + 1) / split;
  const int n_iter = static_cast<int>(g_end - g_begin);

  float acc[C::kAcc];
#pragma unroll
  for (int i = 0; i < C::kAcc; ++i) acc[i] = 0.f;

  // Prologue: the first kStages - 1 stages in flight.
  const StageLoader<C> loader(w, x, m, tok0, row_tile0, g_begin);
  const int64_t k_left0 = w.k - g_begin * 64;
#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < n_iter) loader.load(smem0 + s * C::kStageBytes, w, x, s, k_left0 - 64 * s);
    cp_async_commit();
  }

  for (int it = 0; it < n_iter; ++it) {
    const int64_t group = g_begin + it;
    if constexpr (C::kBits12) {  // exception list bounds of this group's block (one load per block, lane 0)
      __syncwarp();  // every lane has read the previous bounds
      if (lane == 0 && tile_ok && (it == 0 || group % format::kGroupsPerBlock == 0)) {
        const int64_t b = row_tile * w.k_blocks + group / format::kGroupsPerBlock;
        exc_off[warp][0] = __ldg(w.exc_off + b);
        exc_off[warp][1] = __ldg(w.exc_off + b + 1);
      }
    }
    cp_async_wait<C::kStages - 2>();
    __syncthreads();  // stage `it` visible to all; every warp is done with stage it - 1 (free to refill)
    {
      const int nt = it + C::kStages - 1;
      if (nt < n_iter) loader.load(smem0 + (nt % C::kStages) * C::kStageBytes, w, x, nt, k_left0 - 64 * nt);
      cp_async_commit();
    }
    const uint8_t* stage = smem + (it % C::kStages) * C::kStageBytes;
    uint32_t a[4][4];
    GroupRegs<C::kBits12> regs;
    regs.load_shared(stage + C::kXBytes + warp * C::kGroupBytes, lane);
    regs.decode(w, a);
    if constexpr (C::kBits12) {
      const uint32_t e0 = exc_off[warp][0], e1 = exc_off[warp][1];
      if (tile_ok && e1 > e0) patch_exceptions(w.exc, e0, e1, static_cast<int>(group % format::kGroupsPerBlock), lane, a);
    }
    const uint32_t xt = smem0 + (it % C::kStages) * C::kStageBytes;
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) wgmma_rs<C::kTok>(acc, a[s], sw128_desc(xt + 32 * s));
    wgmma_commit();
    wgmma_wait0();
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is dead from here: its space holds the FP32 partials

  // Accumulator fragment: n8 block i, reg 4i + q -> row g + 8 (q >> 1), token 8i + 2t + (q & 1).
  const int g = lane >> 2, t = lane & 3;
  constexpr int kRows = 64 * C::kWG;
  if (split == 1) {
#pragma unroll
    for (int i = 0; i < C::kTok / 8; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t row = row_tile * 16 + g + 8 * (q >> 1), tok = tok0 + 8 * i + 2 * t + (q & 1);
        if (tile_ok && row < rows && tok < m) out[tok * rows + row] = __float2bfloat16_rn(acc[4 * i + q]);
      }
    return;
  }
  float* red = reinterpret_cast<float*>(smem);  // (kTok tokens, kRows rows): rows contiguous
#pragma unroll
  for (int i = 0; i < C::kTok / 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q)
      red[(8 * i + 2 * t + (q & 1)) * kRows + warp * 16 + g + 8 * (q >> 1)] = acc[4 * i + q];
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  // Rank r finishes an even-aligned share of the tile's rows, two rows per thread (BF16x2 stores), summing the
  // ranks' partials in rank order (all loads issued before the adds: DSMEM latency overlaps).
  const int r0 = 2 * (kRows / 2 * rank / split), r1 = 2 * (kRows / 2 * (rank + 1) / split), nr2 = (r1 - r0) / 2;
  const float* peer[8];
#pragma unroll
  for (int q = 0; q < 8; ++q) peer[q] = cluster.map_shared_rank(red, q < split ? q : 0);
  for (int e = threadIdx.x; e < nr2 * C::kTok; e += C::kThreads) {
    const int lr = r0 + 2 * (e % nr2), tk = e / nr2;
    float2 v[8];
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q < split) v[q] = *reinterpret_cast<const float2*>(peer[q] + tk * kRows + lr);
    float2 sum = v[0];
#pragma unroll
    for (int q = 1; q < 8; ++q)
      if (q < split) sum.x += v[q].x, sum.y += v[q].y;
    const int64_t row = row_block * kRows + lr, tok = tok0 + tk;
    if (tok >= m) continue;
    if (row + 1 < rows && (rows & 1) == 0 && (reinterpret_cast<uintptr_t>(out) & 3) == 0)
      *reinterpret_cast<__nv_bfloat162*>(out + tok * rows + row) = __floats2bfloat162_rn(sum.x, sum.y);
    else {
      if (row < rows) out[tok * rows + row] = __float2bfloat16_rn(sum.x);
      if (row + 1 < rows) out[tok * rows + row + 1] = __float2bfloat16_rn(sum.y);
    }
  }
  cluster.sync();  // nobody leaves while a peer still reads its shared memory
}

template <class C>
void launch(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
            int64_t rows, cudaStream_t stream) {
  static const bool attr_ok = [] {
    RelaxedCapture relaxed;
    return cudaFuncSetAttribute(wide_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmem) ==
           cudaSuccess;
  }();
  if (!attr_ok) throw Error("solgemm: wide kernel: cannot set its shared-memory size");
  const int split = cfg.split_k;
  const int64_t row_blocks = (rows + 64 * C::kWG - 1) / (64 * C::kWG);
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(static_cast<unsigned>(row_blocks * split), static_cast<unsigned>((m + C::kTok - 1) / C::kTok), 1);
  lc.blockDim = dim3(C::kThreads, 1, 1);
  lc.dynamicSmemBytes = C::kSmem;
  lc.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(split);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&lc, wide_kernel<C>, w, x, m, out, rows, split);
  if (e != cudaSuccess)
    throw Error(fmt::format("solgemm: wide kernel launch (m={}, rows={}, split={}): {}", m, rows, split,
                            cudaGetErrorString(e)));
}

// ---- The hi + lo source (FP32 router weights as BF16 hi + lo (+ lo2), FP32 out; the router's verify batches) ----
//
// Idea: the router's terms through wgmma with the weights as register A. CTA = 64 rows x kTok tokens (32, 64, 128
// or 256; one launch per kTok-token chunk) x K / split; from 128 tokens as two warpgroups that each take half of the
// tokens (both decode the same groups: one warpgroup per SM left the loop and the tail latency-bound, 0.4-0.6 us
// slower at m = 192 / 256; perf-notes step 98). Each stage holds the x tile (one TMA tensor
// copy, 128B-swizzled, tokens >= m and k >= K zero-filled by the copy engine) and, per warp, one 16-bit group of
// every term (one bulk copy each); one thread issues a stage and an mbarrier counts its bytes, so issuing costs a
// few instructions (a first version copied with cp.async from every thread: ~300 dependent instructions per group
// with one warp per scheduler; perf-notes step 56). All of a CTA's groups are in flight from entry when they fit
// (kStages >= groups), else the stages are refilled as a ring. The terms go into one FP32 accumulator: hi as
// stored, lo (stored as (W - hi) 2^8) and lo2 (2^16) scaled back by 2^-8 / 2^-16 in registers (BF16 multiplies by
// a power of two: exact unless the product is subnormal, |W| < ~2^-110; such weights then contribute their hi + lo
// part). A group's wgmmas complete before the next group's fragments are loaded (double-buffered A registers with
// the next group's wgmmas in flight make ptxas serialize every wgmma: C7513, perf-notes step 56).
// N = 256 gives only 4 row blocks, so K is split 32 ways (128 CTAs, one per SM) and reduced in the same launch
// through the workspace (hilo_reduce: partials, a per-row-block barrier of a cooperative launch, each CTA adds
// 1/split of its tile in a fixed order). The CTAs are K-slice major (step 97).
// Roofline (H200, m = 256): 8.4 MB of terms + 4.2 MB of x per launch (x re-read by the 4 row blocks from L2:
// 16.8 MB) -> ~3.2 us of streaming; 2.1 GFLOP of BF16 tensor work (hi and lo) -> ~2.2 us at 989 TFLOP/s.
template <int kTok_, int kTerms_, int kStages_, int kWG_>
struct WideHiLoCfg {
  static constexpr int kTok = kTok_;
  static constexpr int kTerms = kTerms_;
  static constexpr int kStages = kStages_;
  static constexpr int kWG = kWG_;                 // warpgroups: each takes kN of the CTA's tokens, all 64 rows
  static constexpr int kN = kTok / kWG;            // wgmma N
  static constexpr int kThreads = 128 * kWG;
  static constexpr int kWarps = 4;                 // row warps (16 rows each) of a warpgroup
  static constexpr int kXBytes = kTok * 128;
  static constexpr int kWBytes = kWarps * kTerms * format::kBytes16;
  static constexpr int kStageBytes = kXBytes + kWBytes;
  static constexpr int kRingBytes = kStages * kStageBytes;
  static constexpr int kSmem = kRingBytes + 1024;
  static constexpr int kAcc = kN / 2;
  static_assert(kStageBytes % 1024 == 0 && kN * 128 % 1024 == 0, "x tiles must stay 1024-byte aligned (128B swizzle)");
  static_assert(kSmem <= 227 * 1024, "shared memory");
};

// a *= scale2 for BF16 pairs (a power of two: exact for normal results).
__device__ __forceinline__ uint32_t bf16x2_scale(uint32_t a, uint32_t scale2) {
  uint32_t r;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(scale2));
  return r;
}

// Bench timeline (HiLoView::trace, null in the library): stamp i of this CTA = %globaltimer (ns), in the slots of
// bench_util.cuh's timeline: 0 entry, 3 main loop done, 1 partial stored (before the arrival), 2 barrier passed,
// 6 this CTA's share of the output written.
__device__ __forceinline__ void hilo_stamp(unsigned long long* trace, int i) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[(static_cast<size_t>(blockIdx.y) * gridDim.x + blockIdx.x) * 8 + i] = v;
}

// The split-K reduction of the hi + lo kernel. Every CTA stores its partial to the workspace straight from the
// accumulators in fragment order (float4 e = kThreads j + t holds acc[4j .. 4j + 3] of thread t: every store and load a
// whole float4; staging it in shared memory for one bulk copy was slower: the copy's completion wait, perf-notes
// step 56; reducing pairs or quads of K slices first through distributed shared memory was slower too: step 97);
// the `split` CTAs of a row block meet at a barrier (a 64-bit arrival counter per row block in the workspace that
// every launch advances by `split`, so graph replays need no host reset; each CTA releases its arrival and polls, no
// round trip through a last arrival: step 57; every CTA is resident (a cooperative launch), so the wait cannot
// deadlock), and CTA s finishes float4s [kV s / split, kV (s + 1) / split) of the tile, each summed over the
// partials in order (one fixed association for every m: bitwise deterministic and batch invariant).
template <class C>
__device__ __forceinline__ void hilo_reduce(const float (&acc)[C::kAcc], uint8_t* smem, const HiLoView& w,
                                            float* __restrict__ out, int64_t m, int64_t rows, int split, int sidx,
                                            int64_t row_block) {
  __shared__ unsigned long long target;
  const int tid = threadIdx.x;
  // The row block's arrival counter (split_barrier.cuh), read before this CTA arrives.
  unsigned long long* const arrive = reinterpret_cast<unsigned long long*>(w.split.cnt) + row_block;
  if (tid == 0) target = split_barrier_target(arrive, static_cast<unsigned>(split));
  constexpr int kV = 64 * C::kTok / 4;  // float4s of a partial
  float4* const ws = reinterpret_cast<float4*>(w.split.ws) + row_block * split * kV;
  float4* const mine = ws + sidx * kV;
#pragma unroll
  for (int j = 0; j < C::kAcc / 4; ++j)
    __stcg(mine + j * C::kThreads + tid, make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
  __syncthreads();
  if (tid == 0) {  // (the CTA barrier above orders every thread's stores before this release)
    if (w.trace) hilo_stamp(w.trace, 1);
    split_barrier_arrive_wait(arrive, target);
  }
  __syncthreads();
  if (w.trace && tid == 0) hilo_stamp(w.trace, 2);
  // This CTA's share: float4s [b, b + n) of the tile. Each float4's partials go in chunks of up to 16 (item j =
  // float4 b + j % n, chunk j / n: its loads all in flight, two items per pass), each chunk summed in order, then the
  // chunks in order (through shared memory when there is more than one).
  const int b = kV * sidx / split, n = kV * (sidx + 1) / split - b, chunks = (split + 15) / 16;
  float4* const hs = reinterpret_cast<float4*>(smem);  // [chunks][n] chunk sums
  // float4 e -> thread t = e % kThreads (warpgroup t / 128, row warp, g, t4), n8 block j = e / kThreads: rows
  // 16 warp + g (+ 8), tokens kN wg + 8 j + 2 t4 (+ 1).
  auto store_out = [&](int e, const float4& sum) {
    const int t = e % C::kThreads, j = e / C::kThreads, lane = t & 31, g = lane >> 2, t4 = lane & 3;
    const int64_t row0 = row_block * 64 + 16 * ((t >> 5) % C::kWarps) + g;
    const int tok0 = (t >> 7) * C::kN + 8 * j + 2 * t4;
    const float vv[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int64_t row = row0 + 8 * (q >> 1);
      const int tok = tok0 + (q & 1);
      if (row < rows && tok < m) out[tok * rows + row] = vv[q];
    }
  };
  auto item_loads = [&](int j, float4 (&v)[16], int& s_begin, int& s_end, int& e) {
    const int c = j / n;
    e = b + j - c * n;
    s_begin = 16 * c;
    s_end = min(split, s_begin + 16);
#pragma unroll
    for (int q = 0; q < 16; ++q)
      if (s_begin + q < s_end) v[q] = __ldcg(ws + (s_begin + q) * kV + e);
  };
  auto item_sum = [&](int j, const float4 (&v)[16], int s_begin, int s_end, int e) {
    float4 sum = v[0];
#pragma unroll
    for (int q = 1; q < 16; ++q)
      if (s_begin + q < s_end) sum.x += v[q].x, sum.y += v[q].y, sum.z += v[q].z, sum.w += v[q].w;
    if (chunks == 1) store_out(e, sum);
    else hs[j] = sum;
  };
  for (int j = tid; j < chunks * n; j += 2 * C::kThreads) {
    float4 va[16], vb[16];
    int sa, ea, xa, sb = 0, eb = 0, xb = 0;
    const int jb = j + C::kThreads;
    item_loads(j, va, sa, ea, xa);
    if (jb < chunks * n) item_loads(jb, vb, sb, eb, xb);
    item_sum(j, va, sa, ea, xa);
    if (jb < chunks * n) item_sum(jb, vb, sb, eb, xb);
  }
  if (chunks > 1) {
    __syncthreads();
    for (int j = tid; j < n; j += C::kThreads) {
      float4 sum = hs[j];
      for (int c = 1; c < chunks; ++c) {
        const float4 u = hs[c * n + j];
        sum.x += u.x, sum.y += u.y, sum.z += u.z, sum.w += u.w;
      }
      store_out(b + j, sum);
    }
  }
  if (w.trace) {
    __syncthreads();
    if (tid == 0) hilo_stamp(w.trace, 6);
  }
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    wide_hilo_kernel(const __grid_constant__ CUtensorMap xmap, const HiLoView w, int64_t m, float* __restrict__ out,
                     int64_t rows, int split) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t smem0 = smem_addr(smem);
  __shared__ __align__(8) uint64_t full[C::kStages];

  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, tid = threadIdx.x;
  const int wg = warp / C::kWarps, rwarp = warp % C::kWarps;  // warpgroup (its tokens), row warp (its 16 rows)
  // CTAs K-slice major: the row blocks of one K slice, which read the same x tiles, start side by side (perf-notes
  // step 97: the loop ended ~0.4-0.6 us sooner at m = 192 / 256 than with the row blocks' CTAs split apart).
  const int64_t row_blocks = gridDim.x / split;
  const int sidx = static_cast<int>(blockIdx.x / row_blocks);        // K slice
  const int64_t row_block = blockIdx.x % row_blocks;                  // 64 weight rows
  // (One launch per kTok-token chunk: x, out and m are the chunk's, tokens start at 0.)
  const int64_t row_tile0 = row_block * C::kWarps;
  const int64_t g_begin = w.k_groups * sidx / split, g_end = w.k_groups * (sidx + 1) / split;
  const int n_iter = static_cast<int>(g_end - g_begin);

  unsigned long long* const trace = w.trace;
  if (trace && tid == 0) hilo_stamp(trace, 0);
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < C::kStages; ++s) family::mbar_init(family::smem_u32(&full[s]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Warp 0 issues stage `slot` <- group g_begin + it: lane 0 the x box (after announcing the stage's bytes), lanes
  // 0 .. kTerms * 4 - 1 one weight group each (row tiles past the matrix read the last row tile: their rows are
  // never stored).
  const uint8_t* term_base = lane / C::kWarps == 0 ? w.hi : lane / C::kWarps == 1 ? w.lo : w.lo2;
  const int64_t my_rt = min(row_tile0 + lane % C::kWarps, w.row_tiles - 1);
  auto issue = [&](int slot, int it) {
    family::issue_stage(family::smem_u32(&full[slot]), smem0 + slot * C::kStageBytes, &xmap,
                        static_cast<int>((g_begin + it) * 64), C::kStageBytes, C::kXBytes, lane,
                        C::kTerms * C::kWarps, format::kBytes16,
                        [&](int) { return term_base + (my_rt * w.k_groups + g_begin + it) * format::kBytes16; });
  };
  if (warp == 0)
    for (int s = 0; s < C::kStages && s < n_iter; ++s) issue(s, s);

  float acc[C::kAcc];
#pragma unroll
  for (int i = 0; i < C::kAcc; ++i) acc[i] = 0.f;
  // One group: wait for its stage, its A fragments from shared memory, its wgmmas issued and complete; then its
  // slot is refilled with the group kStages ahead, if any.
  auto step = [&](int it) {
    uint32_t a[C::kTerms][4][4];
    const int slot = it % C::kStages;
    family::mbar_wait(family::smem_u32(&full[slot]), static_cast<uint32_t>((it / C::kStages) & 1));
    const uint8_t* stage = smem + slot * C::kStageBytes;
#pragma unroll
    for (int t = 0; t < C::kTerms; ++t) {
      GroupRegs<false> regs;
      regs.load_shared(stage + C::kXBytes + (t * C::kWarps + rwarp) * format::kBytes16, lane);
      regs.decode(PackedView{}, a[t]);
      if (t > 0)
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            a[t][s][j] = bf16x2_scale(a[t][s][j], t == 1 ? 0x3B803B80u : 0x37803780u);  // 2^-8, 2^-16
    }
    const uint32_t xt = smem0 + slot * C::kStageBytes + wg * C::kN * 128;  // this warpgroup's tokens
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < 4; ++s)
#pragma unroll
      for (int t = 0; t < C::kTerms; ++t) wgmma_rs<C::kN>(acc, a[t][s], sw128_desc(xt + 32 * s));
    wgmma_commit();
    wgmma_wait0();
    if (it + C::kStages < n_iter) {  // refill its slot (uniform branch) once every warp is done with it
      // (the slot's A fragments were read by generic loads, the refill is an async-proxy write: the proxy fence
      // orders them, as the skinny family's release_slot; perf-notes step 183)
      family::fence_proxy_async_smem();
      __syncthreads();
      if (warp == 0) issue(slot, it + C::kStages);
    }
  };
  for (int it = 0; it < n_iter; it += 2) {  // (two groups per pass: the code ptxas scheduled for the judged build)
    step(it);
    if (it + 1 < n_iter) step(it + 1);
  }
  wgmma_wait0();
  __syncthreads();  // the ring is dead from here: its space holds the reduction's chunk sums
  if (trace && tid == 0) hilo_stamp(trace, 3);

  // Accumulator fragment: n8 block i, reg 4i + q -> row 16 rwarp + g + 8 (q >> 1), token kN wg + 8i + 2t + (q & 1).
  const int g = lane >> 2, t4 = lane & 3;
  if (split == 1) {
#pragma unroll
    for (int i = 0; i < C::kN / 8; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t row = (row_tile0 + rwarp) * 16 + g + 8 * (q >> 1), tok = wg * C::kN + 8 * i + 2 * t4 + (q & 1);
        if (row < rows && tok < m) out[tok * rows + row] = acc[4 * i + q];
      }
    return;
  }
  hilo_reduce<C>(acc, smem, w, out, m, rows, split, sidx, row_block);
}

template <class C>
void set_smem_attr() {
  ensure_dynamic_smem<wide_hilo_kernel<C>, C::kSmem>("wide hi + lo kernel");
}
template <class C>
int64_t resident() {
  return resident_ctas_cached<wide_hilo_kernel<C>, C::kThreads, C::kSmem>();
}

// The split actually launched: the plan's, halved until a row block's CTAs of every row block are resident at once
// for both token widths (the barrier of the reduction needs them all; the same split, and with it the same
// association and output bits, for every m on one device).
template <class C128, class C256>
int hilo_split(int split, int64_t row_blocks) {
  const int64_t cap = std::min(resident<C128>(), resident<C256>());
  while (split > 1 && row_blocks * split > cap) split /= 2;
  return split;
}

template <class C, class C128, class C256>
void launch_hilo(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out, int64_t rows,
                 cudaStream_t stream) {
  set_smem_attr<C>();  // (before any residency query of C: resident() caches its first answer)
  set_smem_attr<C128>();
  set_smem_attr<C256>();
  const int64_t row_blocks = (rows + 63) / 64;
  const int split = hilo_split<C128, C256>(cfg.split_k, row_blocks);
  if (row_blocks * split > resident<C>())
    throw Error(fmt::format("solgemm: wide hi + lo kernel: {} row blocks of 64 rows do not fit the GPU at once", row_blocks));
  Config used = cfg;
  used.split_k = split;
  const WideWsNeed need = wide_hilo_ws_need(used, m, rows);
  if (need.floats > w.split.ws_floats || need.counters > w.split.counters)
    throw Error(fmt::format("solgemm: wide hi + lo kernel: split-K workspace too small ({} floats, {} counters needed; "
                            "{}, {} allocated)", need.floats, need.counters, w.split.ws_floats, w.split.counters));
  // The barrier's counters: the last ones of the workspace (split_ws_need reserves them apart from the router
  // family's, whose counters must be 0 at rest; these never return to 0).
  HiLoView v = w;
  v.split.cnt = w.split.cnt + (w.split.counters - need.counters);
  if (reinterpret_cast<uintptr_t>(v.split.cnt) % 8 != 0)
    throw Error("solgemm: wide hi + lo kernel: the workspace's counters are not 8-byte aligned (split_ws_need)");
  // One cooperative launch per kTok-token chunk (one for m <= 256).
  for (int64_t t0 = 0; t0 < m; t0 += C::kTok) {
    const int64_t mc = std::min<int64_t>(C::kTok, m - t0);
    const CUtensorMap xmap = bf16_tensor_map(x + t0 * w.k, w.k, mc, 64, C::kTok, "wide hi + lo kernel: x");
    const LaunchCfg lcfg(row_blocks * split, C::kThreads, C::kSmem, stream, true);
    const cudaError_t e = cudaLaunchKernelEx(&lcfg.lc, wide_hilo_kernel<C>, xmap, v, mc, out + t0 * rows, rows, split);
    if (e != cudaSuccess)
      throw Error(fmt::format("solgemm: wide hi + lo kernel launch (m={}, rows={}, split={}): {}", m, rows, split,
                              cudaGetErrorString(e)));
  }
}

}  // namespace

// The compiled variants: (tokens per CTA, warpgroups, stages) = (128, 2, 3) for m <= 128 (two CTAs fit an SM),
// (256, 2, 4 or 3) above (one CTA per SM); 12 or 16 bits.
void launch_wide(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                 int64_t rows, cudaStream_t stream) {
  if (cfg.split_k < 1 || cfg.split_k > 8)
    throw Error(fmt::format("solgemm: wide kernel: split {} not in 1..8", cfg.split_k));
  const bool wide_tok = cfg.n_tiles > 16;
  if (w.bits12) {
    if (wide_tok) launch<WideCfg<true, 256, 2, 4>>(cfg, w, x, m, out, rows, stream);
    else launch<WideCfg<true, 128, 2, 3>>(cfg, w, x, m, out, rows, stream);  // 2 CTAs per SM
  } else {
    if (wide_tok) launch<WideCfg<false, 256, 2, 3>>(cfg, w, x, m, out, rows, stream);
    else launch<WideCfg<false, 128, 2, 3>>(cfg, w, x, m, out, rows, stream);
  }
}

}  // namespace solgemm::kernels

namespace solgemm::kernels {

WideWsNeed wide_hilo_ws_need(const Config& cfg, int64_t, int64_t rows) {
  // One chunk at a time: every CTA's partial (64 rows x tokens), a 64-bit counter (two 32-bit ones) per row block.
  if (cfg.split_k <= 1) return {};
  const int64_t row_blocks = (rows + 63) / 64;
  return {static_cast<size_t>(row_blocks * cfg.split_k * 64 * 8 * cfg.n_tiles), static_cast<size_t>(row_blocks * 2)};
}

// (tokens per CTA, terms, stages, warpgroups) = (32 / 64 / 128 / 256 as the config's n_tiles, 2 or 3, 4, 1 below 128
// tokens and 2 from there).
void launch_wide_hilo(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                      int64_t rows, cudaStream_t stream) {
  if (cfg.split_k < 1 || cfg.split_k > 1024)
    throw Error(fmt::format("solgemm: wide hi + lo kernel: split {} not in 1..1024", cfg.split_k));
  if (w.k % 8 != 0 || reinterpret_cast<uintptr_t>(x) % 16 != 0) {  // x rows not in 16-byte chunks: no TMA
    const Plan p = select_plan(Shape{rows, w.k, Storage::hilo}, m, Kernel::router);
    launch_router(p.cfg, w, x, m, out, rows, stream);
    return;
  }
  // The CTA's token width: the config's n_tiles (8 tokens each) rounded up to 32, 64, 128 or 256.
  const int tok = cfg.n_tiles <= 4 ? 32 : cfg.n_tiles <= 8 ? 64 : cfg.n_tiles <= 16 ? 128 : 256;
  auto go = [&](auto terms) {
    constexpr int kT = decltype(terms)::value;
    using C32 = WideHiLoCfg<32, kT, 4, 1>;
    using C64 = WideHiLoCfg<64, kT, 4, 1>;
    using C128 = WideHiLoCfg<128, kT, 4, 2>;
    using C256 = WideHiLoCfg<256, kT, 4, 2>;
    if (tok == 32) launch_hilo<C32, C128, C256>(cfg, w, x, m, out, rows, stream);
    else if (tok == 64) launch_hilo<C64, C128, C256>(cfg, w, x, m, out, rows, stream);
    else if (tok == 128) launch_hilo<C128, C128, C256>(cfg, w, x, m, out, rows, stream);
    else launch_hilo<C256, C128, C256>(cfg, w, x, m, out, rows, stream);
  };
  if (w.lo2 != nullptr) go(std::integral_constant<int, 3>{});
  else go(std::integral_constant<int, 2>{});
}

}  // namespace solgemm::kernels
