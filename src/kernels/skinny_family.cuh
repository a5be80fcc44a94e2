// The skinny kernel family: out = x @ W^T for few tokens, weights streamed once from packed groups.
//
// Idea: the weights are the MMA's A (M) side. A compute warp owns one 16-row tile and a contiguous run of 64-k
// groups. The bytes come through a shared-memory ring (stages x compute warps x one group): a producer warp
// (the CTA's last) copies each stage with cp.async.bulk (complete_tx on the stage's `full` mbarrier) as soon as
// every compute warp has released it (`empty` mbarrier), so the stream never waits for the math (v3; at one
// group per warp there is no ring: direct 16-byte loads). A compute warp reads its slot (LDS.128, half a group
// at a time), turns it into four mma.m16n8k16 A fragments in registers (weight-source policy: Dec12 = 12-bit
// decode, Raw16 = raw BF16, HiLo = two or three BF16 terms for the FP32 router) and
// multiplies them by the tokens (B side, n8 tiles: the CTA stages its k range of x in shared memory with
// cp.async while the weights stream, or, where that would not fit or land late, x comes through the ring with the
// weights (kXR, TMA boxes); the B fragments by ldmatrix.x4).
// Work split: CTA = rt_cta row tiles x wk warps along K (+ the producer); `cs` CTAs (no clusters) split K
// further. The warps of a CTA reduce through shared memory (k ascending); the cs CTAs of one output tile
// reduce either as one thread-block cluster, when the whole grid fits at once (each sums its 1/cs of the tile
// from the peers' shared memory), or through a global FP32 workspace: each writes its partial (valid tokens
// only) and arrives on a per-tile counter. When the whole grid is resident (one cooperative launch), the cs
// CTAs wait for each other at a 64-bit counter that only grows and each sums 1/cs of the tile (perf-notes step
// 61); otherwise the last to arrive sums the cs partials alone and resets its counter to 0. Either way no
// host-side reset (graph-safe), and all paths add in the same order: bitwise deterministic, and
// independent of m (the layout is chosen per shape, never per m; MMA columns are independent).
//
// Exceptions (Dec12): the loop multiplies every exception slot as it is stored, the placeholder p = 2^(base - 112)
// (format.hpp); one more warp, the CTA's exception warp, meanwhile reads the entries of the CTA's rows and k range
// and the x values they meet (from the CTA's staged copy of x where it stages one: split-K layouts; perf-notes steps
// 189-192) and sums, per output element, dp = sum -p x and dw = sum w x (FP32, table order) in shared memory; the
// CTA's partial P then becomes (P + dp) + dw as its k warps' sums are added. The compute warps' loop holds no
// exception code at all, and the correction sits off their path: the exception warp has the whole main loop to do it
// (perf-notes step 111; an in-loop patch or a per-warp correction after the loop cost 0.3-1 us of the compute warps'
// latency, steps 102-109). Exact where it matters: an element whose sum has one nonzero
// term (a probe row) gets p x - p x = 0 exactly, then w x; the order depends on neither m nor how x arrives.
//
// Roofline: at m <= 64 the work is ~2 m FLOP per weight byte-and-a-half: memory-bound by far. Time floor =
// packed bytes / ~4.6 TB/s + ~1.3 us ramp (../shared/anchors). Measured (perf-notes, skinny v3): the ring alone
// streams within ~1.15x of the read ceiling; the decode + MMA of too few warps per SM and the split-K tail
// (~1-2 us) make up the rest.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "async_copy.cuh"
#include "decode.cuh"
#include "decode.hpp"
#include "mma_sync.cuh"
#include "split_barrier.cuh"
#include "solgemm/solgemm.hpp"

namespace solgemm::kernels::family {

constexpr int kMaxStages = 16;
constexpr int kXPhases = 4;                     // x staged in up to this many phases (ring mode)
// full[stages], empty[stages], xph[phases] and the cluster tail's two receive mbarriers; a multiple of 128 bytes, so
// that the ring after them stays 128-byte aligned (the runs with it at +288 bytes were ~0.4 us slower at m <= 8:
// perf-notes step 25)
constexpr int kBarBytes = ((2 * kMaxStages + kXPhases + 2) * 8 + 127) / 128 * 128;
constexpr int kRecvBar = 2 * kMaxStages + kXPhases;  // the cluster tail's receive mbarrier (split-K reduction)
constexpr int kRecvBar1 = kRecvBar + 1;              // the one-sequence pair tail's second (Args::seq: CTA 1's)

struct Args {
  const uint8_t* w0 = nullptr;       // data (packed) or hi (router)
  const uint8_t* w1 = nullptr;       // lo (router)
  const uint8_t* w2 = nullptr;       // lo2 (router, exact)
  const uint32_t* exc_off = nullptr;
  const uint32_t* exc = nullptr;
  const uint32_t* exc_blk = nullptr; // Dec12: the block index of every entry (format::exception_blocks)
  float exc_p = 0.f;                 // Dec12: the placeholder's true value, 2^(base - 112)
  int dl_off = 0;                    // Dec12: shared-memory offset of the corrections (dp, dw: 2 x tile floats)
  uint32_t base_add = 0;             // (base << 7) * 0x10001 (Dec12, true domain: bench diag & 16384 only)
  uint32_t dec_or = 0;               // Dec12 coded domain (decode.hpp): coded_or(A), A = base rounded up to 16
  float out_scale = 1.f;             // 2^-d: the coded sums -> true sums (exact, a power of two)
  const __nv_bfloat16* x = nullptr;  // m x K
  void* out = nullptr;               // m x rows
  int m = 0, rows = 0, k = 0;
  int k_groups = 0, k_blocks = 0;    // of the stored matrix
  int row_tiles = 0;                 // row tiles computed: ceil(rows / 16)
  int rt_cta = 1, wk = 1, gpw = 1, cs = 1;
  int xvec = 1;                      // x rows 16-byte aligned (K % 8 == 0 and x aligned)
  float* ws = nullptr;               // split-K partials (cs > 1): tiles x cs x 8 NT x 16 rt_cta floats
  unsigned* cnt = nullptr;           // one arrival counter per output tile (row block, token chunk); 0 at rest
  size_t ws_cap = 0, cnt_cap = 0;    // capacities (floats, counters) of ws and cnt
  unsigned long long* cnt64 = nullptr;  // the shared tail's counters (SplitWs::cnt64; null: last-arrival tail)
  size_t tiles64 = 0;
  int dist = 0;                      // set by launch: cooperative launch, every CTA sums 1/cs of its tile
  int stages = 1;                    // weight ring depth (set by launch from the shared-memory budget); 0 = direct
  int direct0 = 0;                   // ring mode: group 0 of every warp by plain loads at entry (set by launch)
  int direct0_off = 0;               // bench: 1 = never
  int bar_off = 0;                   // shared-memory offset of the mbarriers (kBarBytes); the ring follows them
  int diag = 0;                      // bench only (kBench kernels): 1 = no decode or MMA, 2 = no reduction,
                                     // 8 = no decode (raw bits as A) (1, 2, 8: wrong out); 4 = the producer
                                     // waits until x and the exception offsets are requested (perf-notes step 9);
                                     // 64 = x staged in one phase; 128 = none (the bench kernel as it is);
                                     // 256 = timeline stamp 2 marks the split-K partial stored (not group 0);
                                     // 8192 = the main loop does not wait for its stages (compute alone on stale
                                     // slots; wrong out: one round of copies, waited for after the loop);
                                     // 16384 = the true-domain 12-bit decode (IADD of base << 7 per
                                     // register, perf-notes step 39) instead of the coded domain (step 42)
  unsigned long long* trace = nullptr;  // bench only: 8 %globaltimer stamps per CTA (see stamp())
  int max_stages = kMaxStages;       // cap on the ring depth
  int allow_cluster = 1;             // let launch use clusters when the whole grid fits at once
  int tile_stride = 0;               // bench only (kGroupMajor): row tiles per k group of the group-major copy
  int xring_req = 0;                 // x through the ring (kXR kernels): 0 = the launcher's rule, 1 = always where
                                     // it applies, -1 = never (bench A/B)
  int xr_off = 0;                    // kXR: shared-memory offset of the x ring (aligned up to 1024 B in the kernel)
  int x4d = 0;                       // kXR: x's map is xtma_map's (one TMA per stage for every k warp's box), else
                                     // bf16_tensor_map's (one 2-D box per k warp)
  int xbox_req = 0;                  // PackedView::xbox (bench A/B; 0 in the library's calls)
  int xbox_rows = 0;                 // kXR: token rows of a box (8 NT; the call's m where a single chunk holds fewer,
                                     // so that no box row is out of bounds: perf-notes step 132)
  int seq_req = 0;                   // Config::k_seq of a pair (make_args)
  int seq = 0;                       // set by launch where seq_req and a pair (cs = 2) runs as one cluster (the
                                     // pair's kernels, kSeqOk): its 2 wk k warps summed as one sequence, as one CTA
                                     // of 2 wk warps would, each CTA finishing half the tile (perf-notes 165, 166)
  // (the two last: the earlier members keep their offsets, so every other kernel's code stays as it was)
};

// The launch arguments every policy shares (layout, x, out, split-K workspace), checked against the matrix:
// the layout must cover its k groups. `who` names the launcher in errors.
inline Args make_args(const char* who, const Config& cfg, const __nv_bfloat16* x, void* out, int64_t m, int64_t rows,
                      int64_t k, int64_t k_groups, const SplitWs& split) {
  if (static_cast<int64_t>(cfg.split_k) * cfg.wk * cfg.gpw < k_groups)
    throw Error(fmt::format("solgemm: {}: layout [{}] covers {} k groups of {}", who, cfg.str(),
                            static_cast<int64_t>(cfg.split_k) * cfg.wk * cfg.gpw, k_groups));
  Args a;
  a.x = x;
  a.out = out;
  a.m = static_cast<int>(m);
  a.rows = static_cast<int>(rows);
  a.k = static_cast<int>(k);
  a.k_groups = static_cast<int>(k_groups);
  a.row_tiles = static_cast<int>((rows + 15) / 16);
  a.rt_cta = cfg.rt_cta;
  a.wk = cfg.wk;
  a.gpw = cfg.gpw;
  a.cs = cfg.split_k;
  a.seq_req = cfg.k_seq && cfg.split_k == 2 ? 1 : 0;  // (pairs only)
  a.xvec = (k % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0) ? 1 : 0;
  a.ws = split.ws;
  a.cnt = split.cnt;
  a.ws_cap = split.ws_floats;
  a.cnt_cap = split.counters;
  a.cnt64 = split.cnt64;
  a.tiles64 = split.tiles64;
  return a;
}

// ---- weight-source policies: loads per lane per group, and the decode into A registers ------------------

// A warp's slot of the ring holds its group's kTerms term-groups back to back, in the global byte order: lane
// L's 16 bytes of chunk c are at c * 512 + 16 L (conflict-free LDS.128). Each half group loads only the
// chunks it needs (the registers of the first half are free before the second half's arrive).
__device__ __forceinline__ uint4 lds16(const uint8_t* slot, int chunk, int lane) {
  return *reinterpret_cast<const uint4*>(slot + chunk * 512 + lane * 16);
}

struct Dec12 {
  static constexpr int kLoads = 3, kTerms = 1;
  static constexpr bool kExc = true;
  using Out = __nv_bfloat16;
  static constexpr const char* name = "dec12";
  static constexpr int kTermBytes = 1536;  // one group of one term (the producer copies kTerms of them)
  __device__ static const uint8_t* term(const Args& a, int) { return a.w0; }
  // Half HS needs the low bytes of chunk HS and the high words (chunk 2, loaded with half 0).
  template <int HS>
  __device__ static void lds_half(const uint8_t* slot, int lane, uint4 (&b)[kLoads]) {
    b[HS] = lds16(slot, HS, lane);
    if (HS == 0) b[2] = lds16(slot, 2, lane);
  }
  // Half a group: k steps 2 HS and 2 HS + 1 (low bytes in chunk HS, high words in chunk 2), in the coded
  // domain (decode.hpp: one rotate, two LOP3 and four PRMT per k step; the sums are scaled by 2^-d after the
  // loop). kTrue (bench only, diag & 16384): the true-domain form with an IADD per register (perf-notes step 39).
  template <int HS, bool kTrue = false>
  __device__ static void decode(const uint4 (&b)[kLoads], const Args& a, uint32_t (&r)[kTerms][2][4]) {
    const uint32_t lo[2][2] = {{b[HS].x, b[HS].y}, {b[HS].z, b[HS].w}};
    const uint32_t hw[2] = {HS ? b[2].z : b[2].x, HS ? b[2].w : b[2].y};
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      if constexpr (kTrue)
        decode::regs12(lo[s][0], lo[s][1], hw[s], a.base_add, r[0][s]);
      else
        decode::regs12_coded(lo[s][0], lo[s][1], hw[s], a.dec_or, r[0][s]);
    }
  }
};

