// SIMT family: the raw row-major weights (FP32 or BF16) times a few tokens, whole rows per CTA, every load issued at
// entry; FP32 rows on the CUDA cores (FMAs), BF16 rows through mma.sync (simt_mma_kernel below, since perf-notes step
// 174: the FMA form's per-weight conversions cost ~0.5 us after the last load landed).
//
// Idea: where N is small (the router: 256 rows) the tensor-core families must split K across 8 CTAs per 16-row
// tile to fill the GPU, and the split-K exchange after the stream costs 1.5-2.5 us (perf-notes steps 11-16). With
// FMAs on the CUDA cores a CTA can own just R rows (R = 2 for the router: 128 CTAs) over the whole K, so the only
// reduction is inside the CTA. Each thread issues its R x U 16-byte weight loads at entry (all of the CTA's bytes in
// flight at once, like the streaming-read ceiling kernel) and multiplies as they land. x comes into shared memory by
// one bulk copy per token (thread 0, an mbarrier) where the CTA's k range is one pass (the plan's shapes): every CTA
// reads the same x, and per-thread copies of those few lines queued for ~2 us (perf-notes step 67); otherwise each
// thread copies the columns it reads with cp.async (no barrier: only it reads them). (Measured and removed: a
// cluster of CTAs splitting K, row groups, 1024-thread CTAs: perf-notes steps 62, 63.)
//
// Measured (H200, judge at b0817d2): the router at m = 1 3.5 us (the tensor-core router family 5.1), the unpooler
// slice 4.2 (the skinny family 5.2); past 6 tokens the router family wins again. The BF16 slice in the mma form
// (session 36): 3.5 us at m = 1, 4.4-4.6 at m = 8 (the skinny family 4.6-4.7); on the simt 12-bit layout (session 38,
// 25% fewer bytes): 3.1-3.4 us at m = 1, 4.2-4.35 at m = 8 (perf-notes step 180).
//
//   CTA = 512 threads; thread i: units (16 bytes: 4 FP32 or 8 BF16 k) u = i + 512 j (j < U) of each pass over K, for
//   each of the CTA's R rows; acc[r][tok] in FP32, k ascending within the thread; then a fixed tree per output: a
//   butterfly over the 32 lanes of each warp, then the 16 warps in order. Nothing depends on m (only whether a token
//   exists): bitwise deterministic and batch invariant over every m of one variant.
//
// (The FMA form serves BF16 too, forced only: simt layout rt_cta 8 / gpw 1 / n_tiles 4; the plan's BF16 rows take
// the mma form, gpw 8 / n_tiles 8 or 16.)
// Roofline: the router (8.4 MB of FP32) at the streaming ceiling is ~2.8-3.0 us. The FMAs cost R x m per weight
// unit per thread; at m = 8 on the router that is ~400 instructions per thread after the loads land (~0.5-1 us),
// and every CTA reads all of x through L2, so the family serves few tokens only (plan table). FP32 weights are used
// as they are (no hi + lo split): products and sums in FP32.
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "async_copy.cuh"
#include "decode.cuh"
#include "decode.hpp"
#include "mma_sync.cuh"
#include "kernels.hpp"
#include "solgemm/format.hpp"

