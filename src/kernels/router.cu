// Router launcher: FP32 weights stored as BF16 hi + lo (or hi + lo + lo2, exact), FP32 out, any m.
//
// Idea and roofline: the same skinny family (skinny_family.cuh) with the HiLo weight source: two (three)
// raw BF16 matrices in the same fragment order, one MMA per term into separate FP32 accumulators,
// out = acc_hi + acc_lo * 2^-8 (+ acc_lo2 * 2^-16), combined per warp before the fixed-order reduction.
// 256 x 8192 gives only 16 row tiles, so K is split across CTAs (reduced in a fixed order through a cluster's
// distributed shared memory when the grid fits as clusters, else a global workspace; skinny_family.cuh) plus
// warps along K inside each CTA. Bytes: 8.4 MB (hi + lo) -> floor ~1.3 + 1.8 us; the anchors measure 3.17 us.
// m > 8 * n_tiles: the grid's y dimension walks 8 * n_tiles-token chunks (weights re-read from L2).
// Compiled variants: {HiLo, HiLoExact} x n_tiles {1, 2, 4}, and HiLo x 8 (64-token chunks, <= 8 compute
// warps), each with the workspace and the cluster reduction.
#include "kernels.hpp"
#include "skinny_family.cuh"

namespace solgemm::kernels {

namespace {

// Exact mode (three terms) needs more registers: at most 8 compute warps per CTA (+ the producer warp).
template <class Src>
void dispatch_nt(const Config& cfg, const family::Args& a, cudaStream_t stream) {
  constexpr int kMaxT = Src::kTerms == 3 ? 288 : 544;  // compute warps + the producer warp
  // Exact mode has no 64-token variant (registers): the same layout walks 32-token chunks instead.
  const int nt = Src::kTerms == 3 && cfg.n_tiles == 8 ? 4 : cfg.n_tiles;
  switch (nt) {
    case 1: family::launch<Src, 1, kMaxT, 1>(a, stream); return;
    case 2: family::launch<Src, 2, kMaxT, 1>(a, stream); return;
    case 4: family::launch<Src, 4, kMaxT, 1>(a, stream); return;
    case 8:  // verify batches: 64 tokens per warp (hi + lo only), at most 8 compute warps per CTA
      if constexpr (Src::kTerms == 2) {
        family::launch<Src, 8, 288, 1>(a, stream);
        return;
      }
      break;
    default: break;
  }
  throw Error(fmt::format("solgemm: router: n_tiles = {}; compiled variants are 1, 2, 4 (and 8 without exact mode)",
                          cfg.n_tiles));
}

}  // namespace

void launch_router(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                   int64_t rows, cudaStream_t stream) {
  family::Args a = family::make_args("router", cfg, x, out, m, rows, w.k, w.k_groups, w.split);
  a.w0 = w.hi;
  a.w1 = w.lo;
  a.w2 = w.lo2;
  family::apply_bench_knobs(a, w);
  if (w.lo2 != nullptr) {
    // Same k slices per CTA, half the warps along K with twice the groups each (fixed per shape too).
    while (a.rt_cta * a.wk > 8 && a.wk % 2 == 0) {
      a.wk /= 2;
      a.gpw *= 2;
    }
    dispatch_nt<family::HiLoExact>(cfg, a, stream);
  }
  else
    dispatch_nt<family::HiLo>(cfg, a, stream);
}

}  // namespace solgemm::kernels