template <int T>  // T raw BF16 matrices in the 16-bit group layout: 1 = packed16, 2 = hi + lo, 3 = exact
struct RawT {
  static constexpr int kLoads = 4 * T, kTerms = T;
  static constexpr bool kExc = false;
  using Out = std::conditional_t<T == 1, __nv_bfloat16, float>;
  static constexpr const char* name = T == 1 ? "raw16" : (T == 2 ? "hilo" : "hilo3");
  static constexpr int kTermBytes = 2048;
  __device__ static const uint8_t* term(const Args& a, int t) { return t == 0 ? a.w0 : (t == 1 ? a.w1 : a.w2); }
  template <int HS>  // chunks 2 HS, 2 HS + 1 of every term
  __device__ static void lds_half(const uint8_t* slot, int lane, uint4 (&b)[kLoads]) {
#pragma unroll
    for (int t = 0; t < T; ++t) {
      b[4 * t + 2 * HS] = lds16(slot, 4 * t + 2 * HS, lane);
      b[4 * t + 2 * HS + 1] = lds16(slot, 4 * t + 2 * HS + 1, lane);
    }
  }
  template <int HS, bool kTrue = false>
  __device__ static void decode(const uint4 (&b)[kLoads], const Args&, uint32_t (&r)[kTerms][2][4]) {
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        const uint4 v = b[4 * t + 2 * HS + s];
        r[t][s][0] = v.x;
        r[t][s][1] = v.y;
        r[t][s][2] = v.z;
        r[t][s][3] = v.w;
      }
  }
};
using Raw16 = RawT<1>;
using HiLo = RawT<2>;
using HiLoExact = RawT<3>;

// The CTA's index in the grid, x fastest (the bench traces' row).
__device__ __forceinline__ size_t cta_linear() { return static_cast<size_t>(blockIdx.y) * gridDim.x + blockIdx.x; }
// Bench timeline (Args::trace, null in the library): stamp i of this CTA = %globaltimer (ns). 0 entry, 1 x staged
// (warp 0), 2 first group done (warp 0), 3 every warp's main loop done, 4 local reduction done, 5 arrival
// counted (split K), 6 output written (last arrival, or the CTA itself without split), 7 = 1 for the last arrival.
__device__ __forceinline__ void stamp(unsigned long long* trace, int i, unsigned long long v = 0) {
  if (v == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[cta_linear() * 8 + i] = v;
}
// Slot 7's flags (above) in its low byte; at entry the CTA's SM (%smid + 1) goes to bits 16.. (bench_util.cuh's
// timeline dump, TIMELINE_DUMP=1).
__device__ __forceinline__ void stamp_sm(unsigned long long* trace) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  stamp(trace, 7, static_cast<unsigned long long>(smid + 1) << 16);
}
__device__ __forceinline__ void stamp_flag(unsigned long long* trace, unsigned long long f) {
  unsigned long long& w = trace[cta_linear() * 8 + 7];
  w = (w & ~0xFFull) | f;
}
// Bench ring trace (diag & kRingTrace, with a trace buffer): per CTA and ring iteration i < 64, %globaltimer at
// kind 0 the producer's copies of stage i issued, 1 warp 0 past stage i's full barrier, 2 the last compute warp
// past it, 3 the producer allowed to refill for i (its empty wait returned); after the 8-per-CTA timeline
// region of kRingTraceOff entries (perf-notes step 87; its run-time tests slow the producer's issue, step 93).
constexpr int kRingTrace = 1 << 22, kRingTraceOff = 16384;
// The kernels' instantiations (skinny_kernel's kBench): the library's (no diagnostics compiled in); the bench's
// with every diagnostic knob (Args::diag, Args::trace); the bench's with the stamps alone (timeline and ring
// trace: the library's loop otherwise, perf-notes step 89).
constexpr int kLibrary = 0, kDiagnostics = 1, kTraceOnly = 2;
// Bench only (one-term sources; kept by the trace-only instantiation): Args::w0 is a group-major copy of the packed
// groups (k group major, row tile minor, Args::tile_stride row tiles per k group: made by the bench), and the
// producer fetches each k warp's row tiles of a stage with one bulk copy (perf-notes step 89's layout, measured on
// the library's loop without changing the library's format).
constexpr int kGroupMajor = 1 << 23;
// Bench (diag & kBareConsumers, the kDiagnostics instantiation only, no clusters): once the barriers are set up, the
// compute warps only wait for each stage, read a word of their slot and release it (bench/stream_study.cu's
// consumers), then leave: the producer's stream in the family's kernel without the compute warps' work (perf-notes
// step 93).
constexpr int kBareConsumers = 1 << 24;
// Bench (with kBareConsumers; one-term sources, CTAs whose every warp has all the CTA's groups, others take the usual
// loop): the producer's loop as the stream study's (no ballot, no per-lane group count, no stamps), perf-notes step 93.
constexpr int kBareProducer = 1 << 25;
// Bench (kept by the trace-only instantiation): no `loop` stamp (3). Its global store sits right before the CTA
// barrier that starts the reduction; with it left out, does the `local` stamp come sooner (perf-notes step 119)?
constexpr int kNoLoopStamp = 1 << 26;
// Bench (kept by the trace-only instantiation; uses the ring trace's region, so not with kRingTrace): per-warp stamps
// of the tail (perf-notes step 120), lane 0 of each warp w at slot w: kind 0 before the CTA barrier after the main
// loop, 1 after it, 2 after the partials' barrier, 3 after the reduced partial's; at slot 32 + w: kind 3 the warp's
// own work done (a compute warp past its last stage's full barrier, the producer's last copies issued, the exception
// warp's corrections stored), kind 0 the cluster barrier passed (push tail) or the split-K arrival seen, 1 the
// pushed shares received, 2 the CTA's outputs stored; warp 0's clock64() at slot 60 (its slot 0 stamps) and 61 (slot 32).
constexpr int kTailTrace = 1 << 28;
// Bench (kDiagnostics instantiation, kXR kernels): the producer issues no x boxes and expects none (the compute warps
// multiply whatever the x slots hold; wrong out): what the x ring's L2 traffic costs (perf-notes step 137).
constexpr int kNoXBox = 1 << 29;
// Bench (kDiagnostics instantiation, Dec12): the exception warp takes x = 1 instead of loading x (no global or shared
// memory reads of x; wrong out): what its x loads cost the compute warps' stream (perf-notes step 193).
constexpr int kExcNoX = 1 << 30;
__device__ __forceinline__ void tail_stamp(unsigned long long* trace, int diag, int slot, int kind) {
  if (trace && (diag & kTailTrace) && (threadIdx.x & 31) == 0) {
    unsigned long long v;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
    const size_t base = kRingTraceOff + cta_linear() * 256;
    trace[base + slot * 4 + kind] = v;
    if (threadIdx.x == 0 && (slot == 0 || slot == 32)) trace[base + (slot ? 61 : 60) * 4 + kind] = clock64();
  }
}
__device__ __forceinline__ void ring_stamp(unsigned long long* trace, int diag, int i, int kind) {
  if (trace && (diag & kRingTrace) && i < 64) {
    unsigned long long v;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
    trace[kRingTraceOff + (cta_linear() * 64 + i) * 4 + kind] = v;
  }
}

