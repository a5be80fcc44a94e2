// Stream family: the raw BF16 weights streamed by TMA into wgmma, any m (tuned for the judge's loads).
//
// Idea: a projection at m <= 256 is (nearly) a copy of W from HBM through the tensor cores. The copy engine
// moves W the cheapest way there is: one thread issues 2-D TMA boxes of 128 rows x 64 k (16 KB; two per stage),
// the swizzled tile is wgmma's A operand as it lands (no registers, no decode, no per-thread address arithmetic),
// and x (B, the token tile: 8..256 tokens x 64 k) comes the same way from L2. With 3-5 stages in flight per SM
// (~200 KB) the memory system sees enough requests to stream at its rate. Weights are read at 16 bits (the
// stored copy every BF16 Weights keeps), so the floor is the BF16 bytes, not the 12-bit code's.
//
// Status (perf-notes steps 58-59): forced only. The main loop streams at about the ceiling's rate per SM, but the
// CTAs of a static split finish 2-4 us apart and the reduction adds 1.3-4.4 us: 0.4-1.2 us behind the vendor
// family at m = 32, further elsewhere. The 12-bit code as its source (decoded into wgmma's register A, or into the
// shared-memory A box) was slower still.
//
//   CTA = 2 consumer warpgroups (64 rows each: wgmma m64nBNk16, BN = tokens per CTA) + 1 producer warp (TMA);
//   BM = 128 weight rows x BN tokens x a K range; grid = row blocks x split (one launch per BN-token chunk).
//   K is split so that row blocks x split fill the SMs once (one CTA per SM); the split CTAs of a row block
//   store FP32 partials to the workspace, meet at a barrier (a 64-bit arrival counter that every launch advances
//   by split: no reset; the launch is cooperative, so all CTAs are resident), and each adds 1/split of the tile
//   in split order: bitwise deterministic, and since the split depends on the shape only (not on m), batch
//   invariant over every m this family serves. Rounded to BF16 once.
//
// Roofline (H200): qkv_gate (2304 x 8192) 37.7 MB -> 9.4 us at the measured streaming ceiling (1.3 us + bytes /
// 4.6 TB/s); at m = 256 9.7 GFLOP -> 9.8 us at 989 TFLOP/s. The partials (split x BM x m x 4 bytes per row
// block) stay in L2.
#include <cuda.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>

#include "async_copy.cuh"
#include "kernels.hpp"
#include "split_barrier.cuh"
#include "wgmma.cuh"