namespace solgemm::kernels {
namespace {

constexpr int kThreads = 512;

// 32-bit word q of a 16-byte value; BF16 value h (0 low, 1 high) of a word as FP32 (exact).
__device__ __forceinline__ uint32_t word(const uint4& v, int q) { return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w; }
__device__ __forceinline__ uint32_t word(const uint2& v, int q) { return q == 0 ? v.x : v.y; }
__device__ __forceinline__ float bf16_half(uint32_t r, int h) { return __uint_as_float(h ? (r & 0xFFFF0000u) : (r << 16)); }

// A 16-byte unit of weights: kE values; w(v, e) = value e as FP32.
template <class WT>
struct Unit;
template <>
struct Unit<float> {
  static constexpr int kE = 4;
  __device__ static float w(const uint4& v, int e) { return __uint_as_float(word(v, e)); }
};
template <>
struct Unit<__nv_bfloat16> {
  static constexpr int kE = 8;
  __device__ static float w(const uint4& v, int e) { return bf16_half(word(v, e >> 1), e & 1); }
};

// x of a unit (kE BF16 values) in shared memory: 8 or 16 bytes.
template <int E>
using XSlot = std::conditional_t<E == 4, uint2, uint4>;
template <class T>
__device__ __forceinline__ float x_at(const T& v, int e) { return bf16_half(word(v, e >> 1), e & 1); }

struct Args {
  const void* w = nullptr;           // N x K row-major
  const __nv_bfloat16* x = nullptr;  // m x K
  void* out = nullptr;               // m x rows (FP32 for FP32 weights, else BF16)
  int m = 0, rows = 0, k = 0;
  int bar_off = 0;                   // shared-memory offset of the x copy's mbarrier (8 bytes)
  int bulk_x = 0;                    // x by one bulk copy per token (one full pass, 16-byte aligned rows): set by launch
  unsigned long long* trace = nullptr;  // bench only: %globaltimer stamps per CTA (8 slots; null in the library)
  int no_bulk_x = 0;                 // bench only: x by per-thread cp.async even where bulk copies apply
  // the 12-bit layout (simt_mma_kernel's kC12): format.hpp Simt12
  const uint32_t* exc_off = nullptr;  // the rows' entries past their slots
  const uint32_t* exc = nullptr;
  int passes = 0;
  uint32_t dec_or = 0;               // decode::coded_or(A), A = base rounded up to 16
  float out_scale = 1.f;             // 2^-d: the coded sums -> true sums (exact)
  float exc_p = 0.f;                 // the placeholder's true value, 2^(base - 112)
  int no_exc = 0;                    // bench: no exception corrections (wrong where entries are)
};

// Bench timeline (Args::trace): 0 entry, 1 thread 0's x landed, 2 thread 0's first row landed, 3 the CTA barrier after
// the FMAs (the compiler may sink FMAs and their load waits past it: perf-notes step 63), 4 output written.
__device__ __forceinline__ void stamp(unsigned long long* trace, int i) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[(static_cast<size_t>(blockIdx.y) * gridDim.x + blockIdx.x) * 8 + i] = v;
}

__device__ __forceinline__ void cp_async(uint32_t dst, const void* src, int bytes, int src_bytes) {
  if (bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void store_out(float* o, int64_t i, float v) { o[i] = v; }
__device__ __forceinline__ void store_out(__nv_bfloat16* o, int64_t i, float v) { o[i] = __float2bfloat16_rn(v); }

// R rows per CTA, U units per row per thread and pass, MT tokens per CTA (grid y walks chunks of MT tokens).
template <class WT, int R, int U, int MT>
__global__ void __launch_bounds__(kThreads, 1) simt_kernel(const Args a) {
  constexpr int E = Unit<WT>::kE, V = R * MT, kWarps = kThreads / 32;  // outputs of the CTA
  static_assert(V <= kThreads, "simt: one thread per output in the tree");
  using XT = XSlot<E>;
  using Out = std::conditional_t<std::is_same_v<WT, float>, float, __nv_bfloat16>;
  extern __shared__ __align__(16) uint8_t smem[];
  const int i = threadIdx.x;
  const int r0 = static_cast<int>(blockIdx.x) * R, tok0 = static_cast<int>(blockIdx.y) * MT;
  const int mt = min(MT, a.m - tok0);
  const int nu = a.k / E;  // units of K (K % E == 0: the launcher checks)
  const WT* w = static_cast<const WT*>(a.w);
  float acc[R][MT];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int t = 0; t < MT; ++t) acc[r][t] = 0.f;
  const uint32_t xs = family::smem_u32(smem);
  unsigned long long* const trace = i == 0 ? a.trace : nullptr;
  if (trace) stamp(trace, 0);
  // x by bulk copies (Args::bulk_x: K is exactly one pass): thread 0 copies each token's row, which lands in the slot
  // layout below ((t U + j) 512 + i = the natural order of the units), counted on one mbarrier: one request per token
  // and CTA instead of one per thread and unit (all CTAs read the same x).
  const uint32_t xbar = xs + static_cast<uint32_t>(a.bar_off);
  if (a.bulk_x) {
    if (i == 0) {
      family::mbar_init(xbar, 1);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      const uint32_t bytes = static_cast<uint32_t>(a.k * 2);
      family::mbar_arrive_expect_tx(xbar, bytes * static_cast<uint32_t>(mt));
      for (int t = 0; t < mt; ++t)
        family::bulk_g2s(xs + static_cast<uint32_t>(t) * bytes, a.x + static_cast<int64_t>(tok0 + t) * a.k, bytes, xbar);
    }
    __syncthreads();  // (the mbarrier initialised before anyone waits on it)
  }
  for (int p0 = 0; p0 < nu; p0 += kThreads * U) {  // passes (one for the planned shapes)
    if (p0 != 0) __syncthreads();  // (several passes: each thread reads only its own slots; kept for clarity)
    // x of the pass: token t, unit p0 + i + 512 j at slot (t U + j) 512 + i (conflict-free reads); each thread copies
    // exactly the slots it reads (no barrier needed).
    for (int t = 0; !a.bulk_x && t < mt; ++t)
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int u = p0 + i + kThreads * j;
        const bool ok = u < nu;
        const __nv_bfloat16* src = ok ? a.x + static_cast<int64_t>(tok0 + t) * a.k + static_cast<int64_t>(u) * E : a.x;
        cp_async(xs + static_cast<uint32_t>(((t * U + j) * kThreads + i) * sizeof(XT)), src, static_cast<int>(sizeof(XT)),
                 ok ? static_cast<int>(sizeof(XT)) : 0);
      }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    uint4 wv[R][U];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int u = p0 + i + kThreads * j;
        wv[r][j] = (u < nu && r0 + r < a.rows)
                       ? ld_stream16(w + static_cast<int64_t>(r0 + r) * a.k + static_cast<int64_t>(u) * E)
                       : make_uint4(0, 0, 0, 0);
      }
    if (a.bulk_x)
      family::mbar_wait(xbar, 0);
    else
      asm volatile("cp.async.wait_all;\n" ::: "memory");
    if (trace && p0 == 0) stamp(trace, 1);
    const XT* xv = reinterpret_cast<const XT*>(smem);
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      if (t < mt) {
#pragma unroll
        for (int j = 0; j < U; ++j) {
          const XT xu = xv[(t * U + j) * kThreads + i];
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float xe = x_at(xu, e);
#pragma unroll
            for (int r = 0; r < R; ++r) acc[r][t] = fmaf(Unit<WT>::w(wv[r][j], e), xe, acc[r][t]);
          }
        }
      }
    }
  }
  // The CTA's tree, per output (row, t) of a token that exists: a butterfly over the 32 lanes of each warp (xor 16,
  // 8, 4, 2, 1: every lane ends with the same sum), then the 16 warps in order by one thread. Only the mt real tokens
  // are reduced (the tree of each output is the same whatever mt: batch invariant).
  if (trace) stamp(trace, acc[0][0] == 12345.f ? 1 : 2);
  __syncthreads();  // x slots free
  if (trace) stamp(trace, 3);
  float* wsum = reinterpret_cast<float*>(smem);  // [warp][r][t]
  const int lane = i & 31, warp = i >> 5;
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    if (t < mt) {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float v = acc[r][t];
#pragma unroll
        for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
        if (lane == 0) wsum[(warp * R + r) * MT + t] = v;
      }
    }
  }
  __syncthreads();
  // output v = r MT + t, summed by thread v over the warps in order
  const int r = i / MT, t = i % MT;
  if (i < V && t < mt && r0 + r < a.rows) {
    float s = wsum[i];
#pragma unroll
    for (int w2 = 1; w2 < kWarps; ++w2) s += wsum[w2 * V + i];
    store_out(static_cast<Out*>(a.out), static_cast<int64_t>(tok0 + t) * a.rows + r0 + r, s);
  }
  if (trace) stamp(trace, 4);
}