__device__ __forceinline__ void store_out(__nv_bfloat16* o, int64_t i, float v) { o[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store_out(float* o, int64_t i, float v) { o[i] = v; }

// Shared memory: x of the CTA's k range, natural layout (8 NT tokens) x (k_cta + 8) BF16 (the 16-byte pad
// makes the ldmatrix rows conflict-free), filled by cp.async (zero-filled past m and K); after the main loop
// the same bytes hold the warps' partial sums (warp, nt, c, lane) as floats.
// At n_tiles 1 only the min(8, m) token rows that exist are staged and allocated: the ldmatrix rows of the
// missing tokens read the last real row (their MMA columns are computed and never stored; columns are independent),
// which saves the zero-fill copies and, for layouts with the whole K per CTA, most of the region (perf-notes
// step 43).
template <int NT>
__host__ __device__ constexpr int x_rows(int m) { return NT == 1 ? (m < 8 ? m : 8) : 8 * NT; }
template <int NT>
__host__ __device__ constexpr size_t x_smem_bytes(int k_cta, int m) {
  return static_cast<size_t>(x_rows<NT>(m)) * (k_cta + 8) * 2;
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
// Release a ring slot that this warp read with generic-proxy loads (ld.shared, ldmatrix) to the producer, whose next
// copies into it are async-proxy writes (cp.async.bulk, TMA). The PTX memory model orders a generic-proxy access before
// a later async-proxy access of the same location only through fence.proxy.async; without it ptxas issued the arrive
// right after the group's last ldmatrix, with their reads still in flight, and under load (another kernel alongside)
// the refill overwrote the x box's second half before those reads: wrong outputs in ~10-40% of the calls at n_tiles >= 2
// (perf-notes step 183, bench/race_probe.cu). Every lane fences its own reads; then one arrive for the warp.
__device__ __forceinline__ void release_slot(uint32_t empty, int lane) {
#ifndef SOLGEMM_NEGATIVE_CONTROL_NO_RELEASE_FENCE  // (CMake SOLGEMM_NEGATIVE_CONTROL: the tests' negative control)
  fence_proxy_async_smem();
#endif
  __syncwarp();
  if (lane == 0) mbar_arrive(empty);
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// Half a group (k steps 2 HS, 2 HS + 1): decode, multiply by every n tile (exception slots as stored: the exception
// warp's corrections join the CTA's partial after the loop). `diag` is 0 in the library (a compile-time constant there).
// x's ldmatrix rows: kSwz = false, the staged x (natural layout, xs_stride BF16 per token row; xrow = this lane's row
// at the group's first column); kSwz = true, the group's x box in the ring (8 NT token rows of 128 bytes, 128B
// swizzle: 16-byte chunk c of row r at chunk c ^ (r & 7); xrow = this lane's row, xs_stride = its chunk offset
// ((lane >> 3) ^ (lane & 7)) 16 for half 0, ^ 64 for half 1).
template <class Src, int NT, int HS, bool kSwz = false>
__device__ __forceinline__ void half_step(const Args& a, const uint4 (&b)[Src::kLoads], uint32_t xrow, int xs_stride,
                                          float (&acc)[Src::kTerms][NT][4], int diag) {
  constexpr int T = Src::kTerms;
  uint32_t r[T][2][4];
  if (diag & 8) {  // bench experiment: raw bits as A (no decode; wrong results)
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) r[t][s][j] = reinterpret_cast<const uint32_t*>(b)[(t * 8 + s * 4 + j) % (4 * Src::kLoads)];
  } else if (diag & 16384) {  // bench: the true-domain decode (perf-notes step 39)
    Src::template decode<HS, true>(b, a, r);
  } else {
    Src::template decode<HS>(b, a, r);
  }
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    uint32_t b00, b01, b10, b11;  // {b0, b1} of k steps 2 HS and 2 HS + 1
    const uint32_t xa = kSwz ? xrow + static_cast<uint32_t>(nt * 1024 + (xs_stride ^ (HS * 64)))
                             : xrow + static_cast<uint32_t>((nt * 8 * xs_stride + HS * 32) * 2);
    ldmatrix_x4(xa, b00, b01, b10, b11);
#pragma unroll
    for (int t = 0; t < T; ++t) {
      mma(acc[t][nt], r[t][0], b00, b01);
      mma(acc[t][nt], r[t][1], b10, b11);
    }
  }
}

// Warps after the producer: the exception warp of sources with exceptions (Dec12).
template <class Src>
constexpr int exc_warps() { return Src::kExc ? 1 : 0; }

// Whether a variant fetches every warp's first group at entry (Args::direct0): one-term policies always; hi + lo
// up to 16 tokens, and at 32 tokens in the 288-thread variant (the 544-thread 32-token and the 64-token hi + lo
// variants are at their register cap: they spill with it).
template <class Src, int NT, int MAXT>
constexpr bool first_group_ok() {
  return Src::kTerms == 1 || NT <= 2 || (NT == 4 && MAXT <= 288);
}

// Whether a variant stages x in phases: 64-token chunks always, 32-token chunks except in the 544-thread hi + lo
// variant (at its register cap: it spills with the phase bookkeeping).
template <class Src, int NT, int MAXT>
constexpr bool x_phases_ok() {
  return NT >= 8 || (NT == 4 && (Src::kTerms == 1 || MAXT <= 288));
}

// The exception warp (Dec12; see the top of this file). Its first loads, issued at the kernel's entry (before the
// weight stream fills the memory queue): lane j < rt_cta, row tile j's entry range [lo, hi) of the blocks touching the
// CTA's k range (a block may straddle two CTAs).
struct ExcBounds {
  uint32_t lo = 0, hi = 0;
};
// v += u, component by component.
__device__ __forceinline__ void add4(float4& v, const float4& u) {
  v.x += u.x;
  v.y += u.y;
  v.z += u.z;
  v.w += u.w;
}
// The exception warp's corrections of float4 e of the CTA's tile (dl4: dp, then dw, `tile` floats each), added to the
// k warps' sum v as (v + dp) + dw.
__device__ __forceinline__ void add_corrections(float4& v, const float4* dl4, int e, int tile) {
  const float4 p = dl4[e], q = dl4[tile / 4 + e];
  v.x = (v.x + p.x) + q.x;
  v.y = (v.y + p.y) + q.y;
  v.z = (v.z + p.z) + q.z;
  v.w = (v.w + p.w) + q.w;
}
// The k groups [x, y) whose exceptions the CTA corrects: its own (split crank); with `seq` (Args::seq, a pair) both
// CTAs take the pair's whole k range. (`seq` is false at compile time in every kernel but the pair's: the others keep
// their code as it was, perf-notes step 166.)
__device__ __forceinline__ int2 cta_k_groups(const Args& a, int crank, bool seq) {
  const int kg0 = seq ? 0 : crank * a.wk * a.gpw;
  return make_int2(kg0, min(kg0 + (seq ? a.cs : 1) * a.wk * a.gpw, a.k_groups));
}
__device__ __forceinline__ ExcBounds exception_bounds(const Args& a, int rblock, int crank, int lane, bool seq) {
  ExcBounds r;
  const int2 kg = cta_k_groups(a, crank, seq);
  const int rt = rblock * a.rt_cta + lane;
  // (seq with an even rt_cta: each CTA of the pair finishes the half of the tile that holds its half of the row
  // tiles, so its exception warp corrects only those, over the pair's whole K: as many entries as without the pair)
  const int half = seq && (a.rt_cta & 1) == 0 ? a.rt_cta / 2 : 0;
  const bool mine = half == 0 || lane / half == crank;
  if (lane < a.rt_cta && rt < a.row_tiles && kg.y > kg.x && mine) {
    const uint32_t* off = a.exc_off + static_cast<int64_t>(rt) * a.k_blocks;
    r.lo = __ldg(off + (kg.x >> 2));
    r.hi = __ldg(off + ((kg.y + 3) >> 2));
  }
  return r;
}
// Then, for the CTA's row tiles and k range (split crank), every entry in table order adds dp[e] = fma(-p, x, dp[e]) and
// dw[e] = fma(w, x, dw[e]) for each valid token of the chunk, e the element (row, token) in the tile's fragment order
// (rtl, nt, c, lane): the warp takes the CTA's entries 32 at a time, each lane one entry, its block index
// (Args::exc_blk, for the entry's k) and the x values it meets, applied in rounds so that the entries of one row go in
// table order (k ascending). While the compute warps stream, every load of this warp waits behind the weights (~1.5 us
// per dependent trip, perf-notes step 189), so the trips are few: the entries of kExcBatch chunks are requested
// together, and where the CTA stages x of its k range in shared memory (kXS: every kernel without the x ring) the x
// values come from there (after x has landed: bar 1 with the compute warps, or the x phases' mbarriers), so a batch
// costs one trip; with the x ring they come from global memory, one more trip per chunk. kXS: the compute warps must
// not overwrite x (region 0) with their partials before this warp is done: it arrives on bar kExcDoneBar at its end.
constexpr int kExcBatch = 4;  // (x from global memory: one chunk at a time, its entries then its x values, as before step 189)
constexpr int kExcDoneBar = 3;  // (named barriers: 1 x staged, 2 a bench diagnostic)
template <int NT, bool kSeq, bool kXS>
__device__ __forceinline__ void exception_warp(const Args& a, uint8_t* smem, ExcBounds eb, int rblock, int crank,
                                               int tok0, int lane, unsigned long long* trace, int xs_stride, int XP,
                                               uint32_t xbars, int nthr_c, bool no_x) {
  const int tile = a.rt_cta * NT * 128;
  float* dp = reinterpret_cast<float*>(smem + a.dl_off);
  float* dw = dp + tile;
  const int2 kg = cta_k_groups(a, crank, kSeq && a.seq);
  const int rt0 = rblock * a.rt_cta;
  // -0 everywhere meanwhile: (P + -0) + -0 == P bit for bit, -0 included
  float4* d4 = reinterpret_cast<float4*>(dp);
  for (int i = lane; i < tile / 2; i += 32) d4[i] = make_float4(-0.f, -0.f, -0.f, -0.f);
  const int lo = static_cast<int>(eb.lo), cnt = static_cast<int>(eb.hi - eb.lo);
  int pre = cnt;  // inclusive prefix over the row tiles (lanes past rt_cta hold 0)
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int v = __shfl_up_sync(0xFFFFFFFFu, pre, o);
    if (lane >= o) pre += v;
  }
  const int total = __shfl_sync(0xFFFFFFFFu, pre, 31), first = pre - cnt;
  __syncwarp();
  const int mc = min(8 * NT, a.m - tok0);
  const int k_lo = kg.x * 64, k_hi = min(kg.y * 64, a.k);  // (entries of straddling blocks outside: skipped)
  const uint16_t* x16 = reinterpret_cast<const uint16_t*>(a.x);
  const uint16_t* xs = reinterpret_cast<const uint16_t*>(smem);  // (kXS: token row t at t xs_stride, k from k_lo)
  const float np = -a.exc_p;
  bool x_here = !kXS;  // (kXS: at least one pass, whose x wait pairs with the compute warps' bar 1 even without entries)
  constexpr int kB = kXS ? kExcBatch : 1;
  for (int c0 = 0; c0 < total || !x_here; c0 += 32 * kB) {
    // The batch's entries, requested together: entry i = c0 + 32 u + lane, of row tile j[u].
    uint32_t ev[kB], bv[kB];
    int jv[kB];
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      const int i = c0 + 32 * u + lane;
      int j = 0;  // entry i's row tile: the last j whose first entry is <= i
      for (int jj = 1; jj < a.rt_cta; ++jj)
        if (__shfl_sync(0xFFFFFFFFu, first, jj) <= i) j = jj;
      const int q = __shfl_sync(0xFFFFFFFFu, lo, j) + i - __shfl_sync(0xFFFFFFFFu, first, j);
      jv[u] = j;
      ev[u] = 0;
      bv[u] = 0;
      if (i < total) {
        ev[u] = __ldg(a.exc + q);
        bv[u] = __ldg(a.exc_blk + q);
      }
    }
    if constexpr (kXS) {
      if (!x_here) {  // once, after the first batch's loads: x of the CTA's k range has landed in shared memory
        if (XP == 0) {
          asm volatile("barrier.sync 1, %0;\n" ::"r"(nthr_c + 32) : "memory");
        } else {
          for (int p = 0; p < XP; ++p) mbar_wait(xbars + 8u * p, 0u);
        }
        x_here = true;
      }
    }
#pragma unroll
    for (int u = 0; u < kB; ++u) {
      if (c0 + 32 * u >= total) break;
      const int i = c0 + 32 * u + lane, j = jv[u];
      const uint32_t e = ev[u];
      int kk = -1;
      if (i < total) {
        const int kb = static_cast<int>(bv[u]) - (rt0 + j) * a.k_blocks;  // k block in its row tile
        kk = kb * 256 + static_cast<int>((e >> 16) & 255);
      }
      const bool valid = kk >= k_lo && kk < k_hi;
      const int rl = j * 16 + static_cast<int>(e >> 24);  // row in the CTA's block
      float xv[kXS ? 1 : 8 * NT];
      if constexpr (!kXS) {
#pragma unroll
        for (int t = 0; t < 8 * NT; ++t)
          xv[t] = valid && t < mc
                      ? (no_x ? 1.f
                              : __uint_as_float(static_cast<uint32_t>(__ldg(x16 + static_cast<int64_t>(tok0 + t) * a.k + kk))
                                                << 16))
                      : 0.f;
      }
      const int kx = kk - k_lo;  // (kXS: the column in shared memory)
      auto xval = [&](int t) {
        if constexpr (kXS) {
          return no_x ? 1.f : __uint_as_float(static_cast<uint32_t>(xs[t * xs_stride + kx]) << 16);
        } else {
          return xv[t];
        }
      };
      const float w = __uint_as_float(e << 16);
      // rounds: the entries of one row in this chunk, in lane (table) order
      const unsigned vm = __ballot_sync(0xFFFFFFFFu, valid);
      const unsigned peers = __match_any_sync(0xFFFFFFFFu, valid ? rl : -1 - lane);
      const int rank = __popc(peers & vm & ((1u << lane) - 1u));
      const int rounds = __reduce_max_sync(0xFFFFFFFFu, valid ? rank + 1 : 0);
      // element of (row rl, token 8 nt + 2 u + h): ((rtl NT + nt) 4 + 2 (rr >> 3) + h) 32 + 4 (rr & 7) + u
      const int el0 = ((rl >> 4) * NT * 4 + ((rl & 15) >> 3) * 2) * 32 + (rl & 7) * 4;
      for (int r = 0; r < rounds; ++r) {
        // (kXS) Tokens 8 nt + 2 u + h (u = 0..3) of a row are 4 consecutive floats of dp and dw (above): one float4 load
        // and store each (perf-notes step 191: the warp is issue-bound). Tokens past m take x = 0: their elements may
        // turn from -0 to +0, and no store of the tile reads them (valid tokens only); the valid ones get the same FMAs.
        if constexpr (kXS) {
          if (valid && rank == r) {
#pragma unroll
            for (int nh = 0; nh < 2 * NT; ++nh) {
              const int off = el0 + ((nh >> 1) * 4 + (nh & 1)) * 32;  // (nt, h) = (nh / 2, nh % 2)
              float4* p4 = reinterpret_cast<float4*>(dp + off);
              float4* w4 = reinterpret_cast<float4*>(dw + off);
              const int t0 = (nh >> 1) * 8 + (nh & 1);  // tokens t0, t0 + 2, t0 + 4, t0 + 6
              float xq[4];
#pragma unroll
              for (int u2 = 0; u2 < 4; ++u2) xq[u2] = t0 + 2 * u2 < mc ? xval(t0 + 2 * u2) : 0.f;
              float4 pv = *p4, wv = *w4;
              pv.x = fmaf(np, xq[0], pv.x);
              pv.y = fmaf(np, xq[1], pv.y);
              pv.z = fmaf(np, xq[2], pv.z);
              pv.w = fmaf(np, xq[3], pv.w);
              wv.x = fmaf(w, xq[0], wv.x);
              wv.y = fmaf(w, xq[1], wv.y);
              wv.z = fmaf(w, xq[2], wv.z);
              wv.w = fmaf(w, xq[3], wv.w);
              *p4 = pv;
              *w4 = wv;
            }
          }
        } else if (valid && rank == r) {  // (x in registers: 4 tokens at a time, element by element; the float4 form
                                          // spilled the 64-register x-ring kernels at n_tiles 2)
          auto elem = [&](int t) { return el0 + ((t >> 3) * 4 + (t & 1)) * 32 + ((t & 7) >> 1); };
#pragma unroll
          for (int t0 = 0; t0 < 8 * NT; t0 += 4) {
            float pv[4], wv[4];
#pragma unroll
            for (int u2 = 0; u2 < 4; ++u2) {
              const int t = t0 + u2;
              pv[u2] = t < mc ? dp[elem(t)] : 0.f;
              wv[u2] = t < mc ? dw[elem(t)] : 0.f;
            }
#pragma unroll
            for (int u2 = 0; u2 < 4; ++u2) {
              const int t = t0 + u2;
              if (t < mc) {
                dp[elem(t)] = fmaf(np, xval(t), pv[u2]);
                dw[elem(t)] = fmaf(w, xval(t), wv[u2]);
              }
            }
          }
        }
        __syncwarp();
      }
    }
  }
  if constexpr (kXS) asm volatile("barrier.arrive %0, %1;\n" ::"n"(kExcDoneBar), "r"(nthr_c + 32) : "memory");
  if (trace && lane == 0) stamp(trace, 5);  // (bench timeline: the corrections done)
}

