// The plan table (see plan.hpp and docs/kernels.md). Each branch names its kernel family and why.
#include "solgemm/plan.hpp"

#include "solgemm/solgemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace solgemm {

const char* to_string(Kernel k) {
  switch (k) {
    case Kernel::reference: return "reference";
    case Kernel::skinny: return "skinny";
    case Kernel::router: return "router";
    case Kernel::wide: return "wide";
    case Kernel::vendor: return "vendor";
    case Kernel::stream: return "stream";
    case Kernel::simt: return "simt";
  }
  return "?";
}

const char* to_string(Storage s) {
  switch (s) {
    case Storage::raw_bf16: return "raw_bf16";
    case Storage::raw_f32: return "raw_f32";
    case Storage::packed12: return "packed12";
    case Storage::packed16: return "packed16";
    case Storage::hilo: return "hilo";
  }
  return "?";
}

Config layout_config(int split_k, int rt_cta, int wk, int gpw, int n_tiles, bool k_seq) {
  Config c;
  c.k_seq = k_seq && split_k == 2;  // (pairs only)
  c.split_k = split_k;
  c.rt_cta = rt_cta;
  c.wk = wk;
  c.gpw = gpw;
  c.warps = rt_cta * wk;
  c.n_tiles = n_tiles;
  return c;
}

std::string Config::str() const {
  return fmt::format("split_k={}{} n_tiles={} warps={} rt_cta={} wk={} gpw={}", split_k, k_seq ? " (one sequence)" : "",
                     n_tiles, warps, rt_cta, wk, gpw);
}

std::string Plan::str() const { return fmt::format("{} [{}] ({})", to_string(kernel), cfg.str(), why); }