// BF16 rows on the tensor cores (session 36, perf-notes step 174): the FMA form above spends ~140 ALU instructions per
// thread after its loads land on an 8-row BF16 CTA (a shift or a mask per weight before each FMA; step 173), which
// mma.sync does in 16 instructions. CTA = 8 rows (the MMA's N) x up to 16 tokens (its M) x the whole K; warp w takes
// the 32-k steps w, w + 16, ... of each pass (8 rows x 64 bytes per warp and step: lane (g, t) loads 16 bytes of row g
// at k = 32 step + 8 t, all of a pass's loads issued at entry). One 16-byte load feeds two m16n8k16 MMAs: the MMA's
// logical k pairs (2t, 2t + 1) and (2t + 8, 2t + 9) of lane t are the actual k pairs (0, 1) and (2, 3) (then (4, 5),
// (6, 7)) of its own 8 k, in x's fragment as in the weights' (a permutation of K inside each step: the dot products are
// the same). x: one bulk copy per token and pass into unpadded rows, each 128-byte aligned: a bulk copy into a
// destination off that alignment streams far slower (rows padded by 64 bytes, conflict-free for the fragment reads,
// made x land 0.6 us later at 8 tokens and the slice 0.5-0.6 us slower at 4-8; perf-notes step 213); the fragment
// reads are then 2-way bank conflicted (8 or 16 per thread and pass: nothing measurable).
// Each warp accumulates its steps in four fixed chains, then the 16 warps' tiles are summed in order by one thread per output:
// nothing depends on m (tokens are the MMA's independent rows), so the outputs are bitwise batch invariant over m.
// kC12 (sessions 37, 38, perf-notes steps 179, 180): the weights in the simt 12-bit layout (format.hpp Simt12: per lane and pass
// six 16-byte loads instead of eight, the same k of every step), decoded in the coded domain (true x 2^d) into the same
// B registers; an exception's slot holds the placeholder p, and after each pass's MMAs thread (token, row) adds, per
// entry of its row in that pass in ascending k, dp -= p x and dw += w x; the output is (P 2^-d + dp) + dw.
constexpr int kMmaRows = 8, kMmaXPad = 0;  // (x's row pad: 0, perf-notes step 213)
template <int U, int MT, bool kC12 = false>  // MT: tokens per CTA, 8 (the MMA's rows 8..15 are zeros) or 16
__global__ void __launch_bounds__(kThreads, 1) simt_mma_kernel(const Args a) {
  static_assert(MT == 8 || MT == 16, "tokens per CTA");
  static_assert(!kC12 || (U == format::kSimtSteps && kThreads / 32 == format::kSimtWarps && kMmaRows == format::kSimtRows),
                "the 12-bit layout's pass");
  extern __shared__ __align__(16) uint8_t smem[];
  const int i = threadIdx.x, lane = i & 31, warp = i >> 5, g = lane >> 2, t4 = lane & 3;
  const int r0 = static_cast<int>(blockIdx.x) * kMmaRows, tok0 = static_cast<int>(blockIdx.y) * MT;
  const int mt = min(MT, a.m - tok0);
  constexpr int kPassK = 32 * (kThreads / 32) * U;  // k per pass
  const int xrow = kPassK * 2 + kMmaXPad;            // bytes per token row of x in shared memory
  static_assert((kPassK * 2 + kMmaXPad) % 128 == 0, "every token's bulk copy of x must land 128-byte aligned (step 213)");
  const __nv_bfloat16* w = static_cast<const __nv_bfloat16*>(a.w);
  const uint32_t xs = family::smem_u32(smem), xbar = xs + static_cast<uint32_t>(a.bar_off);
  unsigned long long* const trace = i == 0 ? a.trace : nullptr;
  if (trace) stamp(trace, 0);
  if (i == 0) {
    family::mbar_init(xbar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  // Four independent accumulators (step parity x the step's two MMAs), added in a fixed order at the end: a chain of
  // U / 2 MMAs each instead of 2 U after the last load lands.
  float acc[4][4] = {};
  const bool row_ok = r0 + g < a.rows;
  float dp = 0.f, dw = 0.f;  // (kC12) the exception corrections of output (token i / 8, row i % 8)
  // (kC12) the row's first kSlots entries, from the block's own bytes ahead of its weights (the same stream: no side
  // table, no dependent load, perf-notes step 180), loaded at entry with the weights
  constexpr int kSlots = format::kSimtSlots;
  [[maybe_unused]] uint2 pre[kSlots] = {};
  const bool corrects = kC12 && a.no_exc != 1 && i < MT * kMmaRows && i / kMmaRows < mt;
  [[maybe_unused]] const uint8_t* const block =
      static_cast<const uint8_t*>(a.w) +
      static_cast<int64_t>(blockIdx.x) * (format::kSimtSlotBytes + static_cast<int64_t>(a.passes) * format::kSimtPassBytes);
  if constexpr (kC12) {
    static_assert(kSlots == 4, "two 16-byte loads per row");
    if (corrects) {
      const uint4 s0 = ld_stream16(block + (i % kMmaRows) * kSlots * 8), s1 = ld_stream16(block + (i % kMmaRows) * kSlots * 8 + 16);
      pre[0] = make_uint2(s0.x, s0.y);
      pre[1] = make_uint2(s0.z, s0.w);
      pre[2] = make_uint2(s1.x, s1.y);
      pre[3] = make_uint2(s1.z, s1.w);
    }
  }
  for (int p0 = 0, pass = 0; p0 < a.k; p0 += kPassK, ++pass) {
    if (pass > 0) {
      // every warp is done with the previous pass's x; its generic-proxy reads ordered before the bulk copy (async
      // proxy) that refills it, as the PTX memory model asks (perf-notes steps 183, 184)
      family::fence_proxy_async_smem();
      __syncthreads();
    }
    const int kp = min(kPassK, a.k - p0);
    if (i == 0) {
      const uint32_t bytes = static_cast<uint32_t>(kp * 2);
      family::mbar_arrive_expect_tx(xbar, bytes * static_cast<uint32_t>(mt));
      for (int t = 0; t < mt; ++t)
        family::bulk_g2s(xs + static_cast<uint32_t>(t * xrow), a.x + static_cast<int64_t>(tok0 + t) * a.k + p0, bytes,
                         xbar);
    }
    uint4 wv[U];
    [[maybe_unused]] uint4 cw[kC12 ? U / 4 : 1][3];  // (kC12) quad q: the low bytes of steps 4q, 4q + 1; of 4q + 2, 4q + 3; high words
    if constexpr (kC12) {
      const uint8_t* blk =
          block + format::kSimtSlotBytes + static_cast<int64_t>(pass) * format::kSimtPassBytes + warp * 512 + lane * 16;
#pragma unroll
      for (int q = 0; q < U / 4; ++q)
#pragma unroll
        for (int c = 0; c < 3; ++c) cw[q][c] = ld_stream16(blk + (q * 3 + c) * (kThreads / 32) * 512);
    } else {
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int k = p0 + 32 * (warp + (kThreads / 32) * j) + 8 * t4;
        wv[j] = row_ok && k < a.k ? ld_stream16(w + static_cast<int64_t>(r0 + g) * a.k + k) : make_uint4(0, 0, 0, 0);
      }
    }
    family::mbar_wait(xbar, static_cast<uint32_t>(pass & 1));
    if (trace && pass == 0) stamp(trace, 1);
    // x's fragments of every step first (x lands long before the weights), then the MMAs as the weights land.
    uint4 xa[U], xb[MT == 16 ? U : 1];  // tokens g and g + 8 (zero past mt and K)
#pragma unroll
    for (int j = 0; j < U; ++j) {
      const int kk = 32 * (warp + (kThreads / 32) * j) + 8 * t4;  // inside the pass
      xa[j] = kk < kp && g < mt ? *reinterpret_cast<const uint4*>(smem + g * xrow + kk * 2) : make_uint4(0, 0, 0, 0);
      if constexpr (MT == 16)
        xb[j] = kk < kp && g + 8 < mt ? *reinterpret_cast<const uint4*>(smem + (g + 8) * xrow + kk * 2)
                                      : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int j = 0; j < U; ++j) {
      if constexpr (kC12) {  // step j's registers, decoded as its chunks land (each MMA waits for its own step only)
        const uint4& lo = cw[j >> 2][(j >> 1) & 1];
        const uint4& hi = cw[j >> 2][2];
        const uint32_t hw = (j & 3) == 0 ? hi.x : (j & 3) == 1 ? hi.y : (j & 3) == 2 ? hi.z : hi.w;
        uint32_t r[4];
        decode::regs12_coded(j & 1 ? lo.z : lo.x, j & 1 ? lo.w : lo.y, hw, a.dec_or, r);
        wv[j] = make_uint4(r[0], r[1], r[2], r[3]);
      }
      uint4 xh = make_uint4(0, 0, 0, 0);
      if constexpr (MT == 16) xh = xb[j];
      const uint32_t a0[4] = {xa[j].x, xh.x, xa[j].y, xh.y}, a1[4] = {xa[j].z, xh.z, xa[j].w, xh.w};
      family::mma(acc[2 * (j & 1)], a0, wv[j].x, wv[j].y);
      family::mma(acc[2 * (j & 1) + 1], a1, wv[j].z, wv[j].w);
    }
    if constexpr (kC12) {  // this pass's entries of the output's row (ascending k)
      // The slots are used from here only: an opaque redefinition that depends on the MMAs' sums keeps the compiler
      // from hoisting their uses (and with them the wait for their load) above the weight loads (perf-notes step 180:
      // hoisted out of the pass loop, that wait cost 0.35 us).
#pragma unroll
      for (int q = 0; q < kSlots; ++q)
        asm volatile("" : "+r"(pre[q].x), "+r"(pre[q].y) : "f"(acc[0][0]), "f"(acc[1][0]), "f"(acc[2][0]), "f"(acc[3][0]));
      const int tok = i / kMmaRows;
      auto apply = [&](uint2 en) {
        const int kk = static_cast<int>(en.x) - p0;  // (an empty slot: -1 - p0)
        if (kk < 0 || kk >= kp) return;
        const float xv = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(smem + tok * xrow + kk * 2));
        dp = fmaf(-a.exc_p, xv, dp);
        dw = fmaf(__uint_as_float(en.y << 16), xv, dw);
      };
      if (corrects && a.no_exc == 2) {  // bench: wait for the slots, correct nothing
        uint32_t any = 0;
#pragma unroll
        for (int q = 0; q < kSlots; ++q) any ^= pre[q].x ^ pre[q].y;
        if (any == 0x9E3779B9u) dp = 1.f;
      } else if (corrects) {
#pragma unroll
        for (int q = 0; q < kSlots; ++q) apply(pre[q]);
        if (pre[kSlots - 1].x != ~0u) {  // a full row: its further entries (rare) from the side table
          const int r = static_cast<int>(blockIdx.x) * kMmaRows + i % kMmaRows;
          for (uint32_t e = a.exc_off[r]; e < a.exc_off[r + 1]; ++e)
            apply(*reinterpret_cast<const uint2*>(a.exc + 2 * static_cast<size_t>(e)));
        }
      }
    }
  }
  if (trace) stamp(trace, 2);
  __syncthreads();  // x is dead: its space holds the warps' tiles
  if (trace) stamp(trace, 3);
  // d: (token g, rows 2 t4, 2 t4 + 1), (token g + 8, the same rows) -> red[warp][token][row]
  float d[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) d[q] = (acc[0][q] + acc[1][q]) + (acc[2][q] + acc[3][q]);
  float* red = reinterpret_cast<float*>(smem);
  constexpr int kTile = MT * kMmaRows;
  red[warp * kTile + g * kMmaRows + 2 * t4] = d[0];
  red[warp * kTile + g * kMmaRows + 2 * t4 + 1] = d[1];
  if constexpr (MT == 16) {
    red[warp * kTile + (g + 8) * kMmaRows + 2 * t4] = d[2];
    red[warp * kTile + (g + 8) * kMmaRows + 2 * t4 + 1] = d[3];
  }
  __syncthreads();
  const int tok = i / kMmaRows, row = i % kMmaRows;
  if (i < kTile && tok < mt && r0 + row < a.rows) {
    float sum = red[i];
#pragma unroll
    for (int w2 = 1; w2 < kThreads / 32; ++w2) sum += red[w2 * kTile + i];
    if constexpr (kC12) sum = (sum * a.out_scale + dp) + dw;
    store_out(static_cast<__nv_bfloat16*>(a.out), static_cast<int64_t>(tok0 + tok) * a.rows + r0 + row, sum);
  }
  if (trace) stamp(trace, 4);
}