// kCluster: the cs CTAs of a tile are one thread-block cluster and reduce through distributed shared memory
// (a separate instantiation, so that the workspace variant keeps its register allocation).
// kXR: x through the ring (one-term sources, n_tiles <= 4; split K only for Config::k_seq layouts): instead of staging
// the CTA's whole k range of x before the loop (x of m tokens x K at cs = 1: 128 KB at m = 8 for K = 8192), the
// producer copies, with each stage's weight groups, every k warp's x box of that group (TMA, `xmap`: 64 k x 8 NT
// tokens, 128B swizzle, tokens past m zero-filled, or boxes of a.xbox_rows = m rows whose slot rows past m keep stale
// data in MMA columns never stored: family_dispatch.cuh) into an x ring beside the weight ring (the first group and its x
// boxes come at entry instead, by plain loads and cp.async); the compute warps read it with swizzled ldmatrix rows
// and release the stage after the group. The groups, their order and the sums are the same: bitwise the same output.
template <class Src, int NT, int MAXT, int MINB, bool kCluster, int kBench, bool kXR = false>
__global__ void __launch_bounds__(MAXT, MINB) skinny_kernel(const Args a, const __grid_constant__ CUtensorMap xmap) {
  extern __shared__ __align__(128) uint8_t smem[];
  constexpr int T = Src::kTerms;
  constexpr int kSlot = Src::kLoads * 512;  // bytes of one group (all terms) in a ring slot
  // The pair's kernels (clusters with x through the ring, one-term): the only ones that may run Args::seq
  constexpr bool kSeqOk = kCluster && kXR && Src::kTerms == 1;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nthreads = blockDim.x;
  // Bench-only knobs (Args::diag, Args::trace): compiled in only for the bench's instantiations (kBench): all of
  // them (kDiagnostics), or the stamps alone (kTraceOnly: every other diag test folds away, the library's loop).
  const int diag = kBench == kDiagnostics ? a.diag
                   : kBench == kTraceOnly ? (a.diag & (kRingTrace | kGroupMajor | kNoLoopStamp | kTailTrace))
                                          : 0;
  const bool gm = Src::kTerms == 1 && (diag & kGroupMajor) != 0;  // (bench: the group-major copy, one copy per k warp)
  unsigned long long* const trace = kBench != kLibrary ? a.trace : nullptr;
  const int crank = static_cast<int>(blockIdx.x) % a.cs;  // K split of this CTA
  const int rblock = static_cast<int>(blockIdx.x) / a.cs;
  const int tok0 = blockIdx.y * 8 * NT;                  // token chunk
  const int rt_local = warp % a.rt_cta, kw = warp / a.rt_cta;
  const int rt = rblock * a.rt_cta + rt_local;
  const int g_begin = (crank * a.wk + kw) * a.gpw;       // k group range of this warp
  const int warps = a.rt_cta * a.wk;  // compute warps; warp `warps` is the producer
  const int n = (warp < warps && rt < a.row_tiles) ? max(min(a.gpw, a.k_groups - g_begin), 0) : 0;
  const int k_cta = a.wk * a.gpw * 64, xs_stride = k_cta + 8;
  const int S = a.stages;
  // Ring iterations of the CTA: the groups of its first k warp (the longest k range).
  const int n_iter = min(a.gpw, max(a.k_groups - crank * a.wk * a.gpw, 0));
  // Ring: S stages x warps slots of one group; full[s] (1 arrival + tx bytes) and empty[s] (one arrival per
  // compute warp) at bars + 8 s and bars + 8 (S + s).
  const uint32_t bars = smem_u32(smem) + static_cast<uint32_t>(a.bar_off);
  const int ring_off = a.bar_off + kBarBytes;
  if (trace && threadIdx.x == 0) {
    stamp(trace, 0);
    stamp_sm(trace);
  }
  // Ring mode with a.direct0: a warp's first group comes by plain loads issued before anything else, the ring
  // carries the rest: one-term policies load it into registers, multi-term ones (hi + lo: registers would
  // spill) copy it with cp.async into a slot after the ring, waited for with x. (Direct mode, stages == 0, loads
  // its one group below.) The producer's first bulk copies go out ~1.5 us after entry and land ~1 us later
  // (perf-notes step 44); plain loads issued at entry land with x, ~1 us after entry (steps 49, 50).
  constexpr bool kFirstOk = first_group_ok<Src, NT, MAXT>();
  const int d0 = (kFirstOk && S > 0) ? a.direct0 : 0;  // (kXR kernels are one-term: xring_variant)
  constexpr bool kRegFirst = Src::kTerms == 1;
  const int pre_off = ring_off + S * warps * kSlot;  // (multi-term policies: the first group's slots)
  // Lane's 16 bytes of chunk c of term t of the warp's first group.
  auto first_src = [&](int t, int c) {
    const int64_t grp = gm ? static_cast<int64_t>(g_begin) * a.tile_stride + rt : static_cast<int64_t>(rt) * a.k_groups + g_begin;
    return Src::term(a, t) + grp * Src::kTermBytes + c * 512 + lane * 16;
  };
  uint4 bd[Src::kLoads];
  auto load_first = [&] {  // the warp's first group into registers (direct mode, and one-term policies with d0)
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int c = 0; c < Src::kLoads / T; ++c) bd[t * (Src::kLoads / T) + c] = ld_stream16(first_src(t, c));
  };
  // x through the ring with the first group by plain loads (kXR, d0): that group's x columns, every k warp's box of
  // 8 NT tokens x 64 k, come by cp.async at entry into region 0 (the partials' region, free until the loop ends), in
  // the ring's swizzled box layout (16-byte chunk c of token row r at r 128 + (c ^ (r & 7)) 16; tokens past m and k
  // past K zero-filled), waited for with a barrier of the compute warps before the first group (perf-notes step 128).
  if constexpr (kXR) {
    if (d0 && warp < warps) {
      const uint32_t x0 = smem_u32(smem);
      for (int u = threadIdx.x; u < a.wk * 64 * NT; u += warps * 32) {
        const int kwb = u / (64 * NT), r = (u >> 3) % (8 * NT), c = u & 7;
        const int tok = tok0 + r, kg = (crank * a.wk + kwb) * a.gpw * 64 + c * 8;
        const bool ok = tok < a.m && kg + 8 <= a.k;
        cp_async16(x0 + static_cast<uint32_t>(kwb * NT * 1024 + r * 128 + ((c ^ (r & 7)) << 4)),
                   ok ? a.x + static_cast<int64_t>(tok) * a.k + kg : a.x, ok ? 16 : 0);
      }
    }
  }
  // (Dec12) the exception warp's first loads, at entry
  ExcBounds eb;
  if constexpr (Src::kExc) {
    if (warp == warps + 1) eb = exception_bounds(a, rblock, crank, lane, kSeqOk && a.seq);
  }
  if (d0 && n > 0) {
    if constexpr (kRegFirst) {
      load_first();
    } else {
#pragma unroll
      for (int t = 0; t < T; ++t)
#pragma unroll
        for (int c = 0; c < Src::kLoads / T; ++c)
          cp_async16(smem_u32(smem) + static_cast<uint32_t>(pre_off + warp * kSlot + t * Src::kTermBytes + c * 512 +
                                                             lane * 16),
                     first_src(t, c), 16);
    }
  }

  // x phases (ring mode): phase p holds the x columns of groups [xgb(p), xgb(p + 1)) of every k warp, and its
  // mbarrier xph[p] (at bars + 8 (2 kMaxStages + p)) completes when every compute thread's copies of it have
  // landed, so the first groups start before the whole of x is in (perf-notes step 25).
  const int nthr_c = warps * 32;
  // Only for 32- and 64-token chunks (n_tiles 4, 8: 64-128 KB of x per CTA); at n_tiles <= 2 the phases and the
  // block-wise staging below cost ~0.4 us at m <= 8 and gained nothing at m = 16 (perf-notes step 25; n_tiles 4:
  // step 55).
  constexpr bool kXPh = x_phases_ok<Src, NT, MAXT>();
  const int XP = !kXR && kXPh && S > 0 && a.xvec && !(diag & 64) ? min(a.gpw, kXPhases) : 0;  // (bench: diag & 64 = one)
  auto xgb = [&](int p) { return p * a.gpw / max(XP, 1); };
  const uint32_t xbars = bars + 8u * (2 * kMaxStages);
  // Cluster split-K tail by push (see the reduction): the peers' shares land in this CTA's ring, which must hold
  // the whole tile (cs shares); otherwise the tail pulls after a cluster barrier.
  // The pair's kernels (kSeqOk: clusters with x through the ring) may run Args::seq, whose ring must hold wk warp
  // partials of half the tile; there the flag is computed from the kernel's parameters where used (kept live across
  // the main loop it spilled the 64-register variants). Every other kernel keeps the flag as it was.
  const bool push_c = !kSeqOk && kCluster && S > 0 && S * warps * kSlot >= a.rt_cta * NT * 128 * 4;
  auto push_tail = [&] {
    if constexpr (!kSeqOk) return push_c;
    return a.stages > 0 && a.stages * a.rt_cta * a.wk * kSlot >= a.rt_cta * NT * 128 * 4 * (a.seq ? a.wk : 1);
  };

  // 1. Barriers (ring mode).
  if (S > 0) {  // (direct mode: no barriers, nothing to wait for before the loads)
    if (threadIdx.x == 0) {
      for (int q = 0; q < S; ++q) {
        mbar_init(bars + 8u * q, 1);
        mbar_init(bars + 8u * (S + q), static_cast<unsigned>(warps));
      }
      for (int p = 0; p < XP; ++p) mbar_init(xbars + 8u * p, static_cast<unsigned>(nthr_c));
      if (push_tail()) {  // the peers' shares of my tile slice arrive on it (cs - 1 of them); in the pair's kernels
                          // their byte count is posted after the main loop (before this CTA's cluster arrive), and with
                          // Args::seq CTA 0 receives on the first, CTA 1 on the second
        mbar_init(bars + 8u * kRecvBar, 1);
        if constexpr (kSeqOk) {
          mbar_init(bars + 8u * kRecvBar1, 1);
        } else {
          mbar_arrive_expect_tx(bars + 8u * kRecvBar,
                                static_cast<uint32_t>((a.cs - 1) * (a.rt_cta * NT * 128 / a.cs) * 4));
        }
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }
  if (kBench == kDiagnostics && !kCluster && (diag & kBareConsumers) && S > 0 && warp < warps) {
    uint32_t acc = 0, ph = 0;
    int s = 0;
    for (int i = d0; i < n_iter; ++i) {
      mbar_wait(bars + 8u * s, ph);
      acc ^= reinterpret_cast<const uint32_t*>(smem + ring_off + (s * warps + warp) * kSlot)[lane];
      release_slot(bars + 8u * (S + s), lane);
      if (++s == S) {
        s = 0;
        ph ^= 1u;
      }
    }
    if (acc == 0x12345678u) static_cast<uint32_t*>(a.out)[0] = acc;  // (keeps the reads)
    return;
  }
  // 2. x of the CTA's k range into shared memory (compute warps; cp.async, zero-fill past m and K), and the
  //    exception offsets and entries of this warp's blocks. (kXR: x comes through the ring instead.)
  // x ring (kXR): stage q, k warp kw: the box at xr0 + (q wk + kw) NT 1024 (1024-aligned: the swizzle's period).
  const uint32_t xr0 = (smem_u32(smem) + static_cast<uint32_t>(a.xr_off) + 1023u) & ~1023u;
  if (warp < warps && !kXR) {
    const int kc0 = crank * k_cta;
    if (!kXPh && a.xvec) {
      const int upt = k_cta / 8;
      const uint32_t xs = smem_u32(smem);
      for (int u = threadIdx.x; u < x_rows<NT>(a.m) * upt; u += nthr_c) {
        const int tl = u / upt, kk = (u % upt) * 8;
        const int tok = tok0 + tl, kg = kc0 + kk;
        const bool ok = tok < a.m && kg + 8 <= a.k;
        const __nv_bfloat16* src = ok ? a.x + static_cast<int64_t>(tok) * a.k + kg : a.x;
        cp_async16(xs + static_cast<uint32_t>((tl * xs_stride + kk) * 2), src, ok ? 16 : 0);
      }
    } else if (a.xvec) {
      // Block (kw, g): the 64 k columns of group g of k warp kw for all 8 NT token rows, one warp's job: lane L
      // copies 16 bytes (columns 8 (L & 7) ..) of rows 4 j + (L >> 3), j < 2 NT. No divisions per copy (the
      // issue of x was measurably slow with them: perf-notes step 25).
      const uint32_t xs = smem_u32(smem);
      auto stage_block = [&](int kwb, int gb) {
        const int kk = kwb * a.gpw * 64 + gb * 64 + (lane & 7) * 8, kg = kc0 + kk;
#pragma unroll
        for (int j = 0; j < 2 * NT; ++j) {
          const int tl = 4 * j + (lane >> 3), tok = tok0 + tl;
          const bool ok = tok < a.m && kg + 8 <= a.k;
          const __nv_bfloat16* src = ok ? a.x + static_cast<int64_t>(tok) * a.k + kg : a.x;
          cp_async16(xs + static_cast<uint32_t>((tl * xs_stride + kk) * 2), src, ok ? 16 : 0);
        }
      };
      for (int p = 0; p < max(XP, 1); ++p) {  // (XP == 0: one pass over every block, waited for below)
        const int g0 = XP ? xgb(p) : 0, ng = XP ? xgb(p + 1) - g0 : a.gpw;  // groups of this phase, per k warp
        for (int bl = warp; bl < a.wk * ng; bl += warps) {
          const int kwb = bl / ng;
          stage_block(kwb, g0 + bl - kwb * ng);
        }
        // this thread's copies so far arrive on xph[p] when they land (the pending count is not raised)
        if (XP) asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(xbars + 8u * p) : "memory");
      }
    } else {
      uint16_t* xs = reinterpret_cast<uint16_t*>(smem);
      const uint16_t* x16 = reinterpret_cast<const uint16_t*>(a.x);
      for (int u = threadIdx.x; u < x_rows<NT>(a.m) * k_cta; u += nthr_c) {
        const int tl = u / k_cta, kk = u % k_cta;
        const int tok = tok0 + tl, kg = kc0 + kk;
        xs[tl * xs_stride + kk] = (tok < a.m && kg < a.k) ? x16[static_cast<int64_t>(tok) * a.k + kg] : uint16_t{0};
      }
    }
  }

  // 3. The producer warp streams the weights: lane w copies compute warp w's group of each stage
  //    (cp.async.bulk, complete_tx on full[s]) once lane 0 has seen the stage's slots released (empty[s]; the
  //    first round passes at once) and posted the stage's byte count. (Measured: compute warps that issue bulk
  //    copies themselves stall on the issue; perf-notes, skinny v3.) It skips the compute warps' part above, so
  //    it starts at once. Bench diagnostic (a.diag & 4): it waits until the compute warps have issued their x
  //    copies and exception-offset loads (perf-notes step 9; the branch also happens to keep the 544-thread HiLo
  //    variants from spilling 16 bytes).
  if ((a.diag & 4) && S > 0 && warp < warps) asm volatile("barrier.arrive 2, %0;\n" ::"r"((warps + 1) * 32) : "memory");
  if ((a.diag & 4) && S > 0 && warp == warps) asm volatile("barrier.sync 2, %0;\n" ::"r"((warps + 1) * 32) : "memory");
  if (kBench == kDiagnostics && !kCluster && Src::kTerms == 1 && (diag & kBareConsumers) && (diag & kBareProducer) &&
      warp == warps && S > 0) {
    const int prt = rblock * a.rt_cta + lane % a.rt_cta, g0 = (crank * a.wk + lane / a.rt_cta) * a.gpw;
    // (only where its fixed byte count is right: every copying lane has all n_iter groups; else the loop below)
    if (__all_sync(0xFFFFFFFFu, lane >= warps || (prt < a.row_tiles && g0 + n_iter <= a.k_groups))) {
      if (lane < warps) {
        const uint8_t* src = Src::term(a, 0) + (static_cast<int64_t>(prt) * a.k_groups + g0) * Src::kTermBytes;
        const uint32_t dst0 = smem_u32(smem) + static_cast<uint32_t>(ring_off + lane * kSlot);
        int q = 0;
        uint32_t pph = 0;
        for (int i = d0; i < n_iter; ++i) {
          if (lane == 0) {
            mbar_wait(bars + 8u * (S + q), pph ^ 1u);
            mbar_arrive_expect_tx(bars + 8u * q, static_cast<uint32_t>(warps * kSlot));
          }
          __syncwarp(0xFFFFFFFFu >> (32 - warps));
          bulk_g2s(dst0 + static_cast<uint32_t>(q * warps * kSlot), src + i * Src::kTermBytes, Src::kTermBytes,
                   bars + 8u * q);
          if (++q == S) {
            q = 0;
            pph ^= 1u;
          }
        }
      }
      return;
    }
  }
  if (warp == warps && S > 0) {
    int pn = 0;
    int64_t pg = 0;
    if (lane < warps) {
      const int prt = rblock * a.rt_cta + lane % a.rt_cta, g0 = (crank * a.wk + lane / a.rt_cta) * a.gpw;
      pn = prt < a.row_tiles ? max(min(a.gpw, a.k_groups - g0), 0) : 0;
      pg = static_cast<int64_t>(prt) * a.k_groups + g0;
    }
    // (bench, kGroupMajor: k warp kw's groups, those of its first warp, whose row tile is always a real one; and the
    // row tiles of this CTA's block)
    const int kw_pn = gm ? __shfl_sync(0xFFFFFFFFu, pn, (min(lane, a.wk - 1) * a.rt_cta) & 31) : 0;
    // (kXR: lane kw < wk copies k warp kw's x box of each stage where that k warp has a group)
    const int xpn = kXR && lane < a.wk ? max(min(a.gpw, a.k_groups - (crank * a.wk + lane) * a.gpw), 0) : 0;
    if (kXR && lane == 0) prefetch_tensormap(&xmap);
    const int nv = gm ? min(a.rt_cta, a.row_tiles - rblock * a.rt_cta) : 0;
    // (bench, no tail: stamps 4, 5, 6 = the producer's lane setup done, its first stage posted, its copies issued)
    if (trace && (diag & 2) && lane == 0) stamp(trace, 4, pg == 12345 ? 1ull : 0ull);
    int q = 0;
    uint32_t pph = 0;
    for (int i = d0; i < n_iter; ++i) {
      if ((diag & 8192) && i >= S + d0) break;  // (bench, compute alone: one round of copies, never reused)
      const unsigned act = __ballot_sync(0xFFFFFFFFu, i < pn);
      const unsigned xact = kXR ? __ballot_sync(0xFFFFFFFFu, i < xpn) : 0u;
      if (lane == 0) {
        if (!(diag & 8192)) mbar_wait(bars + 8u * (S + q), pph ^ 1u);
        ring_stamp(trace, diag, i, 3);
        mbar_arrive_expect_tx(bars + 8u * q, static_cast<uint32_t>(__popc(act) * kSlot +
                                                                  ((diag & kNoXBox) ? 0 : __popc(xact) * a.xbox_rows * 128)));
        if (i == d0 && trace && (diag & 2)) stamp(trace, 5);
      }
      __syncwarp();
      if constexpr (kXR) {
        if (diag & kNoXBox) {
        } else if (a.x4d) {  // (every k warp has i < gpw groups: whole runs)
          if (lane == 0) tma_4d(xr0 + static_cast<uint32_t>(q * a.wk * NT * 1024), &xmap, 0, tok0, i, crank * a.wk, bars + 8u * q);
        } else if (i < xpn) {
          tma_2d(xr0 + static_cast<uint32_t>((q * a.wk + lane) * NT * 1024), &xmap,
                 ((crank * a.wk + lane) * a.gpw + i) * 64, tok0, bars + 8u * q);
        }
      }
      if (gm) {  // (bench: lane kw copies k warp kw's row tiles of the stage, consecutive in the group-major copy)
        if (lane < a.wk && i < kw_pn) {
          const int64_t grp = static_cast<int64_t>((crank * a.wk + lane) * a.gpw + i) * a.tile_stride + rblock * a.rt_cta;
          const uint32_t dst = smem_u32(smem) + static_cast<uint32_t>(ring_off + (q * warps + lane * a.rt_cta) * kSlot);
          bulk_g2s(dst, Src::term(a, 0) + grp * Src::kTermBytes, nv * Src::kTermBytes, bars + 8u * q);
        }
      } else if (i < pn) {
        const uint32_t dst = smem_u32(smem) + static_cast<uint32_t>(ring_off + (q * warps + lane) * kSlot);
#pragma unroll
        for (int t = 0; t < T; ++t)
          bulk_g2s(dst + t * Src::kTermBytes, Src::term(a, t) + (pg + i) * Src::kTermBytes, Src::kTermBytes,
                   bars + 8u * q);
      }
      if (i == d0 && trace && (diag & 2) && lane == 0) stamp(trace, 6);
      if (lane == 0) ring_stamp(trace, diag, i, 0);
      if (++q == S) {
        q = 0;
        pph ^= 1u;
      }
    }
    tail_stamp(trace, diag, 32 + warp, 3);
  }

  if (S == 0 && n > 0) load_first();  // direct mode: the warp's one group (here: earlier, the hi + lo variants spill)
  if (XP == 0 && !kXR) {  // x staged ((Dec12) the exception warp reads it too: exception_warp's kXS)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    // (barrier.sync, not bar.sync: the exception warp meets this barrier at an instruction of its own, and bar.sync is
    // barrier.sync.aligned, which PTX defines only for every thread at the same instruction; compute-sanitizer's
    // synccheck reports the aligned form here, bench/sync_probe, perf-notes step 206. Likewise kExcDoneBar.)
    if (warp < warps) asm volatile("barrier.sync 1, %0;\n" ::"r"(nthr_c + 32 * exc_warps<Src>()) : "memory");
  }
  if (kXR && d0 && warp < warps) {  // the first group's x boxes (above)
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    asm volatile("bar.sync 1, %0;\n" ::"r"(nthr_c) : "memory");
  }
  if (trace && threadIdx.x == 0) stamp(trace, 1);
  // 4. The exception warp (Dec12; the CTA's last warp, after the producer): the corrections of the CTA's partial,
  //    in shared memory before the main loop ends (see the top of this file).
  if constexpr (Src::kExc) {
    // (bench, bare consumers: the compute warps returned above, before x's barrier)
    if (warp == warps + 1 && !(kBench == kDiagnostics && !kCluster && (diag & kBareConsumers) && S > 0)) {
      exception_warp<NT, kSeqOk, !kXR>(a, smem, eb, rblock, crank, tok0, lane, trace, xs_stride, XP, xbars, nthr_c,
                                       (diag & kExcNoX) != 0);
      tail_stamp(trace, diag, 32 + warp, 3);
    }
  }

  // 5. Main loop (compute warps): wait for the stage, read the warp's slot half a group at a time, release it,
  //    decode and multiply. Warps without groups in a stage still wait for it and release it.
  float acc[T][NT][4];
#pragma unroll
  for (int t = 0; t < T; ++t)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[t][nt][c] = 0.f;
  if (warp < warps) {
    // ldmatrix row address of this lane: token (lane & 7) of the n tile, k + 8 (lane >> 3) of the half group.
    // (n_tiles 1: tokens past m read the last staged row, see x_rows)
    const int xtok = NT == 1 ? min(lane & 7, x_rows<NT>(a.m) - 1) : (lane & 7);
    const uint32_t xrow = smem_u32(smem) + static_cast<uint32_t>((xtok * xs_stride + kw * a.gpw * 64 +
                                                                  (lane >> 3) * 8) * 2);
    // One group: half 0, `mid` (the ring's second half load and release), half 1. x from this lane's ldmatrix row
    // `xr`: of the staged x (its stride xs_stride), or with kXR of the group's box in the ring (its swizzled chunk
    // offset xsw).
    const int xsw = ((lane >> 3) ^ (lane & 7)) * 16;
    auto group = [&](uint4 (&b)[Src::kLoads], uint32_t xr, auto&& mid) {
      const int xs = kXR ? xsw : xs_stride;
      if (!(diag & 1)) half_step<Src, NT, 0, kXR>(a, b, xr, xs, acc, diag);
      mid();
      if (!(diag & 1)) half_step<Src, NT, 1, kXR>(a, b, xr, xs, acc, diag);
    };
    if (S == 0) {
      if (n > 0) group(bd, xrow, [] {});
      if (trace && threadIdx.x == 0) stamp(trace, 2, acc[0][0][0] == 12345.f ? 1ull : 0ull);
    } else {
      // x phases still to wait for: their first groups, one byte each (phase 0 starts at group 0; a spent
      // byte shifts out, and no later group is 0), and the next phase's mbarrier
      uint32_t xfirst = 0, xbar = xbars;
      for (int p = XP - 1; p >= 0; --p) xfirst = (xfirst << 8) | static_cast<uint32_t>(xgb(p));
      if (XP == 0) xfirst = 0xFFu;  // (no phases: never matches, gpw <= 112)
      if (d0) {  // the first group came straight from global memory
        if (kXPh && XP > 0) {  // x's phase 0 (its copies arrive after the first group's, which it thus covers)
          mbar_wait(xbar, 0);
          xbar += 8u;
          xfirst >>= 8;
        }
        if (n > 0) {
          if constexpr (kRegFirst) {
            group(bd, kXR ? smem_u32(smem) + static_cast<uint32_t>(kw * NT * 1024 + (lane & 7) * 128) : xrow, [] {});
          } else {
            const uint8_t* pre = smem + pre_off + warp * kSlot;
            uint4 b[Src::kLoads];
            Src::template lds_half<0>(pre, lane, b);
            group(b, xrow, [&] { Src::template lds_half<1>(pre, lane, b); });
          }
        }
        if (trace && threadIdx.x == 0 && !(diag & 256)) stamp(trace, 2, acc[0][0][0] == 12345.f ? 1ull : 0ull);
      }
      int s = 0;
      uint32_t ph = 0;
      for (int i = d0; i < n_iter; ++i) {
        if (kXPh && static_cast<uint32_t>(i) == (xfirst & 0xFFu)) {  // this group's x columns have landed
          mbar_wait(xbar, 0);
          xbar += 8u;
          xfirst >>= 8;
        }
        if (!(diag & 8192)) mbar_wait(bars + 8u * s, ph);
        if (lane == 0 && (warp == 0 || warp == warps - 1)) ring_stamp(trace, diag, i, warp == 0 ? 1 : 2);
        if (i == n_iter - 1) tail_stamp(trace, diag, 32 + warp, 3);
        const uint32_t empty = bars + 8u * (S + s);
        if (i < n) {
          const uint8_t* slot = smem + ring_off + (s * warps + warp) * kSlot;
          uint4 b[Src::kLoads];
          Src::template lds_half<0>(slot, lane, b);
          if constexpr (kXR) {  // (the stage's x box is read by both halves: released after the group)
            const uint32_t xb = xr0 + static_cast<uint32_t>((s * a.wk + kw) * NT * 1024 + (lane & 7) * 128);
            group(b, xb, [&] { Src::template lds_half<1>(slot, lane, b); });
            if (!(diag & 8192)) release_slot(empty, lane);
          } else {
            group(b, xrow + static_cast<uint32_t>(i * 128), [&] {
              Src::template lds_half<1>(slot, lane, b);
              if (!(diag & 8192)) release_slot(empty, lane);  // slot read: release it
            });
          }
        } else {
          __syncwarp();
          if (lane == 0 && !(diag & 8192)) mbar_arrive(empty);
        }
        if (i == 0 && trace && threadIdx.x == 0 && !(diag & 256)) stamp(trace, 2, acc[0][0][0] == 12345.f ? 1ull : 0ull);
        if (++s == S) {
          s = 0;
          ph ^= 1u;
        }
      }
    }
  }
  // Coded-domain sums (Dec12) -> true sums: times 2^-d, exact (a power of two; perf-notes step 42).
  if constexpr (Src::kExc) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[0][nt][c] *= a.out_scale;
  }

  // 6. Reduce in a fixed order (k ascending): terms per warp (hi + lo 2^-8 + lo2 2^-16); warps along K inside
  //    the CTA (local shared memory); then the cs CTAs of the tile (a cluster through distributed shared memory,
  //    or the global workspace, last arrival sums).
  if (XP > 0) asm volatile("cp.async.wait_all;\n" ::: "memory");  // (warps without groups never waited)
  tail_stamp(trace, diag, warp, 0);
  __syncthreads();  // x no longer needed: the partials reuse the shared memory
  tail_stamp(trace, diag, warp, 1);
  if (diag & 2) {  // (bench: no reduction; the loop's end stamped)
    if (trace && threadIdx.x == 0 && !(diag & kNoLoopStamp)) stamp(trace, 3);
    return;
  }
  // Cluster tail by push: tell the peers this CTA's ring is free (they push their partial shares into it). Relaxed:
  // the only accesses it must order are this CTA's reads of the ring, which have all returned (their values went
  // into the MMAs before the barrier above); `.release` made every thread wait at a GPU-scope MEMBAR first (SASS:
  // MEMBAR.ALL.GPU before UCGABAR_ARV), behind the weight stream's traffic (perf-notes step 116). The data the peers
  // push is ordered by the receive mbarrier's complete_tx, not by this barrier.
  if (push_tail()) {
    // (the pair's kernels) What this CTA will receive (cs - 1 shares of the tile; with Args::seq, CTA 0 CTA 1's wk warp
    // partials of half the tile, CTA 1 CTA 0's sum of the other half), posted before the arrive that lets the peers push.
    if (kSeqOk && threadIdx.x == 0) {
      const int tile_f = a.rt_cta * NT * 128;
      const bool first = !a.seq || crank == 0;
      mbar_arrive_expect_tx(bars + 8u * (first ? kRecvBar : kRecvBar1),
                            static_cast<uint32_t>(!a.seq ? (a.cs - 1) * (tile_f / a.cs) * 4
                                                         : (crank == 0 ? a.wk : 1) * (tile_f / 2) * 4));
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  }
  if (trace && threadIdx.x == 0 && !(diag & kNoLoopStamp)) stamp(trace, 3);
  if ((diag & 8192) && S > 0) {  // bench: the loop ran without waiting for its data; let the copies land now
    for (int s = 0; s < min(S, n_iter - d0); ++s) mbar_wait(bars + 8u * s, 0u);  // (the one round of copies)
  }
  float* part = reinterpret_cast<float*>(smem);
  if (warp < warps) {
    // (Dec12, x staged: the exception warp reads x in region 0 until it arrives here)
    if constexpr (Src::kExc && !kXR) asm volatile("barrier.sync %0, %1;\n" ::"n"(kExcDoneBar), "r"(nthr_c + 32) : "memory");
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float v = acc[T - 1][nt][c];
#pragma unroll
        for (int t = T - 2; t >= 0; --t) v = acc[t][nt][c] + v * (1.0f / 256.0f);
        part[((warp * NT + nt) * 4 + c) * 32 + lane] = v;
      }
  }
  __syncthreads();
  tail_stamp(trace, diag, warp, 2);
  const int tile = a.rt_cta * NT * 128;  // elements (rtl, nt, c, lane) of the CTA's output tile
  if ((a.wk > 1 || Src::kExc) && !(kSeqOk && a.seq)) {  // float4 at a time (the tile is a multiple of 128 floats):
                                // the k warps' partials in order, then (Dec12) the exception warp's corrections:
                                // (P + dp) + dw (Args::seq: in the cluster tail below instead)
    float4* part4 = reinterpret_cast<float4*>(part);
    const float4* dl4 = reinterpret_cast<const float4*>(smem + a.dl_off);
    for (int e = threadIdx.x; e < tile / 4; e += nthreads) {
      float4 v = part4[e];
      for (int w = 1; w < a.wk; ++w) add4(v, part4[w * (tile / 4) + e]);
      if constexpr (Src::kExc) add_corrections(v, dl4, e, tile);
      part4[e] = v;
    }
    __syncthreads();
  }
  tail_stamp(trace, diag, warp, 3);
  // `part` holds the tile in the MMA accumulator layout: float (rtl, nt, c, lane), i.e. row 16 rtl + (lane >> 2)
  // + 8 (c >> 1), token 8 nt + 2 (lane & 3) + (c & 1). Each warp reads 16 x 8 blocks (rtl, nt) of it with
  // lane-consecutive addresses (bank-conflict-free); only n tiles with valid tokens (ntv) are read.
  const int mc = min(8 * NT, a.m - tok0);  // valid tokens of this chunk
  const int ntv = (mc + 7) / 8;
  const int tile_rows = a.rt_cta * 16;
  // (cluster variants: the row block is the cluster's index, read again rather than kept live across the main
  // loop, where ptxas spilled it in the 17-warp hi + lo variant)
  int rblock_t = rblock;
  if constexpr (kCluster) {
    uint32_t cid;
    asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(cid));
    rblock_t = static_cast<int>(cid);
  }
  const int row0 = (rblock_t * a.rt_cta) * 16;
  using Out = typename Src::Out;
  Out* out = static_cast<Out*>(a.out);
  auto for_tile = [&](auto&& f) {  // f(row in tile, token in chunk, value), valid tokens only
    for (int blk = warp; blk < a.rt_cta * ntv; blk += nthreads >> 5) {
      const int rtl = blk / ntv, nt = blk % ntv;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int rl = rtl * 16 + (lane >> 2) + 8 * (c >> 1), tl = nt * 8 + 2 * (lane & 3) + (c & 1);
        if (tl < mc) f(rl, tl, part[((rtl * NT + nt) * 4 + c) * 32 + lane]);
      }
    }
  };
  // (row in tile, token in chunk) of element e of the tile in that layout (the cluster tail's shares)
  auto tile_pos = [](int e) {
    const int lane_e = e & 31, c = (e >> 5) & 3, nt = (e >> 7) % NT, rtl = (e >> 7) / NT;
    return make_int2(rtl * 16 + (lane_e >> 2) + 8 * (c >> 1), nt * 8 + 2 * (lane_e & 3) + (c & 1));
  };
  if (trace && threadIdx.x == 0) stamp(trace, 4);
  if constexpr (kCluster) {
    uint32_t rank;  // == crank (the cluster is the tile's cs CTAs), read again rather than kept live (spills)
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    const int crank = static_cast<int>(rank);
    if constexpr (kSeqOk) {
      if (a.seq) {
        // Args::seq (a pair): the pair's 2 wk k warps as one sequence (k ascending), as one CTA of 2 wk warps adds
        // them, then the corrections of the pair's whole k range, (P + dp) + dw (each CTA's exception warp made them
        // over that range for the row tiles of its half: exception_bounds). CTA 0 finishes the first half of the
        // tile, CTA 1 the second: P = ((w0 + .. + w[wk-1]) + w'0 + .. + w'[wk-1]) with w CTA 0's warp partials and w'
        // CTA 1's. Push (the rings hold what arrives): once both CTAs have left their main loops, CTA 0 puts its
        // warps' sum of the second half into CTA 1's ring and CTA 1 its wk warp partials of the first half into CTA
        // 0's (st.async, each completing on the receiver's own mbarrier); else (pull) each reads the other's shared
        // memory after a cluster barrier.
        const bool by_push = push_tail();
        const int h4 = tile / 8;  // float4s of half the tile
        const int e0 = crank == 0 ? 0 : h4;
        const float4* part4 = reinterpret_cast<const float4*>(part);
        const float4* rv4 = reinterpret_cast<const float4*>(smem + ring_off);
        const uint32_t part_s = smem_u32(part), recv = smem_u32(smem) + static_cast<uint32_t>(ring_off);
        const float4* dl4 = reinterpret_cast<const float4*>(smem + a.dl_off);
        namespace cg = cooperative_groups;
        auto peer4 = [&](int w, int e, int q) {  // (pull) warp w's partial float4 e in CTA q's shared memory
          uint32_t ra;
          float4 u;
          asm("mapa.shared::cluster.u32 %0, %1, %2;\n"
              : "=r"(ra)
              : "r"(part_s + 16u * static_cast<uint32_t>(w * (tile / 4) + e)), "r"(q));
          asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                       : "=f"(u.x), "=f"(u.y), "=f"(u.z), "=f"(u.w)
                       : "r"(ra));
          return u;
        };
        auto own_sum = [&](int e) {  // this CTA's k warps in order
          float4 v = part4[e];
          for (int w = 1; w < a.wk; ++w) add4(v, part4[w * (tile / 4) + e]);
          return v;
        };
        if (by_push) {
          asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
          const int peer = crank ^ 1;
          uint32_t rb;
          asm("mapa.shared::cluster.u32 %0, %1, %2;\n"
              : "=r"(rb)
              : "r"(bars + 8u * (crank == 0 ? kRecvBar1 : kRecvBar)), "r"(peer));
          // CTA 0: the sum of its warps over the second half -> CTA 1's ring [h4]; CTA 1: its warps' partials of the
          // first half -> CTA 0's ring [wk][h4]
          const int n_out = crank == 0 ? h4 : a.wk * h4;
          for (int j = threadIdx.x; j < n_out; j += nthreads) {
            const float4 val = crank == 0 ? own_sum(h4 + j) : part4[(j / h4) * (tile / 4) + j % h4];
            uint32_t ra;
            asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(recv + 16u * j), "r"(peer));
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
                         ::"r"(ra), "f"(val.x), "f"(val.y), "f"(val.z), "f"(val.w), "r"(rb)
                         : "memory");
          }
          mbar_wait(bars + 8u * (crank == 0 ? kRecvBar : kRecvBar1), 0);
        } else {
          cg::this_cluster().sync();
        }
        // Finish this CTA's half: CTA 0 its own sum, then CTA 1's warps; CTA 1 CTA 0's sum, then its own warps.
        for (int e = e0 + static_cast<int>(threadIdx.x); e < e0 + h4; e += nthreads) {
          float4 v;
          if (crank == 0) {
            v = own_sum(e);
#pragma unroll 1
            for (int w = 0; w < a.wk; ++w) add4(v, by_push ? rv4[w * h4 + e] : peer4(w, e, 1));
          } else {
            if (by_push) {
              v = rv4[e - h4];
            } else {  // (CTA 0's warps, summed here in the same order)
              v = peer4(0, e, 0);
#pragma unroll 1
              for (int w = 1; w < a.wk; ++w) add4(v, peer4(w, e, 0));
            }
            for (int w = 0; w < a.wk; ++w) add4(v, part4[w * (tile / 4) + e]);
          }
          if constexpr (Src::kExc) add_corrections(v, dl4, e, tile);
          const float vv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int2 pos = tile_pos(4 * e + j);
            if (pos.y < mc && row0 + pos.x < a.rows)
              store_out(out, static_cast<int64_t>(tok0 + pos.y) * a.rows + row0 + pos.x, vv[j]);
          }
        }
        if (trace && threadIdx.x == 0) {
          stamp(trace, 6);
          stamp_flag(trace, 3ull);
        }
        if (!by_push) cg::this_cluster().sync();  // (pull: each stays until the other has read it)
        return;
      }
    }
    // The cs CTAs of this tile are one cluster (launch checked that the whole grid fits at once); CTA q sums
    // share q (1/cs of the tile's elements) in split order (the same additions as the workspace path) and
    // writes it. Push (ring mode, the ring holds the tile): once every CTA has left its main loop (the cluster
    // barrier armed there), each pushes its values of every peer's share into that peer's (free) ring with
    // st.async, completing on the peer's receive mbarrier, and waits only for its own share's data: no barrier
    // after the reads (perf-notes step 32).
    if (push_tail()) {
      const int sh = tile / a.cs, nv = sh / 4;  // share: a multiple of 16 floats (tile = 128 rt NT, cs <= 8)
      const uint32_t recv = smem_u32(smem) + static_cast<uint32_t>(ring_off);  // [cs][sh] floats
      const uint32_t rbar = bars + 8u * kRecvBar;
      asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
      tail_stamp(trace, diag, 32 + warp, 0);
      for (int j = threadIdx.x; j < a.cs * nv; j += nthreads) {
        const int q = j / nv, v = j - q * nv;
        if (q == crank) continue;
        const float4 val = reinterpret_cast<const float4*>(part)[q * nv + v];
        uint32_t ra, rb;
        asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(recv + 16u * (crank * nv + v)), "r"(q));
        asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(rb) : "r"(rbar), "r"(q));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
                     ::"r"(ra), "f"(val.x), "f"(val.y), "f"(val.z), "f"(val.w), "r"(rb)
                     : "memory");
      }
      mbar_wait(rbar, 0);
      tail_stamp(trace, diag, 32 + warp, 1);
      const float* rv = reinterpret_cast<const float*>(smem + ring_off);
      const int e0 = sh * crank;
      for (int e = e0 + static_cast<int>(threadIdx.x); e < e0 + sh; e += nthreads) {
        const int2 pos = tile_pos(e);
        const int rl = pos.x, tl = pos.y;
        if (tl >= mc || row0 + rl >= a.rows) continue;
        float sum = 0.f;
        for (int q = 0; q < a.cs; ++q) {
          const float v = q == crank ? part[e] : rv[q * sh + e - e0];
          sum = q == 0 ? v : sum + v;
        }
        store_out(out, static_cast<int64_t>(tok0 + tl) * a.rows + row0 + rl, sum);
      }
      tail_stamp(trace, diag, 32 + warp, 2);
      if (trace && threadIdx.x == 0) {
        stamp(trace, 6);
        stamp_flag(trace, 3ull);
      }
      return;
    }
    // Pull (direct mode, or a ring too small for the tile): after a cluster barrier each CTA reads its share from
    // every CTA's shared memory and waits for its peers before its shared memory goes away.
    namespace cg = cooperative_groups;
    cg::cluster_group cl = cg::this_cluster();
    cl.sync();
    const uint32_t part_s = smem_u32(part);
    const int e0 = tile * crank / a.cs, e1 = tile * (crank + 1) / a.cs;
    for (int e = e0 + static_cast<int>(threadIdx.x); e < e1; e += nthreads) {
      const int2 pos = tile_pos(e);
      const int rl = pos.x, tl = pos.y;
      if (tl >= mc || row0 + rl >= a.rows) continue;
      float sum = 0.f;
#pragma unroll
      for (int q0 = 0; q0 < 8; q0 += 4) {  // 4 peers' loads in flight, added in split order
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (q0 + j < a.cs) {
            uint32_t ra;
            asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(ra) : "r"(part_s + 4u * e), "r"(q0 + j));
            asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v[j]) : "r"(ra));
          }
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (q0 + j < a.cs) sum = q0 + j == 0 ? v[j] : sum + v[j];
      }
      store_out(out, static_cast<int64_t>(tok0 + tl) * a.rows + row0 + rl, sum);
    }
    if (trace && threadIdx.x == 0) {
      stamp(trace, 6);
      stamp_flag(trace, 3ull);
    }
    cl.sync();
    return;
  }
  if (a.cs == 1) {
    for_tile([&](int rl, int tl, float v) {
      if (row0 + rl < a.rows) store_out(out, static_cast<int64_t>(tok0 + tl) * a.rows + row0 + rl, v);
    });
    tail_stamp(trace, diag, 32 + warp, 2);
    if (trace && threadIdx.x == 0) stamp(trace, 6);
    return;
  }
  // Split K across CTAs: the valid partial, token-major ([token][row], tile_rows x mc floats) -> workspace;
  // one thread publishes it (CTA barrier, then an acq_rel arrival count); the tile's CTAs each sum a share
  // (Args::dist) or the last arrival sums all of it: the cs partials in split order (k ascending), 4 rows per
  // thread, straight to the output.
  const int tile_id = static_cast<int>(blockIdx.y) * static_cast<int>(gridDim.x / a.cs) + rblock;
  const int pstride = tile_rows * mc;
  float* w = a.ws + static_cast<int64_t>(tile_id) * a.cs * tile;
  for_tile([&](int rl, int tl, float v) { __stcg(w + crank * pstride + tl * tile_rows + rl, v); });
  __syncthreads();
  if (trace && threadIdx.x == 0 && (diag & 256)) stamp(trace, 2);  // (bench: partial stores issued)
  const float4* w4 = reinterpret_cast<const float4*>(w);
  // Float4s [e_begin, e_end) of the valid partial: the cs partials in split order (k ascending; up to 8 loads in
  // flight), 4 rows per thread, straight to the output.
  auto sum_out = [&](int e_begin, int e_end) {
    for (int e = e_begin + static_cast<int>(threadIdx.x); e < e_end; e += nthreads) {
      float4 sum = __ldcg(w4 + e);
      for (int q0 = 1; q0 < a.cs; q0 += 8) {
        float4 v[8];
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (q0 + j < a.cs) v[j] = __ldcg(w4 + (q0 + j) * (pstride / 4) + e);
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (q0 + j < a.cs) {
            sum.x += v[j].x;
            sum.y += v[j].y;
            sum.z += v[j].z;
            sum.w += v[j].w;
          }
      }
      const int tl = e / (tile_rows / 4), rl = (e % (tile_rows / 4)) * 4;
      const int64_t o = static_cast<int64_t>(tok0 + tl) * a.rows + row0 + rl;
      const float vv[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (row0 + rl + j < a.rows) store_out(out, o + j, vv[j]);
    }
  };
  if (Src::kTerms == 1 && a.dist) {  // (one-term sources only: the 544-thread hi + lo variant would spill)
    // Shared tail (cooperative launch: every CTA is resident): the tile's cs CTAs meet at its counter
    // (split_barrier.cuh; the target taken from the atomic's old value, so none is kept across the main loop),
    // then CTA crank sums share crank of the tile: the same additions as the last-arrival tail, in 1/cs of its time.
    if (threadIdx.x == 0) {
      unsigned long long* c = a.cnt64 + static_cast<int64_t>(a.cs - 2) * static_cast<int64_t>(a.tiles64) + tile_id;
      const bool last_in = split_barrier_arrive_wait(c, static_cast<unsigned>(a.cs));
      if (trace) {
        stamp(trace, 5);
        stamp_flag(trace, last_in ? 1ull : 2ull);
      }
    }
    __syncthreads();
    tail_stamp(trace, diag, 32 + warp, 0);
    const int nv4 = pstride / 4;
    sum_out(nv4 * crank / a.cs, nv4 * (crank + 1) / a.cs);
    tail_stamp(trace, diag, 32 + warp, 2);
    if (trace && threadIdx.x == 0) stamp(trace, 6);
    return;
  }
  int last = 0;  // (no static shared memory: the dynamic allowance stays at 227 KB)
  if (threadIdx.x == 0) {
    // acq_rel at GPU scope: releases the CTA's partial (ordered before it by the barrier), and the last
    // arrival acquires every other CTA's; the barrier below passes that on to the CTA's threads.
    unsigned prev;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;\n" : "=r"(prev) : "l"(a.cnt + tile_id) : "memory");
    last = prev == static_cast<unsigned>(a.cs - 1);
    if (trace) {
      stamp(trace, 5);
      stamp_flag(trace, last ? 1ull : 2ull);
    }
  }
  if (!__syncthreads_or(last)) return;
  sum_out(0, pstride / 4);
  if (threadIdx.x == 0) a.cnt[tile_id] = 0u;  // ready for the next launch (stream order)
  if (trace && threadIdx.x == 0) stamp(trace, 6);
}