namespace solgemm::kernels {
namespace {

constexpr int kBM = 128;  // weight rows per CTA (two warpgroups of 64)

template <int kBN_, int kKB_>
struct StreamCfg {
  static constexpr int kBN = kBN_;                     // tokens per CTA (wgmma N)
  static constexpr int kKB = kKB_;                     // 64-k steps per stage (each W row: 128 kKB bytes)
  static constexpr int kConsumers = 256;               // two warpgroups
  static constexpr int kThreads = kConsumers + 32;     // + the producer warp
  static constexpr int kABox = kBM * 128;              // W: 128 rows x 64 k
  static constexpr int kBBox = kBN * 128;              // x: kBN tokens x 64 k
  static constexpr int kStepBytes = kABox + kBBox;     // one 64-k step: its W box, then its x box
  static constexpr int kStageBytes = kKB * kStepBytes;
  static constexpr int kStages = (200 * 1024 / kStageBytes) < 12 ? 200 * 1024 / kStageBytes : 12;
  static constexpr int kSmem = kStages * kStageBytes + 1024;
  static constexpr int kAcc = kBN / 2;
  static_assert(kStepBytes % 1024 == 0, "tiles stay 1024-byte aligned (128B swizzle)");
  static_assert(kStages >= 2 && kSmem <= 227 * 1024, "shared memory");
};

struct StreamArgs {
  __nv_bfloat16* out;
  int64_t m;        // tokens of this chunk
  int64_t rows;
  int k_steps;      // 64-k steps of K
  int split;
  float* ws;        // partials: (row block, split index) -> BN x BM floats, token-major
  unsigned long long* cnt;  // this split's arrival counters, one per row block
  unsigned long long* trace;
};

__device__ __forceinline__ void stamp(unsigned long long* trace, int i) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[static_cast<size_t>(blockIdx.x) * 8 + i] = v;
}

template <class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    stream_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap xmap, const StreamArgs a) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t smem0 = family::smem_u32(smem);
  __shared__ __align__(8) uint64_t full[C::kStages], empty[C::kStages];
  __shared__ unsigned long long target;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int split = a.split, sidx = static_cast<int>(blockIdx.x) % split;
  const int row_block = static_cast<int>(blockIdx.x) / split;
  const int ks0 = a.k_steps * sidx / split, n_iter = a.k_steps * (sidx + 1) / split - ks0;
  unsigned long long* const arrive = a.cnt + row_block;

  if (a.trace && tid == 0) stamp(a.trace, 0);
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < C::kStages; ++s) {
      family::mbar_init(family::smem_u32(&full[s]), 1);
      family::mbar_init(family::smem_u32(&empty[s]), C::kConsumers / 32);  // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (split > 1) target = split_barrier_target(arrive, static_cast<unsigned>(split));  // (before arriving)
  }
  __syncthreads();

  if (warp == C::kConsumers / 32) {  // producer: one lane issues every copy of a stage
    if (lane == 0)
      for (int it = 0; it * C::kKB < n_iter; ++it) {
        const int s = it % C::kStages, nb = min(C::kKB, n_iter - it * C::kKB);
        if (it >= C::kStages) family::mbar_wait(family::smem_u32(&empty[s]), static_cast<uint32_t>((it / C::kStages - 1) & 1));
        const uint32_t bar = family::smem_u32(&full[s]), st = smem0 + s * C::kStageBytes;
        const int g0 = ks0 + it * C::kKB;
        family::mbar_arrive_expect_tx(bar, nb * C::kStepBytes);
        for (int b = 0; b < nb; ++b) {
          family::tma_2d(st + b * C::kStepBytes, &wmap, (g0 + b) * 64, row_block * kBM, bar);
          family::tma_2d(st + b * C::kStepBytes + C::kABox, &xmap, (g0 + b) * 64, 0, bar);
        }
      }
    return;  // (the reduction below needs no producer; its barriers are named by thread count)
  }

  // Consumers: warpgroup wg multiplies rows [64 wg, 64 wg + 64) of each step's W box by its x box; a stage's
  // wgmmas complete while the next stage's are issued.
  const int wg = warp >> 2;
  float acc[C::kAcc];
#pragma unroll
  for (int i = 0; i < C::kAcc; ++i) acc[i] = 0.f;
  for (int it = 0; it * C::kKB < n_iter; ++it) {
    const int s = it % C::kStages, nb = min(C::kKB, n_iter - it * C::kKB);
    family::mbar_wait(family::smem_u32(&full[s]), static_cast<uint32_t>((it / C::kStages) & 1));
    const uint32_t st = smem0 + s * C::kStageBytes;
    wgmma_fence();
    for (int b = 0; b < nb; ++b) {
      const uint32_t bx = st + b * C::kStepBytes;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        wgmma_ss<C::kBN>(acc, sw128_desc(bx + wg * 64 * 128 + 32 * kk), sw128_desc(bx + C::kABox + 32 * kk));
    }
    wgmma_commit();
    wgmma_wait<1>();  // the previous stage's wgmmas are done: its slot can be refilled
    if (it > 0 && lane == 0) family::mbar_arrive(family::smem_u32(&empty[(it - 1) % C::kStages]));
  }
  wgmma_wait0();
  if (a.trace && tid == 0) stamp(a.trace, 3);

  // Accumulator fragment (warp w of the warpgroup): n8 block i, reg 4i + q -> row 16 (w % 4) + g + 8 (q >> 1),
  // token 8i + 2t + (q & 1).
  const int g = lane >> 2, t4 = lane & 3;
  const int r_base = wg * 64 + (warp & 3) * 16 + g;  // + 8 h
  if (split == 1) {
#pragma unroll
    for (int i = 0; i < C::kBN / 8; ++i)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t row = static_cast<int64_t>(row_block) * kBM + r_base + 8 * (q >> 1);
        const int tok = 8 * i + 2 * t4 + (q & 1);
        if (row < a.rows && tok < a.m) a.out[tok * a.rows + row] = __float2bfloat16_rn(acc[4 * i + q]);
      }
    return;
  }

  // Split K: the partial (token-major: BN x BM floats) of the valid tokens to the workspace.
  constexpr int kTile = C::kBN * kBM;
  float* const ws = a.ws + static_cast<int64_t>(row_block) * split * kTile;
  float* const mine = ws + sidx * kTile;