// One launch of either form: grid (row blocks of R, token chunks of MT), 512 threads; shared memory holds x or the
// warps' sums (one region, whichever is larger), then the x copy's mbarrier (Args::bar_off).
template <auto Kern>
void launch_cta(Args b, int r, int mt, size_t xbytes, size_t sums_bytes, cudaStream_t stream, const char* who) {
  const size_t region = (std::max(xbytes, sums_bytes) + 15) / 16 * 16;
  b.bar_off = static_cast<int>(region);
  ensure_dynamic_smem<Kern, 227 * 1024>(who);
  const LaunchCfg cfg(dim3(static_cast<unsigned>((b.rows + r - 1) / r), static_cast<unsigned>((b.m + mt - 1) / mt), 1),
                      kThreads, region + 16, stream, false);
  const cudaError_t e = cudaLaunchKernelEx(&cfg.lc, Kern, b);
  if (e != cudaSuccess) throw Error(fmt::format("solgemm: {} launch: CUDA error: {}", who, cudaGetErrorString(e)));
}

template <int U, int MT, bool kC12 = false>
void launch_mma_variant(const Args& a, cudaStream_t stream) {
  constexpr int kPassK = 32 * (kThreads / 32) * U;
  launch_cta<simt_mma_kernel<U, MT, kC12>>(a, kMmaRows, MT, static_cast<size_t>(std::min(MT, a.m)) * (kPassK * 2 + kMmaXPad),
                                     static_cast<size_t>(kThreads / 32) * MT * kMmaRows * 4, stream, "simt mma kernel");
}