// ---- host side -------------------------------------------------------------------------------------------

// Shared memory: [x / partials][mbarriers: kBarBytes][ring: stages x warps x one group (all terms)].
// The ring takes what is left of the budget of one of MINB CTAs per SM: stages = min(16, groups per warp,
// what fits) (at gpw <= stages every weight byte of the CTA is requested at once).
// The warps' partial sums (after the loop; alone with kXR, which stages no x).
template <int NT>
inline size_t partial_bytes(const Args& a) {
  return (static_cast<size_t>(a.rt_cta * a.wk) * NT * 4 * 32 * sizeof(float) + 127) / 128 * 128;
}
template <int NT>
inline size_t region0_bytes(const Args& a) {
  const size_t xb = x_smem_bytes<NT>(a.wk * a.gpw * 64, a.m);
  // (the scalar x path, K % 8 != 0, uses the same natural layout)
  return std::max((xb + 127) / 128 * 128, partial_bytes<NT>(a));
}
template <class Src>
inline size_t stage_bytes(const Args& a) { return static_cast<size_t>(a.rt_cta * a.wk) * Src::kLoads * 512; }

// x through the ring (skinny_kernel's kXR): one-term sources (the skinny launches; the router's are two-term and never
// ask), n_tiles <= 4 (xring_variant), no split K (or a Config::k_seq layout), a ring (gpw >= 2), x readable by TMA
// (xvec). The launcher's rule (perf-notes steps 96, 133): from 2 tokens, where the staged x would take more than 12 KB in a CTA of the
// 2-per-SM variant (its per-thread copies of x, every CTA's, land late and hold the first group back: the unpooler's
// 2 x 4 x 16 layout at m = 3 17.6 us staged, 15.3 through the ring) or more than 40 KB in a 1-per-SM CTA (where the
// single producer's slower release costs more: the pooler's 2 x 8 x 16 layout at m = 1 15.3 us staged, 17.2 through
// the ring; step 128's first group at entry did not change that: tuning/2026-11-30_h200_s24-xring-o-pooler12.md).
// a.xring_req: 1 = always where it applies, -1 = never. The caller builds the tensor map of x when it says yes.
// The variants compiled with x through the ring: one-term sources at n_tiles 1, 2 and 4 (17..32 tokens: the staged x of
// a whole-K CTA, 32 tokens x K, cannot fit), in both the 1-CTA and the 2-CTA-per-SM variants (the latter with up to 8
// compute warps at n_tiles 4: the unpooler's 2 x 4 x 16 layout at 17..32 tokens, perf-notes step 131).
template <class Src, int NT>
constexpr bool xring_variant() { return Src::kTerms == 1 && NT <= 4; }
constexpr size_t kXRingMinBytes2 = 12 * 1024, kXRingMinBytes1 = 40 * 1024;
// The x ring's depth (unless the bench caps it): 4 stages measured 0.3-0.4 us faster than the 5-6 that fit.
constexpr int kXRingStages = 4;
inline bool use_xring(const Args& a, int nt, bool two_per_sm) {
  if (nt > 4 || !a.xvec || a.gpw < 2 || a.xring_req < 0) return false;
  // (split K: where the layout sums as one sequence (Config::k_seq, the pooler's pair: always, since only its x-ring
  // cluster kernels run that sum) or the bench asks; perf-notes steps 127, 165, 166)
  if (a.cs != 1 && !a.seq_req && a.xring_req <= 0) return false;
  if (a.seq_req) return true;
  const int k_cta = a.wk * a.gpw * 64;
  const size_t xb = nt == 1   ? x_smem_bytes<1>(k_cta, a.m)
                    : nt == 2 ? x_smem_bytes<2>(k_cta, a.m)
                              : x_smem_bytes<4>(k_cta, a.m);
  // (one token's row stays staged: the pooler's 1 x 8 x 16 layout at m = 1, 16 KB of x, 14.4-14.6 us staged against
  // 15.3 through the ring, perf-notes step 133)
  return a.xring_req > 0 || (xb > (two_per_sm ? kXRingMinBytes2 : kXRingMinBytes1) && a.m > 1);
}
// Whole runs: every k warp has gpw groups (gpw wk cs = k groups, K = 64 k groups): xtma_map applies.
inline bool whole_runs(const Args& a) {
  return static_cast<int64_t>(a.gpw) * a.wk * a.cs == a.k_groups && a.k == 64 * a.k_groups;
}
// x (m x K BF16) as 64 k x tokens x run x k warps (whole runs), box = every k warp's 64 k x 8 nt tokens of a stage
// (128B swizzle): one TMA per stage.
inline CUtensorMap xtma_map(const Args& a, int nt) {
  const uint64_t dims[4] = {64, static_cast<uint64_t>(a.m), static_cast<uint64_t>(a.gpw),
                            static_cast<uint64_t>(a.wk) * a.cs};
  const uint64_t strides[3] = {static_cast<uint64_t>(a.k) * 2, 128, static_cast<uint64_t>(a.gpw) * 128};
  const uint32_t box[4] = {64, static_cast<uint32_t>(8 * nt), 1, static_cast<uint32_t>(a.wk)};
  return tensor_map(a.x, 4, dims, strides, box, "skinny: x (one box per stage)");
}
constexpr size_t smem_budget(int minb) { return std::min<size_t>(227 * 1024, 228 * 1024 / minb - 1024); }

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(fmt::format("solgemm: {}: CUDA error: {}", what, cudaGetErrorString(e)));
}

