// The skinny family's shared-memory plan on the host (skinny_family.cuh smem_plan; no GPU): every plan layout of the
// four packed BF16 layers at every m of its skinny range, taken as the dispatcher takes it on a 132-SM H200 (1- or
// 2-CTA variant, x staged or through the ring), fits a ring of at least 3 stages, or all of its groups, in its
// variant's budget (perf-notes step 131: the pooler's x-ring layout ran 2.2 us slower on 2 stages than on 3), and two
// figures the GPU showed: the pooler's 2 x 8 x 16 layout at 32 tokens reserves 214.4 KB (ncu, perf-notes step 131) and
// the unpooler's 2 x 4 x 16 layout at 32 tokens holds 3 stages in the 2-CTA variant (step 131).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "../src/kernels/family_dispatch.cuh"
#include "solgemm/plan.hpp"

namespace {

namespace fam = solgemm::kernels::family;
constexpr int64_t kSms = 132;  // the H200

struct Taken {
  bool two = false, xr = false;
  fam::SmemPlan p;
};

template <int NT>
Taken take_nt(const fam::Args& a) {
  using Src = fam::Dec12;
  Taken t;
  t.two = fam::two_per_sm(a, NT, fam::warps2_of(NT) - fam::exc_warps<Src>(), kSms);
  t.xr = fam::use_xring(a, NT, t.two);
  t.p = t.two ? fam::smem_plan<Src, NT, (fam::warps2_of(NT) + 1) * 32, 2>(a, t.xr, kSms)
              : fam::smem_plan<Src, NT, (fam::warps1_of<Src>(NT) + 1) * 32, 1>(a, t.xr, kSms);
  return t;
}

// The variant, x path and shared memory a 12-bit skinny launch of `cfg` takes (as skinny_dispatch and skinny_nt do).
Taken take(const solgemm::Config& cfg, int64_t rows, int64_t k, int64_t m) {
  const int64_t k_groups = (k + 63) / 64;
  alignas(16) static const __nv_bfloat16 x_aligned[8] = {};  // (never read: only its 16-byte alignment matters)
  fam::Args a = fam::make_args("test", cfg, x_aligned, nullptr, m, rows, k, k_groups, solgemm::kernels::SplitWs{});
  switch (cfg.n_tiles) {
    case 1: return take_nt<1>(a);
    case 2: return take_nt<2>(a);
    default: return take_nt<4>(a);
  }
}

TEST(SkinnySmem, PlanLayoutsHoldThreeStages) {
  int checked = 0;
  struct L {
    const char* name;
    int64_t rows, k;
  };
  for (const L l : {L{"qkv_gate", 2304, 8192}, L{"o", 8192, 1024}, L{"pooler", 4096, 8192}, L{"unpooler", 8192, 4096},
                    L{"unpooler slice", 1024, 4096}}) {
    const solgemm::Shape s{l.rows, l.k, solgemm::Storage::packed12};  // (the slice: the plan's 1024-row rows)
    for (int64_t m = 1; m <= 32; ++m) {
      const solgemm::Plan plan = solgemm::select_plan(s, m);
      if (plan.kernel != solgemm::Kernel::skinny) continue;
      const Taken t = take(plan.cfg, l.rows, l.k, m);
      SCOPED_TRACE(std::string(l.name) + " m=" + std::to_string(m) + " " + plan.str() + (t.two ? " 2-CTA" : " 1-CTA") +
                   (t.xr ? " x ring" : " x staged"));
      EXPECT_LE(t.p.smem, t.p.budget);
      if (plan.cfg.gpw > 1) EXPECT_GE(t.p.stages, std::min(3, plan.cfg.gpw - t.p.direct0));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32 + 1 + 32 + 32 + 8);  // qkv_gate 1..32, o 1, the pooler and the unpooler 1..32, the slice 9..16
}

TEST(SkinnySmem, FiguresTheGpuShowed) {
  // the pooler at 32 tokens: cs1 / rt2 / wk8 / g16, 1 CTA per SM, x through the ring, 3 stages: 214400 bytes
  const Taken p = take(solgemm::layout_config(1, 2, 8, 16, 4), 4096, 8192, 32);
  EXPECT_FALSE(p.two);
  EXPECT_TRUE(p.xr);
  EXPECT_EQ(p.p.stages, 3);
  EXPECT_EQ(p.p.smem, 214400u);
  // the unpooler at 32 tokens: cs1 / rt2 / wk4 / g16, 2 CTAs per SM, x through the ring, 3 stages
  const Taken u = take(solgemm::layout_config(1, 2, 4, 16, 4), 8192, 4096, 32);
  EXPECT_TRUE(u.two);
  EXPECT_TRUE(u.xr);
  EXPECT_EQ(u.p.stages, 3);
  // the pooler's 1 x 8 x 16 layout at 32 tokens in the 2-CTA variant: one stage (why its 17..32 row stays at 2 x 8 x 16)
  const Taken q = take(solgemm::layout_config(1, 1, 8, 16, 4), 4096, 8192, 32);
  EXPECT_TRUE(q.two);
  EXPECT_EQ(q.p.stages, 1);
  // the pooler at one token on its 1 x 8 x 16 layout keeps x staged (perf-notes step 133), at two tokens the ring
  EXPECT_FALSE(take(solgemm::layout_config(1, 1, 8, 16, 1), 4096, 8192, 1).xr);
  EXPECT_TRUE(take(solgemm::layout_config(1, 1, 8, 16, 1), 4096, 8192, 3).xr);
}

}  // namespace

// A Weights sizes its split-K workspace for the plan's layouts, not for those only a forced family runs (perf-notes
// step 215: the router's forced layouts at 4096 tokens took 75 MB of partials); the plan's own layouts at every m and
// rows still fit (the router's, including the simt family's fallback to them, and the wide family's hi + lo).
TEST(SkinnySmem, PlanWorkspaceLeavesOutForcedLayouts) {
  namespace k = solgemm::kernels;
  using solgemm::Kernel;
  const k::SplitWs plan = k::split_ws_need(solgemm::Storage::hilo, 256, 8192, 4096);
  const k::SplitWs forced = k::split_ws_need(solgemm::Storage::hilo, 256, 8192, 4096, Kernel::router);
  EXPECT_LT(plan.ws_floats * 4, size_t{16} << 20);
  EXPECT_GT(forced.ws_floats, 4 * plan.ws_floats);
  int checked = 0;
  for (int64_t rows = 16; rows <= 256; rows += 16)
    for (int64_t m : {1, 3, 7, 8, 16, 32, 33, 64, 65, 128, 200, 256}) {
      const solgemm::Shape s{rows, 8192, solgemm::Storage::hilo};
      std::vector<solgemm::Plan> ps = {solgemm::select_plan(s, m)};
      if (ps[0].kernel == Kernel::simt) ps.push_back(solgemm::select_plan(s, m, Kernel::router));  // (its fallback)
      for (const solgemm::Plan& p : ps) {
        SCOPED_TRACE(std::to_string(rows) + " rows, m " + std::to_string(m) + ": " + p.str());
        if (p.kernel == Kernel::router) {
          const fam::WsNeed q = fam::ws_need(static_cast<int>(m), static_cast<int>(rows), p.cfg.rt_cta, p.cfg.split_k,
                                             p.cfg.n_tiles);
          EXPECT_LE(q.floats, plan.ws_floats);
          EXPECT_LE(q.counters, plan.counters);
          ++checked;
        } else if (p.kernel == Kernel::wide) {
          EXPECT_LE(k::wide_hilo_ws_need(p.cfg, m, rows).floats, plan.ws_floats);
          ++checked;
        }
      }
    }
  EXPECT_GE(checked, 100);  // (router layouts at 1..32 tokens on every row count, wide ones at 33..256 on all 256)
}

// The split-K workspace prepare allocates for an untuned shape covers every layout its tuner may time (every candidate at
// 1..16 tokens on each of untuned_row_sets; perf-notes step 211: before, 4096 x 4096's cs2 / rt2 and cs4 / rt3 needed
// more counters than the rule's layouts and could not run at prepare; step 214: the leading rows of tuned shapes too).
TEST(SkinnySmem, UntunedWorkspaceCoversEveryCandidate) {
  namespace k = solgemm::kernels;
  for (const auto& [n, kk] : {std::pair<int64_t, int64_t>{4096, 4096}, {6144, 4096}, {3072, 3072}, {1024, 8192},
                              {28672, 4096}, {4096, 8192}, {8192, 4096}, {2304, 8192}}) {  // (+ the judged shapes' prefixes)
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(kk));
    const k::SplitWs have = k::split_ws_need(solgemm::Storage::packed12, n, kk, 4096);
    int checked = 0;
    for (const int64_t r : solgemm::untuned_row_sets(n, kk))  // (a call of the first r rows: perf-notes step 214)
      for (const solgemm::UntunedLayout& u : solgemm::untuned_skinny_candidates(r, kk, solgemm::kUntunedCandidates))
        for (int64_t m = 1; m <= 16; ++m) {
          const solgemm::UntunedChoice c{r, u, 16};
          const solgemm::Plan p =
              solgemm::select_plan({r, kk, solgemm::Storage::packed12}, m, solgemm::ExceptionLoad{}, &c);
          ASSERT_EQ(p.kernel, solgemm::Kernel::skinny) << r << " rows: " << p.str();
          const fam::WsNeed q = fam::ws_need(static_cast<int>(m), static_cast<int>(r), p.cfg.rt_cta, p.cfg.split_k,
                                             p.cfg.n_tiles);
          EXPECT_LE(q.floats, have.ws_floats) << r << " rows: " << p.str();
          EXPECT_LE(q.counters, have.counters) << r << " rows: " << p.str();
          EXPECT_LE(q.counters, have.tiles64) << r << " rows: " << p.str();
          ++checked;
        }
    EXPECT_GE(checked, 16 * 4);
  }
}