namespace {

Plan reference_plan(const char* why) {
  Plan p;
  p.kernel = Kernel::reference;
  p.why = why;
  return p;
}

// A layout (split_k, rt_cta, wk, gpw) for the skinny / router families. The same for every m of a shape.
struct Layout {
  int cs, rt_cta, wk, gpw;
  bool k_seq = false;  // Config::k_seq
};

Config make_config(const Layout& l, int n_tiles) { return layout_config(l.cs, l.rt_cta, l.wk, l.gpw, n_tiles, l.k_seq); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Untuned shapes of the router family: the layout that gives every SM the least work in one wave of 1 CTA per SM,
// preferring 16 warps (bytes in flight) and small K splits (workspace traffic); x's k range per CTA must fit shared
// memory at 64 tokens where some layout allows it (else the least work regardless).
Layout auto_layout(int64_t rows, int64_t k) {
  const int64_t rt = ceil_div(rows, 16), kg = ceil_div(k, 64);
  Layout best{1, 1, 1, static_cast<int>(std::min<int64_t>(kg, 112))};
  for (const bool x_fits : {true, false}) {
    double best_cost = 1e300;
    for (int cs : {1, 2, 4, 8, 16})
      for (int warps : {16, 8, 4})
        for (int rt_cta : {1, 2, 4, 8, 16}) {
          if (rt_cta > warps) continue;
          const int wk = warps / rt_cta;
          const int64_t slices = static_cast<int64_t>(cs) * wk;
          const int64_t gpw = ceil_div(kg, slices);
          if (gpw > 112 || (slices - 1) * gpw >= kg) continue;  // no empty k slices
          if (x_fits && wk * gpw > 24) continue;                // x: 32 tokens x k range <= 96 KB
          const int64_t ctas = ceil_div(rt, rt_cta) * cs;
          const double waves = static_cast<double>(ceil_div(ctas, 132));
          const double cost = waves * static_cast<double>(std::min<int64_t>(rt_cta, rt) * wk * gpw) *
                                  (1.0 + 0.02 * cs) * (warps == 16 ? 1.0 : warps == 8 ? 1.1 : 1.25) +
                              (ctas < 100 ? 1e6 / static_cast<double>(ctas) : 0.0);
          if (cost < best_cost) {
            best_cost = cost;
            best = {cs, rt_cta, wk, static_cast<int>(gpw)};
          }
        }
    if (best_cost < 1e300) break;
  }
  return best;
}

}  // namespace

// BF16 shapes the plan was not tuned on (perf-notes step 207): the layout rule drawn from the tuned shapes and from
// tune_plan on other models' projections (docs/results/tuning/2026-12-03_h200_s49-other-shapes.md). The winners
// there share a form: about two CTAs per SM (at most 264 CTAs in one wave of an H200), at most 8 compute warps per CTA
// (what the 2-CTA variant holds at 32 tokens), K summed as one sequence of slices (no split, the k warps of a CTA in
// order; or split over a cluster of 1 k warp per CTA), split K only where the row tiles alone cannot give the SMs
// even work. The rule scores each such layout by its busiest SM's groups (one CTA per SM streams slower: x1.4; fewer
// than 4 compute warps on that SM stream slower in proportion: x 4 / warps (perf-notes step 211: 2 warps per SM, one
// per CTA, ran 1.4-1.9x slower than 10); a split pays its cluster exchange: 20 + 10 per row tile; fewer warps per CTA hide less:
// 3 per missing warp) and keeps the cheapest. One layout per shape, whatever m: one K order (batch invariance over
// every m it serves). nullopt where no layout fits (K not a multiple of 64, or groups that no slice count divides).
namespace {

// Every layout of the rule's form for (rows, k) with its cost, at most max_ctas CTAs, clusters up to max_cs, in the
// order enumerated (cs, wk, rt ascending).
std::vector<std::pair<double, UntunedLayout>> untuned_layouts(int64_t rows, int64_t k, int64_t max_ctas, int max_cs) {
  std::vector<std::pair<double, UntunedLayout>> out;
  if (rows < 16 || k < 128 || k % 64 != 0) return out;
  const int64_t tiles = ceil_div(rows, 16), groups = k / 64;
  for (int cs : {1, 2, 4, 8, 16}) {
    if (cs > max_cs) continue;
    for (int wk : {1, 2, 4, 8}) {
      if (cs > 1 && wk > 1) continue;  // K in one sequence of slices
      if (groups % (cs * wk) != 0) continue;
      const int64_t gpw = groups / (cs * wk);
      if (gpw < 2 || gpw > 112) continue;
      for (int rt = 1; rt <= 12 && rt <= tiles; ++rt) {
        if (rt * wk > 8) continue;
        const int64_t ctas = cs * ceil_div(tiles, rt);
        if (ctas > max_ctas || ctas < 66) continue;
        const int64_t per_sm = ceil_div(ctas, 132);
        const int64_t busiest = per_sm * rt * wk * gpw;  // groups on the busiest SM
        const double warps = static_cast<double>(std::min<int64_t>(per_sm, 2) * rt * wk);  // resident on it
        const double cost = static_cast<double>(busiest) * (ctas <= 132 ? 1.4 : 1.0) * std::max(1.0, 4.0 / warps) +
                            (cs > 1 ? 20.0 + 10.0 * rt : 0.0) + 3.0 * (8 - rt * wk);
        out.push_back({cost, UntunedLayout{cs, rt, wk, static_cast<int>(gpw)}});
      }
    }
  }
  return out;
}

}  // namespace

std::optional<UntunedLayout> untuned_skinny_layout(int64_t rows, int64_t k) {
  std::optional<UntunedLayout> best;
  double best_cost = 1e300;
  for (const auto& [cost, u] : untuned_layouts(rows, k, 264, 8))
    if (cost < best_cost - 1e-9) {
      best_cost = cost;
      best = u;
    }
  return best;
}

std::vector<UntunedLayout> untuned_skinny_candidates(int64_t rows, int64_t k, size_t count) {
  auto all = untuned_layouts(rows, k, 528, 16);
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<UntunedLayout> out;
  if (const auto r = untuned_skinny_layout(rows, k)) out.push_back(*r);  // the rule's own first
  for (const auto& [cost, u] : all) {
    if (out.size() >= count) break;
    const bool dup = std::any_of(out.begin(), out.end(), [&](const UntunedLayout& o) {
      return o.cs == u.cs && o.rt_cta == u.rt_cta && o.wk == u.wk && o.gpw == u.gpw;
    });
    if (!dup) out.push_back(u);
  }
  return out;
}

namespace {

// The most tokens an untuned shape's rule layout `u` serves (untuned_skinny_max_m).
int64_t untuned_max_m(const UntunedLayout& u, int64_t rows, int64_t k) {
  if (rows * k < kUntunedSkinnyMinWeights) return 0;
  if (u.cs > 1) return kUntunedSkinnySplitMaxM;
  return rows * k >= kUntunedSkinny16MinWeights ? kUntunedSkinnyMaxM16 : kUntunedSkinnyMaxM;
}

}  // namespace

int64_t untuned_skinny_max_m(int64_t rows, int64_t k) {
  const auto u = untuned_skinny_layout(rows, k);
  return u ? untuned_max_m(*u, rows, k) : 0;
}

namespace {

// The tuned layouts (rows, K) -> layout. docs/kernels.md says why each is what it is.
struct Tuned {
  int64_t rows, k;
  Layout layout;
  const char* why;
};
// One wave of <= 132 CTAs at 1 CTA per SM (or 2 per SM where registers and x allow), x's k range per CTA
// <= 1024 (16 groups: 64 KB of x at 32 tokens). Measured on the H200 with bench/skinny_bench (docs/perf-notes.md,
// "Skinny v2" and "Skinny v3").
constexpr Tuned kTunedPacked[] = {
    {2304, 8192, {8, 9, 2, 8}, "qkv_gate: 9 row tiles x 2 k warps x K/8 per CTA, 128 CTAs (1 wave), 8-way split-K"},
    {8192, 1024, {1, 4, 4, 4}, "o: 4 row tiles x 4 k warps (whole K) per CTA, 128 CTAs, no split"},
    {4096, 8192, {8, 16, 1, 16}, "pooler: 16 row tiles x K/8 per CTA, 128 CTAs (1 wave), 8-way split-K workspace"},
    {8192, 4096, {4, 16, 1, 16}, "unpooler: 16 row tiles x K/4 per CTA, 128 CTAs (1 wave), 4-way split-K workspace"},
    {1024, 4096, {8, 2, 4, 2}, "unpooler slice: 2 row tiles x 4 k warps x K/8 per CTA, 256 CTAs (2 per SM), 8-way split as clusters of 8"},
};
constexpr Tuned kTunedHiLo[] = {
    {256, 8192, {16, 3, 2, 4},
     "router: 3 row tiles x 2 k warps x 4 groups per CTA, K / 16 per CTA, 96 CTAs (6 row blocks, the last of 1 tile) of "
     "7 warps: the 16 splits of a tile reduce as one cluster of 16 through distributed shared memory; one layout and one "
     "K order at every m (tune_plan, perf-notes step 199, two runs: 5.54-5.76 / 5.63 / 5.76-5.86 / 7.01-7.04 us at m = "
     "7-8 / 12 / 16 / 32 against 5.79-5.92 / 5.98-6.08 / 6.08-6.14 / 7.01-7.04 for the 8-way layouts before; cuBLAS "
     "hi + lo 14.1-14.9)"},
};

template <size_t N>
const Tuned* find_tuned(const Tuned (&table)[N], const Shape& s) {
  for (const Tuned& t : table)
    if (t.rows == s.rows && t.k == s.k) return &t;
  return nullptr;
}

int n_tiles_for(int64_t m, int max_tiles) {
  int nt = 1;
  while (8 * nt < m && nt < max_tiles) nt *= 2;
  return nt;
}

}  // namespace

bool untuned_skinny_shape(int64_t rows, int64_t k) {
  const Shape s{rows, k, Storage::packed12};
  return rows * k >= kUntunedSkinnyMinWeights && find_tuned(kTunedPacked, s) == nullptr &&
         untuned_skinny_layout(rows, k).has_value();
}

std::vector<int64_t> untuned_row_sets(int64_t n, int64_t k) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= 8; d *= 2)
    if ((d == 1 || n % (16 * d) == 0) && untuned_skinny_shape(n / d, k)) out.push_back(n / d);
  return out;
}

