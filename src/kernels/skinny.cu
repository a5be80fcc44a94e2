// Skinny family launcher (m <= 64, packed12 / packed16 BF16 weights). The kernel is skinny_family.cuh.
//
// Idea and roofline: see skinny_family.cuh. The weights stream once at 12 (or 16) bits per weight, decoded
// in registers and multiplied on tensor cores with the weights on the MMA's M side; the tokens (m <= 64) are
// n8 tiles. Floor = packed bytes / ~4.6 TB/s + ~1.3 us ramp (pooler 50.3 MB: ~12.3 us; o 12.6 MB: ~4.1 us).
// Compiled variants (explicit list, family_dispatch.cuh): {Dec12, Raw16} x n_tiles {1, 2, 4} x {1, 2} CTAs per SM;
// the layout (rt_cta, wk, gpw, cs) is a run-time argument chosen by the plan table per shape.
#include "kernels.hpp"
#include "family_dispatch.cuh"

#include <algorithm>
#include <vector>

namespace solgemm::kernels {

void launch_skinny(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream, int* path) {
  family::skinny_dispatch<family::kLibrary>(cfg, w, x, m, out, rows, stream, path);
}

SplitWs split_ws_need(Storage storage, int64_t n, int64_t k, int64_t max_m, std::optional<Kernel> forced,
                      const std::vector<int64_t>& row_counts) {
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
  size_t wide_counters = 0;
  auto add_skinny = [&](const Plan& p, int64_t m, int64_t r) {  // a skinny or router layout's partials and counters
    const family::WsNeed q =
        family::ws_need(static_cast<int>(m), static_cast<int>(r), p.cfg.rt_cta, p.cfg.split_k, p.cfg.n_tiles);
    need.ws_floats = std::max(need.ws_floats, q.floats);
    need.counters = std::max(need.counters, q.counters);
  };
  std::vector<int64_t> rows = row_counts;  // (declared: only those calls come)
  if (rows.empty()) {
    for (int64_t r = 16; r < n; r += 16) rows.push_back(r);
    rows.push_back(n);
  }
  for (int64_t r : rows)
    for (int64_t m : ms) {
      // The plan table's choice, or what PrepareOptions::kernel forces (the family's own layouts; the wide family's
      // hi + lo source has its own workspace layout in the same buffers).
      std::vector<Plan> plans;
      if (!forced) {
        plans.push_back(select_plan(Shape{r, k, storage}, m));
        // (hi + lo: where the simt family cannot take x, K or its alignment, the call runs the router family's layout)
        if (!packed && plans.back().kernel == Kernel::simt) plans.push_back(select_plan(Shape{r, k, storage}, m, fam));
      } else {
        Kernel f = *forced;
        if (f == Kernel::simt && !packed) f = fam;  // (the simt family's fallback where it cannot take x)
        if (f == fam || (!packed && f == Kernel::wide)) plans.push_back(select_plan(Shape{r, k, storage}, m, f));
      }
      for (const Plan& p : plans) {
        if (!packed && p.kernel == Kernel::wide) {
          const WideWsNeed q = wide_hilo_ws_need(p.cfg, m, r);
          need.ws_floats = std::max(need.ws_floats, q.floats);
          wide_counters = std::max(wide_counters, q.counters);
          continue;
        }
        if (p.kernel == fam) add_skinny(p, m, r);
      }
    }
  // Untuned 12-bit row counts: every layout prepare may time for them (tune_untuned: the candidates at 1..16 tokens on
  // each of untuned_row_sets), so that none is left out for want of counters (perf-notes step 211: 4096 x 4096's
  // cs2 / rt2 needs 128 counters, the rule's layouts 66; a few MB of partials at most).
  if (storage == Storage::packed12 && !forced)  // (a forced family is not timed at prepare)
    for (const int64_t r : untuned_row_sets(n, k, row_counts))
      for (const UntunedLayout& u : untuned_skinny_candidates(r, k, kUntunedCandidates))
        for (int64_t m = 1; m <= std::min<int64_t>(mcap, 16); ++m) {
          const UntunedChoice c{r, u, 16};
          const Plan p = select_plan(Shape{r, k, storage}, m, ExceptionLoad{}, &c);
          if (p.kernel == Kernel::skinny) add_skinny(p, m, r);
        }
  // The wide family's counters are not 0 at rest (64-bit arrival counters that only grow): they get their own
  // 8-byte-aligned region at the end (launch_wide_hilo uses the last ones), so that the router family's counters
  // stay 0 between its launches.
  need.tiles64 = need.counters;  // (the skinny kernel's tiles; api.cu allocates 15 64-bit counters per tile)
  if (wide_counters > 0) need.counters = ((need.counters + 1) & ~size_t{1}) + wide_counters;
  return need;
}

}  // namespace solgemm::kernels