// Declared row counts (PrepareOptions::row_counts, perf-notes step 218): the workspace covers every plan layout of those
// calls at 1..64 tokens and every candidate timed for them, and is no larger than the undeclared one.
TEST(SkinnySmem, DeclaredRowCountsWorkspace) {
  namespace k = solgemm::kernels;
  for (const auto& [n, kk, rows] :
       {std::tuple<int64_t, int64_t, std::vector<int64_t>>{2304, 8192, {2304}}, {8192, 4096, {1024, 8192}},
        {4096, 8192, {1024, 3072, 4096}}, {6144, 4096, {6144, 2000}}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(kk));
    const k::SplitWs all = k::split_ws_need(solgemm::Storage::packed12, n, kk, 64);
    const k::SplitWs have = k::split_ws_need(solgemm::Storage::packed12, n, kk, 64, std::nullopt, rows);
    bool subset = true;  // (a declared untuned row count not among N / 2^i adds its own candidates)
    for (const int64_t r : solgemm::untuned_row_sets(n, kk, rows)) {
      const std::vector<int64_t> d = solgemm::untuned_row_sets(n, kk);
      subset = subset && std::find(d.begin(), d.end(), r) != d.end();
    }
    if (subset) {
      EXPECT_LE(have.ws_floats, all.ws_floats);
      EXPECT_LE(have.counters, all.counters);
    }
    int checked = 0;
    for (const int64_t r : rows)
      for (int64_t m = 1; m <= 64; ++m) {
        std::vector<solgemm::Plan> ps = {solgemm::select_plan({r, kk, solgemm::Storage::packed12}, m)};
        if (m <= 16)
          for (const int64_t ur : solgemm::untuned_row_sets(n, kk, rows))
            if (ur == r)
              for (const solgemm::UntunedLayout& u : solgemm::untuned_skinny_candidates(r, kk, solgemm::kUntunedCandidates)) {
                const solgemm::UntunedChoice c{r, u, 16};
                ps.push_back(solgemm::select_plan({r, kk, solgemm::Storage::packed12}, m, solgemm::ExceptionLoad{}, &c));
              }
        for (const solgemm::Plan& p : ps) {
          if (p.kernel != solgemm::Kernel::skinny) continue;
          const fam::WsNeed q = fam::ws_need(static_cast<int>(m), static_cast<int>(r), p.cfg.rt_cta, p.cfg.split_k,
                                             p.cfg.n_tiles);
          EXPECT_LE(q.floats, have.ws_floats) << r << " rows, m " << m << ": " << p.str();
          EXPECT_LE(q.counters, have.counters) << r << " rows, m " << m << ": " << p.str();
          ++checked;
        }
      }
    EXPECT_GE(checked, 32);
  }
  // (the pooler's N rows alone: its leading 2048 and 1024 rows' candidates are not timed, so less workspace)
  EXPECT_LT(k::split_ws_need(solgemm::Storage::packed12, 4096, 8192, 64, std::nullopt, {4096}).ws_floats,
            k::split_ws_need(solgemm::Storage::packed12, 4096, 8192, 64).ws_floats);
}