std::vector<int64_t> untuned_row_sets(int64_t n, int64_t k, const std::vector<int64_t>& declared) {
  if (declared.empty()) return untuned_row_sets(n, k);
  std::vector<int64_t> out;
  for (const int64_t r : declared)
    if (r >= 1 && r <= n && (r == n || r % 16 == 0) && untuned_skinny_shape(r, k)) out.push_back(r);
  std::sort(out.begin(), out.end(), std::greater<>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// BF16 weights, packed (12-bit or 16-bit fallback): the skinny family for m <= 64 (memory-bound).
Plan plan_packed(const Shape& s, int64_t m) {
  if (m > 64) return reference_plan("m > 64: the skinny family serves m <= 64; reference until a wide family exists");
  const char* code = s.storage == Storage::packed12 ? "12-bit" : "16-bit";
  Plan p;
  p.kernel = Kernel::skinny;
  const Tuned* t = find_tuned(kTunedPacked, s);
  if (t) {
    p.cfg = make_config(t->layout, n_tiles_for(m, 4));
    p.why = fmt::format("{} weights; {}", code, t->why);
    return p;
  }
  if (const auto u = untuned_skinny_layout(s.rows, s.k)) {
    p.cfg = make_config({u->cs, u->rt_cta, u->wk, u->gpw}, n_tiles_for(m, 4));
    p.why = fmt::format("{} weights; untuned shape: the layout rule (perf-notes step 207)", code);
    return p;
  }
  p.cfg = make_config(auto_layout(s.rows, s.k), n_tiles_for(m, 4));
  p.why = fmt::format("{} weights; untuned shape: auto layout (one wave, least work per SM)", code);
  return p;
}

// BF16 packed, 64 < m <= 256: the wide family, CTAs of 128 rows x 128 tokens (m <= 128) or x 256 tokens
// (n_tiles = tokens / 8). Split K over a cluster so that the CTAs fill the 132 SMs in whole waves; a little
// credit for >= 200 CTAs.
Plan plan_wide(const Shape& s, int64_t m) {
  constexpr int kSms = 132;
  const int tok = m <= 128 ? 128 : 256;
  const int64_t tiles = ((s.rows + 127) / 128) * ((m + tok - 1) / tok);
  const int slots = tok == 128 ? 2 * kSms : kSms;  // resident CTAs per wave
  Plan p;
  p.kernel = Kernel::wide;
  double best = -1;
  for (int split = 1; split <= 8; ++split) {
    const int64_t n = tiles * split;
    const double eff = static_cast<double>(n) / (slots * ((n + slots - 1) / slots));
    const double score = eff + (n >= slots ? 0.03 : 0.0);
    if (score > best + 1e-9) {
      best = score;
      p.cfg.split_k = split;
    }
  }
  p.cfg.n_tiles = tok / 8;
  p.cfg.warps = 8;
  p.why = "verify batch: near the ridge; 12-bit weights straight into wgmma A registers, split K to fill waves";
  return p;
}

// FP32 weights as hi + lo, any m: the wide family's hi + lo source (wide.cu), 64-row CTAs of one warpgroup x 128
// tokens (m <= 128) or 256, K split into a power of two of slices so that the row blocks fill about 128 SMs
// (at most one slice per 64-k group). The split depends on the shape only, not on m.
Plan plan_wide_hilo(const Shape& s, int64_t m) {
  const int64_t row_blocks = (s.rows + 63) / 64, k_groups = (s.k + 63) / 64;
  int split = 1;
  while (2 * split * row_blocks <= 128 && 2 * split <= k_groups) split *= 2;
  Plan p;
  p.kernel = Kernel::wide;
  const int n_tiles = m <= 32 ? 4 : m <= 64 ? 8 : m <= 128 ? 16 : 32;  // 32 / 64 / 128 / 256-token CTAs
  p.cfg = layout_config(split, 4, 1, static_cast<int>((k_groups + split - 1) / split), n_tiles);
  p.why = "hi + lo into wgmma: 64 rows x 32 / 64 / 128 / 256 tokens per CTA, K split, reduced through the workspace";
  return p;
}

// BF16 weights (the raw copy every packed Weights keeps), any m: the stream family. CTAs of 128 rows x the
// token tile (8, 16, ..., 256: the next power of two of m, chunks of 256 past it); K split so that row blocks x
// split fill about one wave of 132 SMs (at most 16 ways, at least 2 64-k steps per CTA). The split depends on
// the shape only (batch invariance over every m of the family).
int stream_split(const Shape& s) {
  const int64_t row_blocks = (s.rows + 127) / 128, k_steps = (s.k + 63) / 64;
  int split = 1;
  while (split < 16 && (split + 1) * row_blocks <= 132 && 2 * (split + 1) <= k_steps) ++split;
  return split;
}

Plan plan_stream(const Shape& s, int64_t m) {
  Plan p;
  p.kernel = Kernel::stream;
  int tok = 8;
  while (tok < m && tok < 256) tok *= 2;
  const int split = stream_split(s);
  p.cfg = layout_config(split, 8, 1, static_cast<int>(((s.k + 63) / 64 + split - 1) / split), tok / 8);
  p.cfg.warps = 9;
  p.why = "raw BF16 weights by TMA into wgmma: 128 rows x the token tile per CTA, K split to fill the SMs once";
  return p;
}

// The raw weights whole rows per CTA (simt.cu): FP32 (the router's raw copy) on the CUDA cores, 2 rows per CTA x 4
// units per thread x 8 tokens per CTA; BF16 through mma.sync, 8 rows x 8 steps per warp x 8 (m <= 8) or 16 tokens.
// Whole K per CTA (split_k 1, no cluster); the sums depend on the weight type only (batch invariance over every m of
// the family).
Plan plan_simt(const Shape& s, int64_t m) {
  Plan p;
  p.kernel = Kernel::simt;
  const bool f32 = s.storage == Storage::hilo;  // (the router's storage keeps the raw FP32 copy)
  // (n_tiles: tokens per CTA; BF16: gpw = 32-k steps per warp and pass, the tensor-core variant, 8 tokens per CTA up
  // to 8 and 16 above: the same sums bitwise)
  p.cfg = f32 ? layout_config(1, 2, 1, 4, 8) : layout_config(1, 8, 1, 8, m <= 8 ? 8 : 16);
  p.cfg.warps = 16;
  p.why = f32 ? "FP32 weights as they are on the CUDA cores: 2 rows x the whole K per CTA, 8 tokens per CTA"
              : "BF16 weights by direct loads into mma.sync: 8 rows x the whole K per CTA, 8 or 16 tokens per CTA";
  return p;
}

// FP32 weights as hi + lo: the router family for every m (chunks of 32 tokens past m = 32).
Plan plan_hilo(const Shape& s, int64_t m) {
  Plan p;
  p.kernel = Kernel::router;
  const Tuned* t = find_tuned(kTunedHiLo, s);
  p.cfg = make_config(t ? t->layout : auto_layout(s.rows, s.k), n_tiles_for(m, 4));
  p.why = fmt::format("hi + lo; {}", t ? t->why : "untuned shape: auto layout (one wave, least work per SM)");
  return p;
}

}  // namespace

Plan select_plan(const Shape& s, int64_t m, Kernel family) {
  const bool packed = s.storage == Storage::packed12 || s.storage == Storage::packed16;
  Plan p;
  switch (family) {
    case Kernel::reference: return reference_plan("forced: reference");
    case Kernel::skinny:
      if (packed && m <= 64) p = plan_packed(s, m);
      break;
    case Kernel::wide:
      if (packed) p = plan_wide(s, m);
      else if (s.storage == Storage::hilo) p = plan_wide_hilo(s, m);
      break;
    case Kernel::vendor:
      if (packed || s.storage == Storage::hilo) {
        p.kernel = Kernel::vendor;
        p.why = "cuBLAS";
      }
      break;
    case Kernel::router:
      if (s.storage == Storage::hilo) p = plan_hilo(s, m);
      break;
    case Kernel::stream:
      if (packed) p = plan_stream(s, m);
      break;
    case Kernel::simt:
      if (packed || s.storage == Storage::hilo) p = plan_simt(s, m);
      break;
  }
  if (p.kernel != family)
    throw Error(fmt::format("solgemm: kernel family '{}' cannot serve {} weights at m = {}", to_string(family),
                            to_string(s.storage), m));
  p.why = "forced: " + p.why;
  return p;
}

Kernel kernel_from_string(const std::string& name) {
  for (Kernel k : {Kernel::reference, Kernel::skinny, Kernel::wide, Kernel::vendor, Kernel::router, Kernel::stream,
                   Kernel::simt})
    if (name == to_string(k)) return k;
  throw Error(fmt::format(
      "solgemm: unknown kernel family '{}'; expected one of: reference, skinny, wide, vendor, router, stream, simt",
      name));
}

// The router family wins up to this many tokens on any shape (6-13 us against cuBLAS SGEMM's 10-26 at
// m <= 32), with the shape's layout (kTunedHiLo, else auto_layout) at every m and n_tiles by m: one K order, so rows of
// one call are batch invariant over the range (the tuned 256 x 8192 shape: 7..32, its 1..6 tokens on the simt family).
// Past kRouterFamilyMaxM the rest takes the vendor family's two BF16 tensor-core GEMMs (hi, lo), except the shapes of
// kHiLoWide (the wide family's hi + lo source).
constexpr int64_t kRouterFamilyMaxM = 32;
// Verify batches of these shapes go to the wide family's hi + lo source (plan_wide_hilo; tune_plan).
struct HiLoWide {
  int64_t rows, k, min_m, max_m;
  const char* why;
};
constexpr HiLoWide kHiLoWide[] = {
    {256, 8192, 33, 256, "router 33 <= m <= 256: 4 row blocks x 32 K slices, 128 CTAs, one cooperative launch (tune_plan, "
                         "perf-notes steps 97-99: 7.6 / 8.8 / 11.2 us at m = 48 / 128 / 256; the router family's layouts 8.0 / 11.0 / "
                         "17.8; at m <= 32 the router family stays ahead, 7.0 against 7.2 at m = 32)"},
};

// Where the skinny family beats cuBLAS by a clear margin (bench, docs/results/dev/: 2026-11-29_h200_s4-lean-loop_bench.log,
// and for the no-split layouts at m <= 2 and the unpooler s7-*): (rows, K, m range, layout). Elsewhere BF16 goes to
// cuBLAS, which is not batch invariant anyway. The layouts of one shape share their K order (the same k slices,
// summed in the same order: only how the slices map to CTAs and warps differs), so rows of every m in the skinny
// ranges of a shape are bitwise batch invariant among themselves, not with the cuBLAS rows above. At m = 32
// qkv_gate ties with cuBLAS even with the shared split-K tail (14.4 us vs 14.3, s10-bdbb5b7-skinny-shared-tail);
// the pooler won there with that tail (19.8 vs 21.4) until the vendor tuner's broad sweep (perf-notes step 72).
struct SkinnyWin {
  int64_t rows, k, min_m, max_m;
  Layout layout;
  const char* why;
};
constexpr SkinnyWin kSkinnyWins[] = {
    {2304, 8192, 1, 4, {8, 5, 1, 16},
     "qkv_gate m<=4: 5 row tiles x 1 k warp x 16 groups per CTA, 232 CTAs (29 row blocks, the last of 4 tiles; at most "
     "160 groups per SM against 192 for 6 row tiles), 8-way split-K as clusters of 8; the K order of 17..32 (8 slices of "
     "16 groups in sequence) (perf-notes steps 202, 203; tune_plan, step 196: 10.46 us at m = 1 against "
     "10.66 for 2 k warps x 8 groups (8 x (2 x 8)); step 126: 5 row tiles ahead of 6 at 1..4; cuBLAS 13.6-14.0)"},
    {2304, 8192, 5, 8, {8, 6, 1, 16},
     "qkv_gate 5<=m<=8: 6 row tiles x 1 k warp x 16 groups per CTA, 192 CTAs (2 per SM), 8-way split-K as clusters of 8, "
     "the K order of 1..4, 9..16 and 17..32 (perf-notes step 202; tune_plan, step 196: 10.88 us at m = 8 against 11.10 for "
     "2 k warps x 8 groups; step 126: 6 row tiles ahead of 5 at 8; cuBLAS 13.8)"},
    {2304, 8192, 9, 12, {8, 5, 1, 16},
     "qkv_gate 9<=m<=12: 5 row tiles x 1 k warp x 16 groups per CTA, 232 CTAs, 8-way split-K as clusters of 8, the K "
     "order of 1..8 and 17..32: one order over 1..32 (perf-notes step 203: tune_plan, two runs, 11.39 / 11.62-11.71 / "
     "11.78 / 11.84-11.90 us at m = 9 / 10 / 11 / 12 against 11.36-11.42 / 11.62-11.65 / 11.62-11.65 / 11.62-11.65 for "
     "2 k warps x 8 groups, the order 8 x (2 x 8) these m had before)"},
    {2304, 8192, 13, 16, {8, 10, 1, 16},
     "qkv_gate 13<=m<=16: 10 row tiles x 1 k warp x 16 groups per CTA, 120 CTAs (1 per SM) as 15 clusters of 8 (17..32's "
     "layout at n_tiles 2), one K order over 1..32 (perf-notes step 203: tune_plan, two runs, 11.97-12.00 / 12.10-12.13 / "
     "12.00-12.06 / 12.03-12.06 us at m = 13 / 14 / 15 / 16 against 11.71-11.81 / 11.74-11.84 / 11.74-11.90 / 11.84-11.90 "
     "for the order 8 x (2 x 8); the judge, m = 16: +0.23..0.44 us, for rows that are bitwise the same at every m of 1..32)"},
    {2304, 8192, 17, 32, {8, 10, 1, 16},
     "qkv_gate 17<=m<=32: 10 row tiles x 1 k warp x 16 groups per CTA, 120 CTAs (15 row blocks, the last of 4 tiles; "
     "1 per SM), 8-way split-K as 15 clusters of 8 (all that an H200 holds at one CTA per SM, perf-notes step 82; "
     "where fewer fit, the split reduces through the workspace, ~0.7 us slower); its K order (8 slices of 16 groups in "
     "sequence) is that of 1..16 (perf-notes steps 202, 203) (tune_plan, "
     "perf-notes step 171, three runs: 13.34-13.57 us at m = 17 / 24 / 32 against the tuned cuBLASLt 13.47-13.82 and "
     "cuBLAS 13.95-14.43)"},
    {4096, 8192, 1, 1, {1, 1, 8, 16},
     "pooler m=1: no split (1 row tile x 8 k warps, whole K per CTA, 256 CTAs, 2 per SM), x of the one token staged "
     "(tune_plan, perf-notes step 133, tuning/2026-11-30_h200_s25-pooler12.md, two runs: 14.37-14.59 us against "
     "14.91-15.36 for 2 row tiles per CTA at one per SM and 15.26-15.33 with x through the ring; cuBLAS 20.9-21.0)"},
    {4096, 8192, 2, 2, {1, 2, 8, 16},
     "pooler m=2: no split (2 row tiles x 8 k warps, whole K per CTA, 128 CTAs; x of m tokens only): 15.0 us against "
     "15.2-15.4 for 1 row tile per CTA (tune_plan, perf-notes step 133; 16.4 against 17.0 split 8 ways, step 43)"},
    {4096, 8192, 3, 16, {1, 1, 8, 16},
     "pooler 3<=m<=16: no split (1 row tile x 8 k warps, whole K per CTA, 256 CTAs, 2 per SM), x through the ring "
     "(perf-notes step 96; tune_plan (tuning/2026-11-30_h200_s17-xring-pooler-unpooler.md): the fastest layout at m = 3 / 8 / "
     "16, 15.4 / 15.3 / 16.5 us; skinny_bench s17-xring5: 15.6 / 15.2 / 16.6 / 16.5 us at m = 3 / 8 / 13 / 16 against "
     "17.1 / 17.1 / 17.8 / 17.8 for the 8-way split-K layout 8 x 16 x 1 x 16 before it, bitwise the same sums: both add "
     "8 k slices of 16 groups in order)"},
    {4096, 8192, 17, 32, {2, 2, 4, 16, true},
     "pooler 17<=m<=32: K split over a pair (2 row tiles x 4 k warps x K/2 per CTA, 256 CTAs, 2 per SM: the unpooler's "
     "CTA shape), x through the ring at n_tiles 4, the pair's 8 k slices summed as one sequence (each CTA finishes one "
     "row tile): the same K order as 1..16 (perf-notes steps 165, 166: the judge, binaries alternated in one call, "
     "16.51-16.62 us at m = 32 against 17.10-17.38 for 2 row tiles x 8 k warps at one CTA per SM)"},
    {8192, 4096, 1, 32, {1, 2, 4, 16},
     "unpooler (all rows) m<=32: no split (2 row tiles x 4 k warps, 256 CTAs, 2 per SM), x through the ring from 3 tokens "
     "(perf-notes steps 96, 111; tune_plan after the exception warp, tuning/2026-11-30_h200_s21-excwarp-unpooler.md: the "
     "fastest layout at m = 1 / 8 / 16, 14.3 / 14.7 / 14.9 us (4 row tiles per CTA at m = 1: 14.8) against cuBLAS 17.6-17.8); "
     "at 17..32 tokens the 2-CTA x-ring variant at n_tiles 4 with boxes of m rows (perf-notes steps 131, 132, "
     "tuning/2026-11-30_h200_s25-xring4-2cta.md: 15.9 / 15.7 / 16.1 us at m = 17 / 24 / 32 against 17.5-17.8 for 4 row tiles "
     "per CTA at one per SM and the tuned cuBLASLt 17.7-18.1): one layout, one K order over 1..32"},
    {1024, 4096, 9, 16, {8, 5, 2, 4},
     "unpooler slice 9<=m<=16 (its first 1024 rows; an unjudged m): 5 row tiles x 2 k warps x 4 groups per CTA, 104 CTAs "
     "(13 row blocks, the last of 4 tiles) as 13 clusters of 8, 8-way split-K, K order 8 x (2 x 4) (tune_plan, "
     "tuning/2026-12-03_h200_s48-slice-9-32.md, two runs: 5.54-5.76 / 5.76 / 5.86-5.92 us at m = 9 / 12 / 16 against the "
     "tuned cuBLASLt's 6.14-6.37 / 6.34-6.40 / 6.24-6.40 and cuBLAS 7.0-7.4; at 24 / 32 tokens the vendor family stays "
     "ahead, 6.46-6.75 against 7.7-7.9; 1..8 on the simt family: another K order)"},
    {8192, 1024, 1, 1, {1, 2, 2, 8},
     "o m=1: no split (2 row tiles x 2 k warps x 8 groups: the whole K of 1024 per CTA), 256 CTAs (2 per SM) (tune_plan "
     "after the exception warp, tuning/2026-11-30_h200_s21-excwarp-o.md: 5.50 us against cuBLAS 6.14 and the tuned "
     "cuBLASLt 6.24; a tie at m = 2, cuBLAS ahead from 3 tokens: rows of m = 1 are not bitwise those of m >= 2)"},
};

namespace {

// Where the simt family (the raw weights on the CUDA cores, whole rows per CTA, no split-K exchange) beats the
// tensor-core families: a few tokens only, since every CTA reads all of x through L2 (m x K x 2 bytes per CTA) and
// the FMAs grow with m (tune_plan simt rows, docs/results/tuning/2026-11-29_h200_s11-simt-{router,slice}.md and
// ..._s11-simt-bulkx-{router,slice}.md). The simt rows of a
// shape are bitwise batch invariant among themselves (one layout), not with the next range's family.
struct SimtWin {
  int64_t rows, k;
  bool f32;  // FP32 weights (the router's hi + lo storage keeps the raw FP32 copy) or BF16 (packed storage)
  int64_t max_m;
  const char* why;
};
constexpr SimtWin kSimtWins[] = {
    {256, 8192, true, 6,
     "router m<=6: FP32 weights as they are, 2 rows x the whole K per CTA, 128 CTAs, no split, x by one bulk copy per "
     "token (tune_plan: 4.77 / 5.02 / 5.47 us at m = 3 / 4 / 6 against 5.47 / 5.44 / 5.82 for the router family; 6.37 "
     "against 6.02 at m = 8)"},
    {1024, 4096, false, 8,
     "unpooler slice m<=8: the simt 12-bit layout (raw BF16 where the matrix is stored in 16 bits or a row holds more "
     "exceptions than its 4 slots, perf-notes step 181) by direct loads "
     "decoded into mma.sync (8 rows x the whole K per CTA, 128 CTAs, no split, every load issued at entry, each row's "
     "first exception entries in its block's bytes), one K order over 1..8 (perf-notes step 180; the judge, new and old "
     "binaries alternated: 3.10-3.36 us at m = 1 against 3.38-3.65 for raw BF16, 4.22-4.35 at m = 8 against 4.34-4.48; "
     "step 174: raw BF16 3.46-3.58 against 4.10 for the FMA form)"},
};

const SimtWin* find_simt(const Shape& s, int64_t m) {
  const bool f32 = s.storage == Storage::hilo;
  for (const SimtWin& w : kSimtWins)
    if (w.rows == s.rows && w.k == s.k && w.f32 == f32 && m <= w.max_m) return &w;
  return nullptr;
}

}  // namespace

int64_t simt_rows_bf16(int64_t n, int64_t k) {
  int64_t r = 0;
  for (const SimtWin& w : kSimtWins)
    if (!w.f32 && w.k == k && w.rows <= n) r = std::max(r, w.rows);
  return r;
}

Plan select_plan(const Shape& s, int64_t m) { return select_plan(s, m, ExceptionLoad{}); }

Plan select_plan(const Shape& s, int64_t m, const ExceptionLoad& exc) { return select_plan(s, m, exc, nullptr); }

Plan select_plan(const Shape& s, int64_t m, const ExceptionLoad& exc, const UntunedChoice* measured) {
  if (s.storage == Storage::packed12 || s.storage == Storage::packed16 || s.storage == Storage::hilo)
    if (const SimtWin* w = find_simt(s, m)) {
      Plan p = plan_simt(s, m);
      p.why = w->why;
      return p;
    }
  switch (s.storage) {
    case Storage::packed12:
    case Storage::packed16: {
      for (const SkinnyWin& w : kSkinnyWins)
        if (w.rows == s.rows && w.k == s.k && m >= w.min_m && m <= w.max_m) {
          Plan p;
          // (split K, not a pair: the CTAs stage x, the launcher's use_xring; perf-notes step 189)
          const double rate_bound = w.layout.cs > 1 && !w.layout.k_seq ? kExcRateTokensStagedX : kExcRateTokens;
          if (s.storage == Storage::packed12 && (static_cast<double>(m) * exc.rate > rate_bound ||
                                                 m * exc.block_max > kExcBlockTokens)) {
            p.kernel = Kernel::vendor;
            p.why = fmt::format("cuBLAS: {} tokens x the 12-bit code's exceptions (rate {:.2e}, up to {} in a block) past "
                                "the skinny family's bounds ({:.1e}, {}; perf-notes steps 182, 189)", m, exc.rate,
                                exc.block_max, rate_bound, kExcBlockTokens);
            return p;
          }
          p.kernel = Kernel::skinny;
          p.cfg = make_config(w.layout, n_tiles_for(m, 4));
          p.why = w.why;
          return p;
        }
      // Shapes the table was not tuned on: the layout prepare measured for all N rows (UntunedChoice), else the layout
      // rule's at few tokens (perf-notes steps 207, 211), with the same exception bounds as the tuned rows.
      // (tuned shapes and small matrices first, so that their calls never run the rule's search)
      if (s.storage == Storage::packed12 && s.rows * s.k >= kUntunedSkinnyMinWeights &&
          find_tuned(kTunedPacked, s) == nullptr) {
        const bool meas = measured != nullptr && measured->rows == s.rows;
        const std::optional<UntunedLayout> u =
            meas ? (measured->max_m > 0 ? std::optional<UntunedLayout>(measured->layout) : std::nullopt)
                 : untuned_skinny_layout(s.rows, s.k);
        if (u) {
          const int64_t last = meas ? measured->max_m : untuned_max_m(*u, s.rows, s.k);
          const double rate_bound = u->cs > 1 ? kExcRateTokensStagedX : kExcRateTokens;
          if (m <= last && static_cast<double>(m) * exc.rate <= rate_bound && m * exc.block_max <= kExcBlockTokens) {
            Plan p;
            p.kernel = Kernel::skinny;
            p.cfg = make_config({u->cs, u->rt_cta, u->wk, u->gpw}, n_tiles_for(m, 4));
            p.why = meas ? fmt::format("untuned shape at m <= {}: the layout that ran fastest of the rule's candidates "
                                       "when prepare timed them, ahead of the tuned cuBLASLt at every m it timed up to "
                                       "there (K as one sequence of {} slices of {} groups; perf-notes step 211)",
                                       last, u->cs * u->wk, u->gpw)
                         : fmt::format(
                               "untuned shape at m <= {}: the layout rule (about 2 CTAs per SM, K as one sequence of {} "
                               "slices of {} groups; perf-notes steps 207, 211: tune_plan on other models' shapes, "
                               "docs/results/tuning/2026-12-03_h200_s49-other-shapes.md)",
                               last, u->cs * u->wk, u->gpw);
            return p;
          }
        }
      }
      // Measured on the H200 (docs/perf-notes.md): elsewhere the skinny family (m <= 64) and the wide family
      // (m > 64) are correct but not faster than cuBLAS. Force them with PrepareOptions::kernel ("skinny",
      // "wide") to measure them.
      Plan p;
      p.kernel = Kernel::vendor;
      p.why = m <= 64 ? "BF16 m <= 64: cuBLAS until the skinny family beats it (perf-notes: skinny v2)"
                      : "BF16 m > 64: cuBLAS until the wide family beats it (perf-notes: wide step 3)";
      return p;
    }
    case Storage::hilo:
      for (const HiLoWide& v : kHiLoWide)
        if (v.rows == s.rows && v.k == s.k && m >= v.min_m && m <= v.max_m) {
          Plan p = plan_wide_hilo(s, m);
          p.why = fmt::format("{}; {}", p.why, v.why);
          return p;
        }
      if (m > kRouterFamilyMaxM) {
        Plan p;
        p.kernel = Kernel::vendor;
        p.why = "router verify batch: hi and lo as two BF16 tensor-core GEMMs into the FP32 output (cuBLAS)";
        return p;
      }
      return plan_hilo(s, m);
    case Storage::raw_bf16:
    case Storage::raw_f32: break;
  }
  return reference_plan("raw weights: only the reference kernel reads them");
}

}  // namespace solgemm
