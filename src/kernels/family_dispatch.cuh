// Dispatch of the skinny family's launches (skinny.cu: packed BF16 weights; router.cu: FP32 as BF16 hi + lo)
// onto the compiled kernel variants. kBench = kLibrary (0) in the library; the bench (bench/skinny_bench.cu)
// instantiates kBench = kDiagnostics, whose kernels honour the views' diagnostic knobs (diag, trace), and
// kTraceOnly, whose kernels are the library's plus the timeline and ring-trace stamps (skinny_family.cuh).
#pragma once

#include <algorithm>
#include <cmath>

#include "kernels.hpp"
#include "skinny_family.cuh"

namespace solgemm::kernels::family {

// The bench-only knobs of a weight view (PackedView, HiLoView: kernels.hpp). The library's kernels have no
// diagnostics compiled in: asking them for one is an error, not a silent no-op.
template <int kBench, class View>
inline void apply_bench_knobs(Args& a, const View& w) {
  if constexpr (kBench != kLibrary) {
    a.diag = w.diag;
    a.trace = w.trace;
    a.tile_stride = static_cast<int>(w.row_tiles);  // (kGroupMajor: the bench's copy has all the matrix's row tiles)
  } else {
    if (w.diag != 0 || w.trace != nullptr)
      throw Error("solgemm: diagnostic knobs (diag, trace) need the bench's kernel instantiations");
  }
  if (w.max_stages > 0) a.max_stages = w.max_stages;
  if (w.no_cluster) a.allow_cluster = 0;
  a.direct0_off = w.no_direct0 ? 1 : 0;
  if constexpr (std::is_same_v<View, PackedView>) {
    a.xring_req = w.xring;
    a.xbox_req = w.xbox;
  }
}

// ---- skinny (packed12 / packed16) ---------------------------------------------------------------------------
// Register budgets (ptxas, no spills; compute warps + the producer warp, + the exception warp for Dec12, which then has
// one compute warp less): n_tiles 1, 2 fit 64 registers: 2 CTAs of <= 15 + 1 warps or 1 CTA of <= 31 + 1 share an
// SM; n_tiles 4 needs ~87-94 (cap 102): 2 CTAs of <= 9 + 1 or 1 of <= 18 + 1. m > 32 runs as 32-token chunks (grid y; the
// weights of the second chunk come from L2).
// A grid of at most one CTA per SM takes the 1-CTA variant (the whole shared memory for the weight ring).
// Whether a launch takes the 2-CTA-per-SM variant: at most WARPS2 compute warps and more CTAs than SMs.
// WARPS2 of the 2-CTA variant at n_tiles nt (the exception warp included).
constexpr int warps2_of(int nt) { return nt == 4 ? 9 : 15; }
// WARPS1 of the 1-CTA variant (the exception warp included for Dec12: 18 compute warps either way at n_tiles 4, the
// qkv_gate 9 x 2 layout among them).
template <class Src>
constexpr int warps1_of(int nt) { return nt == 4 ? 18 + exc_warps<Src>() : 31; }
// (sms: the GPU's SM count, the current device's unless given)
inline bool two_per_sm(const Args& a, int nt, int warps2, int64_t sms = 0) {
  const dim3 g = grid_of(a, nt);
  return warps2 > 0 && a.rt_cta * a.wk <= warps2 && static_cast<int64_t>(g.x) * g.y > (sms > 0 ? sms : sm_count());
}
template <class Src, int NT, int WARPS2, int WARPS1, int kBench>
void skinny_nt(const Args& a, cudaStream_t stream, const CUtensorMap* xmap, int* path) {
  if (two_per_sm(a, NT, WARPS2 - exc_warps<Src>())) {
    if constexpr (WARPS2 > 0) {
      launch<Src, NT, (WARPS2 + 1) * 32, 2, kBench>(a, stream, xmap, path);
      return;
    }
  }
  launch<Src, NT, (WARPS1 + 1) * 32, 1, kBench>(a, stream, xmap, path);
}

template <class Src, int kBench>
void skinny_src(const Config& cfg, const Args& a, cudaStream_t stream, const CUtensorMap* xmap, int* path) {
  switch (cfg.n_tiles) {
    case 1: skinny_nt<Src, 1, warps2_of(1), warps1_of<Src>(1), kBench>(a, stream, xmap, path); return;
    case 2: skinny_nt<Src, 2, warps2_of(2), warps1_of<Src>(2), kBench>(a, stream, xmap, path); return;
    case 4: skinny_nt<Src, 4, warps2_of(4), warps1_of<Src>(4), kBench>(a, stream, xmap, path); return;
    default: break;
  }
  throw Error(fmt::format("solgemm: skinny: n_tiles = {}; compiled variants are 1, 2, 4 (more tokens: chunks of 32)", cfg.n_tiles));
}

template <int kBench>
void skinny_dispatch(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                     int64_t rows, cudaStream_t stream, int* path = nullptr) {
  Args a = make_args("skinny", cfg, x, out, m, rows, w.k, w.k_groups, w.split);
  a.w0 = w.data;
  a.exc_off = w.exc_off;
  a.exc = w.exc;
  a.exc_blk = w.exc_blk;
  a.exc_p = std::ldexp(1.f, w.base - 112);  // (the placeholder kPadCoded's true value)
  a.base_add = decode::base_add(w.base);
  a.k_blocks = static_cast<int>(w.k_blocks);
  apply_bench_knobs<kBench>(a, w);
  if (w.bits12 && w.exc_blk == nullptr)
    throw Error("solgemm: skinny: 12-bit weights without the exception block table (PackedView::exc_blk; "
                "format::exception_blocks)");
  if (w.bits12) {  // the coded domain (decode.hpp); prepare checked coded_ok, or stored the matrix at 16 bits
    const int ca = decode::coded_a(w.base), d = ca - w.base;
    if (w.base < 1 || ca > decode::kCodedMaxA)
      throw Error(fmt::format("solgemm: skinny: exponent base {} outside 1..{} (the coded-domain decode)", w.base,
                              decode::kCodedMaxA));
    a.dec_or = decode::coded_or(ca);
    const bool true_domain = (a.diag & 16384) != 0;  // (bench: the IADD decode, perf-notes step 39)
    a.out_scale = true_domain ? 1.f : std::ldexp(1.f, -d);
  }
  // x through the ring (skinny_family.cuh, use_xring): its tensor map, built here for the launch (whole runs: every
  // k warp's box of a stage by one TMA; else one per k warp).
  CUtensorMap xm;
  const CUtensorMap* xmap = nullptr;
  const int warps2 = warps2_of(cfg.n_tiles) - (w.bits12 ? exc_warps<Dec12>() : exc_warps<Raw16>());  // (as skinny_nt)
  const bool two = two_per_sm(a, cfg.n_tiles, warps2);
  if (use_xring(a, cfg.n_tiles, two)) {
    // The boxes (perf-notes step 132): one 4-D box of 8 n_tiles token rows per stage (every k warp's box; tokens past m
    // zero-filled by TMA), or, in the 2-CTA variant with at most 4 k warps when one chunk holds all m < 8 n_tiles tokens,
    // one 2-D box of exactly m rows per k warp: there the zero fill slowed the stream by up to 4 us at 17 tokens, while
    // 2-D boxes per k warp cost the 1-CTA variant and 8 k warps 1.3-2.8 us. The rows past m of a slot keep stale data;
    // their MMA columns are independent of the stored ones and never stored (GPU test XRingStaleRowsNeverReachOutput).
    // (At one token tile (m < 8) the 4-D box with its zero fill is 1.2-2.4 us faster than m-row boxes per k warp: perf-
    // notes step 208, 6144 x 4096 and 7168 x 8192 at 2..6 tokens on cs1 / rt2 / wk4.)
    const bool exact = two && a.wk <= 4 && m < 8 * cfg.n_tiles && cfg.n_tiles > 1;
    a.xbox_rows = (a.xbox_req == 0 ? exact : a.xbox_req == 2) ? static_cast<int>(std::min<int64_t>(m, 8 * cfg.n_tiles))
                                                               : 8 * cfg.n_tiles;
    a.x4d = whole_runs(a) && a.xbox_rows == 8 * cfg.n_tiles && a.xbox_req != 3 ? 1 : 0;
    xm = a.x4d ? xtma_map(a, cfg.n_tiles) : bf16_tensor_map(x, w.k, m, 64, a.xbox_rows, "skinny: x");
    xmap = &xm;
  }
  if (w.bits12)
    skinny_src<Dec12, kBench>(cfg, a, stream, xmap, path);
  else
    skinny_src<Raw16, kBench>(cfg, a, stream, xmap, path);
}

// ---- router (hi + lo, or hi + lo + lo2 exact) -----------------------------------------------------------------
// Exact mode (three terms) needs more registers: at most 8 compute warps per CTA (+ the producer warp).
template <class Src, int kBench>
void router_src(const Config& cfg, const Args& a, cudaStream_t stream) {
  constexpr int kMaxT = Src::kTerms == 3 ? 288 : 544;  // compute warps + the producer warp
  // Exact mode has no 64-token variant (registers): the same layout walks 32-token chunks instead.
  const int nt = Src::kTerms == 3 && cfg.n_tiles == 8 ? 4 : cfg.n_tiles;
  switch (nt) {
    case 1: launch<Src, 1, kMaxT, 1, kBench>(a, stream); return;
    case 2: launch<Src, 2, kMaxT, 1, kBench>(a, stream); return;
    case 4:  // at most 8 compute warps: the 288-thread variant (registers for the first group at entry)
      if (a.rt_cta * a.wk <= 8)
        launch<Src, 4, 288, 1, kBench>(a, stream);
      else
        launch<Src, 4, kMaxT, 1, kBench>(a, stream);
      return;
    case 8:  // 64 tokens per warp (hi + lo only), at most 8 compute warps per CTA: the bench's comparison only (the
             // plan sends 65..256 tokens to the wide family's hi + lo source, perf-notes step 56)
      if constexpr (Src::kTerms == 2 && kBench != kLibrary) {
        launch<Src, 8, 288, 1, kBench>(a, stream);
        return;
      }
      break;
    default: break;
  }
  throw Error(fmt::format("solgemm: router: n_tiles = {}; compiled variants are 1, 2, 4 (and 8 in the bench)",
                          cfg.n_tiles));
}

template <int kBench>
void router_dispatch(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                     int64_t rows, cudaStream_t stream) {
  Args a = make_args("router", cfg, x, out, m, rows, w.k, w.k_groups, w.split);
  a.w0 = w.hi;
  a.w1 = w.lo;
  a.w2 = w.lo2;
  apply_bench_knobs<kBench>(a, w);
  if (w.lo2 != nullptr) {
    // At most 8 compute warps: fewer row tiles per CTA first (the K order stays that of the layout, so that
    // layouts differing only in rt_cta stay batch invariant), then half the warps along K with twice the groups
    // each (fixed per shape too).
    while (a.rt_cta * a.wk > 8 && a.rt_cta % 2 == 0) a.rt_cta /= 2;
    while (a.rt_cta * a.wk > 8 && a.wk % 2 == 0) {
      a.wk /= 2;
      a.gpw *= 2;
    }
    router_src<HiLoExact, kBench>(cfg, a, stream);
  } else {
    router_src<HiLo, kBench>(cfg, a, stream);
  }
}

}  // namespace solgemm::kernels::family