// CTAs of a launch: cs x row blocks x token chunks of 8 nt tokens (grid x = cs * row blocks, y = chunks).
inline dim3 grid_of(const Args& a, int nt) {
  const int rblocks = (a.row_tiles + a.rt_cta - 1) / a.rt_cta;
  return dim3(static_cast<unsigned>(a.cs * rblocks), static_cast<unsigned>((a.m + 8 * nt - 1) / (8 * nt)), 1);
}

// SMs of the current device (queried once per device).
inline int sm_count() {
  static int cached[64] = {};
  int dev = 0;
  check(cudaGetDevice(&dev), "skinny: device");
  if (dev < 0 || dev >= 64) dev = 0;
  if (cached[dev] == 0) {
    RelaxedCapture relaxed;
    int n = 0;
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "skinny: SM count");
    cached[dev] = n;
  }
  return cached[dev];
}

// Workspace a launch needs (floats, counters): tiles (row blocks x token chunks) x cs partials of 8 NT x
// 16 rt_cta floats; one counter per tile. Nothing when cs == 1.
struct WsNeed {
  size_t floats = 0, counters = 0;
};
inline WsNeed ws_need(int m, int rows, int rt_cta, int cs, int nt) {
  if (cs <= 1) return {};
  const size_t rblocks = static_cast<size_t>(((rows + 15) / 16 + rt_cta - 1) / rt_cta);
  const size_t chunks = static_cast<size_t>((m + 8 * nt - 1) / (8 * nt));
  return {rblocks * chunks * static_cast<size_t>(cs) * 8 * nt * 16 * rt_cta, rblocks * chunks};
}