template <class WT, int R, int U, int MT>
void launch_variant(const Args& a, cudaStream_t stream) {
  constexpr int E = Unit<WT>::kE;
  Args b = a;
  // Bulk copies of x: K is one full pass (exactly 512 U units) and x's rows are 16-byte aligned.
  b.bulk_x = (a.k / E == kThreads * U && a.k % 8 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && !a.no_bulk_x)
                 ? 1
                 : 0;
  launch_cta<simt_kernel<WT, R, U, MT>>(b, R, MT, static_cast<size_t>(std::min(MT, a.m)) * U * kThreads * E * 2,
                                        static_cast<size_t>(kThreads / 32) * R * MT * 4, stream, "simt kernel");
}

}  // namespace

bool simt_supports(DType wt, int64_t k, const void* x) {
  const int e = wt == DType::f32 ? 4 : 8;
  return k % e == 0 && reinterpret_cast<uintptr_t>(x) % (2 * e) == 0;
}

// Config: rt_cta = R (rows per CTA), gpw = U (units per row per thread and pass), n_tiles = tokens per CTA; split_k 1,
// wk 1, warps 16 (512 threads). Compiled: the plan's two variants.
void launch_simt(const Config& cfg, DType wt, const void* W, const __nv_bfloat16* x, int64_t m, void* out,
                 int64_t rows, int64_t k, cudaStream_t stream, unsigned long long* trace, bool no_bulk_x) {
  if (!simt_supports(wt, k, x))
    throw Error(fmt::format("solgemm: simt: K = {} must be a multiple of {} and x aligned to {} bytes", k,
                            wt == DType::f32 ? 4 : 8, wt == DType::f32 ? 8 : 16));
  if (m > (int64_t{1} << 30) || rows > (int64_t{1} << 30) || k > (int64_t{1} << 30))
    throw Error(fmt::format("solgemm: simt: m = {}, rows = {}, K = {}; expected each < 2^30", m, rows, k));
  Args a;
  a.w = W;
  a.x = x;
  a.out = out;
  a.m = static_cast<int>(m);
  a.rows = static_cast<int>(rows);
  a.k = static_cast<int>(k);
  a.trace = trace;
  a.no_bulk_x = no_bulk_x ? 1 : 0;
  auto is = [&](int r, int u, int t) {
    return cfg.rt_cta == r && cfg.gpw == u && cfg.n_tiles == t && cfg.split_k == 1 && cfg.wk == 1 &&
           cfg.warps == kThreads / 32;
  };
  if (wt == DType::f32) {
    if (is(2, 4, 8)) return launch_variant<float, 2, 4, 8>(a, stream);
  } else {
    if (is(8, 1, 4)) return launch_variant<__nv_bfloat16, 8, 1, 4>(a, stream);
    // (rt_cta 8 rows, gpw 8 steps, n_tiles 8 or 16 tokens: the same sums, bitwise)
    if (is(8, 8, 8)) return launch_mma_variant<8, 8>(a, stream);
    if (is(8, 8, 16)) return launch_mma_variant<8, 16>(a, stream);
  }
  throw Error(fmt::format("solgemm: simt: no compiled variant for {} weights and layout [{}] (rt_cta = rows per CTA, "
                          "gpw = units per thread, n_tiles = tokens per CTA)", to_string(wt), cfg.str()));
}