#pragma unroll
  for (int i = 0; i < C::kBN / 8; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const int tok = 8 * i + 2 * t4 + (q & 1);
      if (tok < a.m) __stcg(mine + tok * kBM + r_base + 8 * (q >> 1), acc[4 * i + q]);
    }
  // The consumers' barrier (named, 256 threads: the producer warp has left) orders every thread's stores before
  // thread 0 releases this CTA's arrival; then thread 0 polls until the row block's `split` CTAs have arrived.
  asm volatile("bar.sync 1, %0;\n" ::"n"(C::kConsumers) : "memory");
  if (tid == 0) {
    if (a.trace) stamp(a.trace, 1);
    split_barrier_arrive_wait(arrive, target);
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(C::kConsumers) : "memory");
  if (a.trace && tid == 0) stamp(a.trace, 2);

  // This CTA's share of the valid part of the tile (m tokens x BM rows, in float4s: 4 rows of one token), each
  // summed over the split partials in split order (loads in batches of 8 in flight).
  const int nv = static_cast<int>(a.m) * (kBM / 4);
  const int b = static_cast<int>(static_cast<int64_t>(nv) * sidx / split);
  const int e = static_cast<int>(static_cast<int64_t>(nv) * (sidx + 1) / split);
  for (int e4 = b + tid; e4 < e; e4 += C::kConsumers) {
    const int off = 4 * e4;  // = tok * BM + r
    float4 sum = __ldcg(reinterpret_cast<const float4*>(ws + off));
    for (int s0 = 1; s0 < split; s0 += 8) {
      float4 v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (s0 + j < split) v[j] = __ldcg(reinterpret_cast<const float4*>(ws + (s0 + j) * kTile + off));
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (s0 + j < split) sum.x += v[j].x, sum.y += v[j].y, sum.z += v[j].z, sum.w += v[j].w;
    }
    const int tok = off / kBM, r = off % kBM;
    const int64_t row = static_cast<int64_t>(row_block) * kBM + r;
    __nv_bfloat16* o = a.out + tok * a.rows + row;
    if (row + 3 < a.rows && (a.rows & 3) == 0 && (reinterpret_cast<uintptr_t>(a.out) & 7) == 0) {
      const __nv_bfloat162 lo = __floats2bfloat162_rn(sum.x, sum.y), hi = __floats2bfloat162_rn(sum.z, sum.w);
      uint2 pk;
      pk.x = *reinterpret_cast<const uint32_t*>(&lo);
      pk.y = *reinterpret_cast<const uint32_t*>(&hi);
      *reinterpret_cast<uint2*>(o) = pk;
    } else {
      const float vv[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (row + q < a.rows) o[q] = __float2bfloat16_rn(vv[q]);
    }
  }
  if (a.trace) {
    asm volatile("bar.sync 1, %0;\n" ::"n"(C::kConsumers) : "memory");
    if (tid == 0) stamp(a.trace, 6);
  }
}

