// Skinny family launcher (m <= 64, packed12 / packed16 BF16 weights). The kernel is skinny_family.cuh.
//
// Idea and roofline: see skinny_family.cuh. The weights stream once at 12 (or 16) bits per weight, decoded
// in registers and multiplied on tensor cores with the weights on the MMA's M side; the tokens (m <= 64) are
// n8 tiles. Floor = packed bytes / ~4.6 TB/s + ~1.3 us ramp (pooler 50.3 MB: ~12.3 us; o 12.6 MB: ~4.1 us).
// Compiled variants (explicit list): {Dec12, Raw16} x n_tiles {1, 2, 4} x {1, 2} CTAs per SM; the layout
// (rt_cta, wk, gpw, cs) is a run-time argument chosen by the plan table per shape.
#include "kernels.hpp"
#include "skinny_family.cuh"

#include <algorithm>
#include <vector>

namespace solgemm::kernels {

namespace {

// Register budgets (ptxas, no spills; compute warps + the producer warp): n_tiles 1, 2 fit 64 registers: 2 CTAs
// of <= 15 + 1 warps or 1 CTA of <= 31 + 1 share an SM; n_tiles 4 needs ~80-96: 2 CTAs of <= 7 + 1 or 1 of
// <= 18 + 1. m > 32 runs as 32-token chunks (grid y; the weights of the second chunk come from L2).
// A grid of at most one CTA per SM takes the 1-CTA variant (the whole shared memory for the weight ring).
template <class Src, int NT, int WARPS2, int WARPS1>
void launch_nt(const family::Args& a, cudaStream_t stream) {
  if constexpr (WARPS2 > 0) {
    const dim3 g = family::grid_of(a, NT);
    if (a.rt_cta * a.wk <= WARPS2 && static_cast<int64_t>(g.x) * g.y > family::sm_count()) {
      family::launch<Src, NT, (WARPS2 + 1) * 32, 2>(a, stream);
      return;
    }
  }
  family::launch<Src, NT, (WARPS1 + 1) * 32, 1>(a, stream);
}

template <class Src>
void dispatch_nt(const Config& cfg, const family::Args& a, cudaStream_t stream) {
  switch (cfg.n_tiles) {
    case 1: launch_nt<Src, 1, 15, 31>(a, stream); return;
    case 2: launch_nt<Src, 2, 15, 31>(a, stream); return;
    case 4: launch_nt<Src, 4, 7, 18>(a, stream); return;
    default: break;
  }
  throw Error(fmt::format("solgemm: skinny: n_tiles = {}; compiled variants are 1, 2, 4 (more tokens: chunks of 32)", cfg.n_tiles));
}

}  // namespace

void launch_skinny(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream) {
  family::Args a = family::make_args("skinny", cfg, x, out, m, rows, w.k, w.k_groups, w.split);
  a.w0 = w.data;
  a.exc_off = w.exc_off;
  a.exc = w.exc;
  a.base_add = decode::base_add(w.base);
  a.k_blocks = static_cast<int>(w.k_blocks);
  family::apply_bench_knobs(a, w);
  if (w.bits12)
    dispatch_nt<family::Dec12>(cfg, a, stream);
  else
    dispatch_nt<family::Raw16>(cfg, a, stream);
}

SplitWs split_ws_need(Storage storage, int64_t n, int64_t k, int64_t max_m) {
  SplitWs need;
  const bool packed = storage == Storage::packed12 || storage == Storage::packed16;
  if (!packed && storage != Storage::hilo) return need;
  const Kernel fam = packed ? Kernel::skinny : Kernel::router;
  const int64_t mcap = packed ? std::min<int64_t>(max_m, 64) : max_m;
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= std::min<int64_t>(mcap, 64); ++m) ms.push_back(m);
  // Past 64 (router): the verify layouts change at 64, 128 and 256, then only the number of chunks grows.
  for (int64_t m : {96, 128, 192, 256})
    if (m < mcap) ms.push_back(m);
  if (mcap > 64) ms.push_back(mcap);
  std::vector<int64_t> rows;
  for (int64_t r = 16; r < n; r += 16) rows.push_back(r);
  rows.push_back(n);
  for (int64_t r : rows)
    for (int64_t m : ms) {
      // The family's own layouts (what PrepareOptions::kernel forces) and the plan table's choice.
      for (const Plan& p : {select_plan(Shape{r, k, storage}, m, fam), select_plan(Shape{r, k, storage}, m)}) {
        if (p.kernel != fam) continue;
        const family::WsNeed q = family::ws_need(static_cast<int>(m), static_cast<int>(r), p.cfg.rt_cta,
                                                 p.cfg.split_k, p.cfg.n_tiles);
        need.ws_floats = std::max(need.ws_floats, q.floats);
        need.counters = std::max(need.counters, q.counters);
      }
    }
  return need;
}

}  // namespace solgemm::kernels