// The shared memory of one CTA (launch, below): region 0 (x staged, or the partials and, with x through the ring, the
// first group's x boxes), the barriers, the weight ring (and the hi + lo first group's slots after it), the x ring, the
// exception warp's corrections. Host arithmetic only (a CPU test checks the plan's layouts against it: at least 3
// stages, perf-notes step 131); `sms`: the GPU's SMs (the 2-CTA variant's ring shrinks where a grid needs 3-4 CTAs per SM).
struct SmemPlan {
  int direct0 = 0, stages = 0;
  size_t r0 = 0, stage = 0, xstage = 0, budget = 0, xr_off = 0, dl_off = 0, smem = 0;
};
template <class Src, int NT, int MAXT, int MINB>
inline SmemPlan smem_plan(const Args& a, bool xr, int64_t sms) {
  SmemPlan p;
  // (Dec12) the exception warp's corrections dp, dw: two floats per element of the CTA's tile, at the end
  const size_t dlb = exc_warps<Src>() ? static_cast<size_t>(a.rt_cta) * NT * 128 * 2 * sizeof(float) : 0;
  // Every warp's first group by plain loads at entry, the ring carries the rest (perf-notes steps 49, 50, 55; which
  // variants: first_group_ok); with x through the ring, one-term sources only, that group's x boxes by cp.async into
  // region 0 (perf-notes step 128).
  p.direct0 = (a.gpw >= 2 && !a.direct0_off && first_group_ok<Src, NT, MAXT>()) ? 1 : 0;  // (xr: one-term sources)
  const size_t x0b = xr && p.direct0 ? static_cast<size_t>(a.wk) * NT * 1024 : 0;
  p.r0 = xr ? std::max(partial_bytes<NT>(a), x0b) : region0_bytes<NT>(a);
  p.stage = stage_bytes<Src>(a);
  p.budget = smem_budget(MINB);
  // kXR: per stage, every k warp's x box (8 NT tokens x 128 bytes), after the weight ring (+ 1 KB to align it).
  p.xstage = xr ? static_cast<size_t>(a.wk) * NT * 1024 : 0;
  const size_t xpad = xr ? 1024 : 0;
  const size_t pre = (p.direct0 && Src::kTerms > 1) ? p.stage : 0;  // multi-term: the first group's slots after the ring
  const int cap = std::min(kMaxStages, a.max_stages < kMaxStages ? a.max_stages : xr ? kXRingStages : kMaxStages);
  const int want = std::max(1, std::min(std::min(a.gpw, a.k_groups) - p.direct0, cap));
  const size_t fixed_b = p.r0 + kBarBytes + pre + xpad + dlb, per_stage = p.stage + p.xstage;
  // The 2-CTA variant with a grid of more than two CTAs per SM: a ring small enough for 3 or 4 CTAs per SM (the
  // whole grid resident at once instead of a second wave; perf-notes step 100), where the layout fits that (at least
  // two stages); else the 2-per-SM budget as before.
  if (MINB == 2) {
    const dim3 grid = grid_of(a, NT);
    const int64_t ctas = static_cast<int64_t>(grid.x) * grid.y;
    const int per_sm = static_cast<int>(std::min<int64_t>(4, (ctas + sms - 1) / sms));
    if (per_sm > 2) {
      const size_t small = smem_budget(per_sm);
      if (fixed_b + 2 * per_stage <= small) p.budget = small;
    }
  }
  const int fit = fixed_b + per_stage <= p.budget ? static_cast<int>((p.budget - fixed_b) / per_stage) : 0;
  p.stages = a.gpw == 1 ? 0 : std::min(want, fit);  // one group per warp: direct loads, no ring (lower latency)
  p.xr_off = p.r0 + kBarBytes + static_cast<size_t>(p.stages) * p.stage;
  const size_t smem0 = p.r0 + (p.stages > 0 ? kBarBytes + static_cast<size_t>(p.stages) * p.stage + pre : 0) +
                       (xr ? xpad + static_cast<size_t>(p.stages) * p.xstage : 0);
  p.dl_off = smem0;  // (a multiple of 16 bytes: every part above is)
  p.smem = smem0 + dlb;
  return p;
}