template <class C>
void launch_chunks(int split, const StreamView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream) {
  ensure_dynamic_smem<stream_kernel<C>, C::kSmem>("stream kernel");
  const int64_t row_blocks = (rows + kBM - 1) / kBM;
  // The split-K barrier needs every CTA of the launch resident: a smaller GPU gets a smaller split (the same one
  // for every m of the shape on that device).
  while (split > 1 && row_blocks * split > resident_ctas_cached<stream_kernel<C>, C::kThreads, C::kSmem>()) --split;
  if (split > 1 && static_cast<size_t>(row_blocks * split * kBM * C::kBN) > w.ws.ws_floats)
    throw Error(fmt::format("solgemm: stream kernel: split-K workspace too small ({} floats needed, {} allocated)",
                            row_blocks * split * kBM * C::kBN, w.ws.ws_floats));
  const int64_t k_steps = (w.k + 63) / 64;
  const CUtensorMap wmap = bf16_tensor_map(w.w, w.k, rows, 64, kBM, "stream kernel: W");
  StreamArgs args{};
  args.rows = rows;
  args.k_steps = static_cast<int>(k_steps);
  args.split = split;
  args.ws = w.ws.ws;
  args.cnt = split > 1 ? w.ws.cnt + static_cast<int64_t>(split - 2) * w.ws.row_blocks : nullptr;  // this split's
  args.trace = w.trace;
  for (int64_t t0 = 0; t0 < m; t0 += C::kBN) {
    args.m = std::min<int64_t>(C::kBN, m - t0);
    args.out = out + t0 * rows;
    const CUtensorMap xmap = bf16_tensor_map(x + t0 * w.k, w.k, args.m, 64, C::kBN, "stream kernel: x");
    const LaunchCfg lcfg(row_blocks * split, C::kThreads, C::kSmem, stream, split > 1);
    const cudaError_t e = cudaLaunchKernelEx(&lcfg.lc, stream_kernel<C>, wmap, xmap, args);
    if (e != cudaSuccess)
      throw Error(fmt::format("solgemm: stream kernel launch (m={}, rows={}, split={}): {}", m, rows, split,
                              cudaGetErrorString(e)));
  }
}

}  // namespace

int stream_tokens(int64_t m) {
  int bn = 8;
  while (bn < m && bn < 256) bn *= 2;
  return bn;
}

StreamWs stream_ws_need(int64_t n, int64_t max_m) {
  // Any split up to kStreamMaxSplit: partials of (row blocks x split <= the SMs) CTAs of <= 256 tokens, and one
  // 64-bit counter per (split, row block).
  int dev = 0, sms = 132;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    cudaGetLastError();
    sms = 132;
  }
  const int64_t row_blocks = (n + kBM - 1) / kBM;
  const int64_t tok = stream_tokens(std::min<int64_t>(max_m, 256));
  StreamWs need;
  need.ws_floats = static_cast<size_t>(std::min<int64_t>(sms, row_blocks * kStreamMaxSplit) * kBM * tok);
  need.row_blocks = row_blocks;
  need.counters = static_cast<size_t>(row_blocks * (kStreamMaxSplit - 1));
  return need;
}

void launch_stream(const Config& cfg, const StreamView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream) {
  const int64_t k_steps = (w.k + 63) / 64;
  int split = std::clamp<int>(cfg.split_k, 1, kStreamMaxSplit);
  split = static_cast<int>(std::min<int64_t>(split, k_steps));
  if (w.k % 8 != 0 || reinterpret_cast<uintptr_t>(x) % 16 != 0 || reinterpret_cast<uintptr_t>(w.w) % 16 != 0)
    throw Error(fmt::format("solgemm: stream kernel: K = {} not a multiple of 8 or x / W not 16-byte aligned "
                            "(TMA); the plan sends such calls to the vendor family", w.k));
  if (split > 1 && (w.ws.ws == nullptr || w.ws.cnt == nullptr || (rows + kBM - 1) / kBM > w.ws.row_blocks))
    throw Error("solgemm: stream kernel: no split-K workspace for this call (stream_ws_need at prepare)");
  // The compiled variants: tokens per CTA (8 .. 256: the next power of two of m; chunks of 256 past it) x two 64-k
  // steps per stage (one at 256 tokens: shared memory). Two steps per stage measured 0.3-1.4 us faster than one
  // or four (perf-notes step 58).
  switch (stream_tokens(m)) {
    case 8: launch_chunks<StreamCfg<8, 2>>(split, w, x, m, out, rows, stream); break;
    case 16: launch_chunks<StreamCfg<16, 2>>(split, w, x, m, out, rows, stream); break;
    case 32: launch_chunks<StreamCfg<32, 2>>(split, w, x, m, out, rows, stream); break;
    case 64: launch_chunks<StreamCfg<64, 2>>(split, w, x, m, out, rows, stream); break;
    case 128: launch_chunks<StreamCfg<128, 2>>(split, w, x, m, out, rows, stream); break;
    default: launch_chunks<StreamCfg<256, 1>>(split, w, x, m, out, rows, stream); break;
  }
}

}  // namespace solgemm::kernels