void launch_simt12(const Config& cfg, const Simt12View& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream, unsigned long long* trace) {
  if (w.data == nullptr || w.exc_off == nullptr || w.exc == nullptr)
    throw Error("solgemm: simt12: the 12-bit layout's buffers are null (Simt12View)");
  if (rows < 1 || rows > w.rows)
    throw Error(fmt::format("solgemm: simt12: rows = {}; the layout holds the first {} rows", rows, w.rows));
  if (m < 1 || m > (int64_t{1} << 30))
    throw Error(fmt::format("solgemm: simt12: m = {}; expected 1 <= m < 2^30", m));
  if (!simt_supports(DType::bf16, w.k, x))
    throw Error(fmt::format("solgemm: simt12: K = {} must be a multiple of 8 and x aligned to 16 bytes", w.k));
  if (w.passes != (w.k + format::kSimtPassK - 1) / format::kSimtPassK || w.base < 1 ||
      decode::coded_a(w.base) > decode::kCodedMaxA)
    throw Error(fmt::format("solgemm: simt12: layout of K = {} in {} passes at base {}; expected ceil(K / {}) passes "
                            "and a base the coded domain holds", w.k, w.passes, w.base, format::kSimtPassK));
  Args a;
  a.w = w.data;
  a.x = x;
  a.out = out;
  a.m = static_cast<int>(m);
  a.rows = static_cast<int>(rows);
  a.k = static_cast<int>(w.k);
  a.trace = trace;
  a.exc_off = w.exc_off;
  a.exc = w.exc;
  a.passes = static_cast<int>(w.passes);
  const int ca = decode::coded_a(w.base);
  a.dec_or = decode::coded_or(ca);
  a.out_scale = std::ldexp(1.f, w.base - ca);
  a.exc_p = std::ldexp(1.f, w.base - 112);
  a.no_exc = w.no_exc;
  const bool mma = cfg.rt_cta == kMmaRows && cfg.gpw == format::kSimtSteps && cfg.split_k == 1 && cfg.wk == 1 &&
                   cfg.warps == kThreads / 32;
  if (mma && cfg.n_tiles == 8) return launch_mma_variant<format::kSimtSteps, 8, true>(a, stream);
  if (mma && cfg.n_tiles == 16) return launch_mma_variant<format::kSimtSteps, 16, true>(a, stream);
  throw Error(fmt::format("solgemm: simt12: no compiled variant for layout [{}] (the 12-bit layout: rt_cta 8, gpw 8, "
                          "n_tiles 8 or 16)", cfg.str()));
}

}  // namespace solgemm::kernels