// Max active clusters of cs CTAs of `kernel` at this grid, block and shared memory: asked once per (kernel, shared
// memory, threads, cs), then cached (0 if the query fails).
template <class Kern>
int max_clusters(Kern kernel, dim3 grid, unsigned threads, size_t smem, int cs) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, size_t, unsigned, int>, int> fits;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), smem, threads, cs);
  auto it = fits.find(key);
  if (it != fits.end()) return it->second;
  RelaxedCapture relaxed;
  LaunchCfg ccfg(grid, static_cast<int>(threads), smem, nullptr, false, cs);
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kernel, &ccfg.lc) != cudaSuccess) {
    cudaGetLastError();
    n = 0;
  }
  fits.emplace(key, n);
  return n;
}

// One launch: grid (cs * row blocks, token chunks), rt_cta * wk compute warps + 1 producer warp; clusters of cs
// CTAs when the whole grid fits at once (split K through DSMEM), else none (split K through the workspace).
// xmap: x's tensor map where use_xring says so (x through the ring), else null. path (tests, bench; null in the
// library's calls): set to how the launch reduced split K (LaunchPath, kernels.hpp).
template <class Src, int NT, int MAXT, int MINB, int kBench = kLibrary>
void launch(Args a, cudaStream_t stream, const CUtensorMap* xmap = nullptr, int* path = nullptr) {
  auto took = [path](LaunchPath p) {
    if (path != nullptr) *path = p;
  };
  auto kern = skinny_kernel<Src, NT, MAXT, MINB, false, kBench>;
  auto kern_c = skinny_kernel<Src, NT, MAXT, MINB, true, kBench>;
  constexpr bool kXrOk = xring_variant<Src, NT>();
  static const bool attrs = [&] {
    RelaxedCapture relaxed;
    check(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024), "smem attribute");
    check(cudaFuncSetAttribute(kern_c, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024), "smem attribute");
    // Clusters of 16, the non-portable size (as_clusters below), best effort: where it cannot be set, the occupancy
    // query says no cluster of 16 fits and such a layout reduces through the workspace.
    auto allow16 = [](auto fn) {
      if (cudaFuncSetAttribute(fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) cudaGetLastError();
    };
    allow16(kern_c);
    if constexpr (kXrOk) {
      check(cudaFuncSetAttribute(skinny_kernel<Src, NT, MAXT, MINB, false, kBench, true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024),
            "smem attribute");
      check(cudaFuncSetAttribute(skinny_kernel<Src, NT, MAXT, MINB, true, kBench, true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024),
            "smem attribute");
      allow16(skinny_kernel<Src, NT, MAXT, MINB, true, kBench, true>);
    }
    return true;
  }();
  (void)attrs;
  const bool xr = kXrOk && xmap != nullptr;
  const CUtensorMap xm = xr ? *xmap : CUtensorMap{};
  if (xr && (a.xbox_rows < 1 || a.xbox_rows > 8 * NT))  // (the stage's expected bytes count xbox_rows per box)
    throw Error(fmt::format("solgemm: skinny launch: x box of {} token rows; expected 1..{} (set with the x map)",
                            a.xbox_rows, 8 * NT));
  const int warps = a.rt_cta * a.wk;
  constexpr int kExcWarps = exc_warps<Src>();
  const SmemPlan sp = smem_plan<Src, NT, MAXT, MINB>(a, xr, MINB == 2 ? sm_count() : 0);
  a.direct0 = sp.direct0;
  a.stages = sp.stages;
  a.bar_off = static_cast<int>(sp.r0);
  a.xr_off = static_cast<int>(sp.xr_off);
  a.dl_off = static_cast<int>(sp.dl_off);
  const size_t r0 = sp.r0, sb = sp.stage, budget = sp.budget, smem = sp.smem;
  const dim3 grid = grid_of(a, NT);
  if (warps < 1 || warps > 31 || (warps + 1 + kExcWarps) * 32 > MAXT || a.cs < 1 || a.cs > 16 || a.gpw < 1 || a.gpw > 112 ||
      (a.gpw > 1 && a.stages < 1) || (a.cs > 1 && (a.ws == nullptr || a.cnt == nullptr)))
    throw Error(fmt::format("solgemm: skinny launch: bad layout rt_cta={} wk={} gpw={} cs={} (x and partials {} B + "
                            "one ring stage of {} B > {} B of shared memory per CTA, or more than {} warps)",
                            a.rt_cta, a.wk, a.gpw, a.cs, r0, sb, budget, MAXT / 32 - 1 - kExcWarps));
  const WsNeed need = ws_need(a.m, a.rows, a.rt_cta, a.cs, NT);
  if (need.floats > a.ws_cap || need.counters > a.cnt_cap)
    throw Error(fmt::format("solgemm: skinny launch: split-K workspace too small ({} floats, {} counters needed; {}, "
                            "{} allocated: PrepareOptions::max_m?)", need.floats, need.counters, a.ws_cap, a.cnt_cap));
  const unsigned threads = static_cast<unsigned>((warps + 1 + kExcWarps) * 32);
  // Split K as clusters of cs CTAs where the kernel's whole grid fits on the GPU at once: cs <= 8 (the portable
  // sizes), or 16 (non-portable: at two CTAs per SM a cluster spans 8 SMs of one GPC) where the tail pushes, i.e. the
  // ring holds the whole tile (the kernel's push_tail; its pull path adds at most 8 peers). Clusters of 16 let a
  // balanced grid reduce on chip: qkv_gate's cs16 / rt9 / wk1 / g8, 256 CTAs of 72 groups (perf-notes step 101).
  const bool push_fits = a.stages > 0 && static_cast<int64_t>(a.stages) * warps * Src::kLoads * 512 >=
                                             static_cast<int64_t>(a.rt_cta) * NT * 128 * 4;
  auto as_clusters = [&](auto kernel_fn) {
    return a.cs > 1 && (a.cs <= 8 || (a.cs == 16 && push_fits)) && a.allow_cluster &&
           static_cast<int64_t>(max_clusters(kernel_fn, grid, threads, smem, a.cs)) * a.cs >=
               static_cast<int64_t>(grid.x) * grid.y;
  };
  if constexpr (kXrOk) {
    if (xr && a.stages < 1) throw Error("solgemm: skinny launch: x through the ring needs a ring");
    if (xr && a.cs == 1) {  // (no split K: no cluster, no workspace)
      took(kPathPlain);
      skinny_kernel<Src, NT, MAXT, MINB, false, kBench, true><<<grid, threads, smem, stream>>>(a, xm);
      check(cudaGetLastError(), "skinny launch (x ring)");
      return;
    }
    if (xr) {  // split K with x through the ring (perf-notes step 165): as clusters where the whole grid fits at once
               // (with Config::k_seq summing as one sequence, Args::seq), else through the workspace (last arrival sums;
               // then a k_seq layout's rows are not bitwise those of its one-CTA twin)
      auto kern_cx = skinny_kernel<Src, NT, MAXT, MINB, true, kBench, true>;
      if (as_clusters(kern_cx)) {
        took(kPathCluster);
        a.seq = a.seq_req;
        LaunchCfg ccfg(grid, static_cast<int>(threads), smem, stream, false, a.cs);
        check(cudaLaunchKernelEx(&ccfg.lc, kern_cx, a, xm), "skinny cluster launch (x ring)");
        return;
      }
      took(kPathLastArrival);
      skinny_kernel<Src, NT, MAXT, MINB, false, kBench, true><<<grid, threads, smem, stream>>>(a, xm);
      check(cudaGetLastError(), "skinny launch (x ring, split K through the workspace)");
      return;
    }
  }
  // Split K with cs <= 8 (or 16, above): if the whole grid fits on the GPU at once as clusters of cs CTAs, reduce through
  // distributed shared memory instead of the workspace (no global round trips). The answer depends on the
  // kernel, its shared memory, the block and cluster size: asked once, then cached.
  if (as_clusters(kern_c)) {
    took(kPathCluster);
    LaunchCfg ccfg(grid, static_cast<int>(threads), smem, stream, false, a.cs);
    check(cudaLaunchKernelEx(&ccfg.lc, kern_c, a, xm), "skinny cluster launch");
    return;
  }
  // Split K through the workspace: when the whole grid is resident at once (asked once per kernel, shared memory
  // and block size), one cooperative launch whose CTAs share the tail (Args::dist); else the last arrival of each
  // tile sums it alone.
  if (Src::kTerms == 1 && a.cs > 1 && a.cs <= 16 && a.cnt64 != nullptr && need.counters <= a.tiles64) {
    static std::mutex mu;
    static std::map<std::pair<size_t, unsigned>, int64_t> resident;  // (smem, threads) -> CTAs at once
    int64_t at_once = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      const auto key = std::make_pair(smem, threads);
      auto it = resident.find(key);
      if (it == resident.end()) {
        at_once = resident_ctas(reinterpret_cast<const void*>(kern), static_cast<int>(threads), static_cast<int>(smem));
        resident.emplace(key, at_once);
      } else {
        at_once = it->second;
      }
    }
    if (at_once >= static_cast<int64_t>(grid.x) * grid.y) {
      a.dist = 1;
      took(kPathCooperative);
      const LaunchCfg lcfg(grid, static_cast<int>(threads), smem, stream, true);
      check(cudaLaunchKernelEx(&lcfg.lc, kern, a, xm), "skinny cooperative launch");
      return;
    }
  }
  took(a.cs == 1 ? kPathPlain : kPathLastArrival);
  kern<<<grid, threads, smem, stream>>>(a, xm);
  check(cudaGetLastError(), "skinny launch");
}

}  // namespace solgemm::kernels::family
