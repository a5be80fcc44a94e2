// The skinny layout of a BF16 shape the plan table was not tuned on, chosen at prepare by timing (perf-notes steps 211,
// 214), for each row count of untuned_row_sets: all N rows, and the leading N/2, N/4, N/8 (a call computing only the
// first rows of W is the problem of a matrix of that many rows: timed on its own, keyed by its rows).
//
// Why: the layout rule (plan.cpp, step 207) is a formula fitted on one GPU type and a dozen shapes; on others it picked
// layouts 1.2-1.9x slower than cuBLAS (1024 x 8192 and 2048 x 8192: one compute warp per CTA; step 211). Prepare
// already times cuBLASLt's candidates for every BF16 matrix (tune_vendor, 1-12 s); timing a dozen of our own layouts
// beside it costs ~0.1 s and makes "never slower than the vendor family" a measured fact on the user's GPU and shape
// instead of a rule's promise.
//
// How: the rule's candidates (untuned_skinny_candidates: the rule's own layout first, then the cheapest of a wider
// set by its cost model) each timed at 1 and 8 tokens (cold graph replays, median of 5), scored by the sum of their
// times over the vendor family's at the same m; the best three timed again (median of 9); the best kept. Its range:
// m = 1, 2, 4, 8, 16 in turn (those the exception bounds let it serve, at most max_m), each in 9 interleaved pairs
// against the vendor family; it serves 1..max_m up to the last m where the median ratio was <= kServeRatio before the
// first miss (a margin for the pairs' noise: 1-3% between processes, step 211). One layout for the whole range: one K order, rows batch invariant over it.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "cold_timer.hpp"
#include "kernels.hpp"
#include "tune_file.hpp"

namespace solgemm::kernels {
namespace {

constexpr const char* kTuneTag = "untuned-skinny-v1";
constexpr int64_t kPoints[] = {1, 2, 4, 8, 16};
constexpr float kServeRatio = 0.98f;

struct Stored {  // the tune file's bytes
  int32_t cs, rt, wk, gpw;
  int64_t max_m;
};

std::mutex cache_mu;
std::map<std::tuple<int, int64_t, int64_t, int64_t>, Stored>& cache() {  // (device, rows, K, top m timed)
  static std::map<std::tuple<int, int64_t, int64_t, int64_t>, Stored> c;
  return c;
}

std::string tune_key(int dev, int64_t rows, int64_t k, int64_t top) {
  return fmt::format("{}/N{}/K{}/m{}", tune_gpu_key(dev), rows, k, top);
}

std::string lstr(const UntunedLayout& u) { return fmt::format("cs{}/rt{}/wk{}/g{}", u.cs, u.rt_cta, u.wk, u.gpw); }

// What the description calls the rows timed (rows < n: a call of the matrix's first rows).
std::string what_of(int64_t rows, int64_t n) {
  return rows < n ? fmt::format("its first {} rows, an untuned shape", rows) : "untuned shape";
}

UntunedTuning from_stored(const Stored& s, int64_t rows, int64_t n, const char* how) {
  UntunedTuning t;
  t.choice = {rows, UntunedLayout{s.cs, s.rt, s.wk, s.gpw}, s.max_m};
  const std::string what = what_of(rows, n);
  t.desc = s.max_m > 0 ? fmt::format("{}: skinny {} at m <= {} ({})", what, lstr(t.choice.layout), s.max_m, how)
                       : fmt::format("{}: the vendor family at every m ({})", what, how);
  return t;
}

}  // namespace

UntunedTuning tune_untuned(const Blas& blas, const VendorTable* table, const void* W, const PackedView& w, int64_t rows,
                           const ExceptionLoad& exc, int64_t max_m, cudaStream_t stream, const std::string& tune_file) {
  const int64_t n = rows, k = w.k;  // (the shape timed: the first `rows` of the matrix's w.n rows)
  if (rows < 1 || rows > w.n) throw Error(fmt::format("solgemm: tune_untuned: rows = {}; expected 1..{}", rows, w.n));
  const std::string what = what_of(rows, w.n);
  int dev = 0;
  cudaGetDevice(&dev);
  // (the range timed depends on PrepareOptions::max_m: part of the keys)
  const int64_t top = std::min<int64_t>(max_m, kPoints[std::size(kPoints) - 1]);
  const auto ckey = std::make_tuple(dev, n, k, top);
  const std::string fkey = tune_file.empty() ? std::string() : tune_key(dev, n, k, top);
  Stored st{};
  if (!tune_file.empty() && tune_file::read(tune_file, kTuneTag, fkey, &st, sizeof(st))) {
    std::lock_guard<std::mutex> lock(cache_mu);
    cache()[ckey] = st;
    return from_stored(st, n, w.n, fmt::format("from {}", tune_file).c_str());
  }
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    auto it = cache().find(ckey);
    if (it != cache().end()) {
      if (!tune_file.empty()) tune_file::append(tune_file, kTuneTag, fkey, &it->second, sizeof(Stored));
      return from_stored(it->second, n, w.n, "timed for an earlier matrix of this shape");
    }
  }
  const bool log = std::getenv("SOLGEMM_TUNE_LOG") != nullptr;
  const Shape shape{n, k, Storage::packed12};
  UntunedTuning res;
  res.choice.rows = n;
  {  // exceptions past the skinny family's bounds at one token (or no layout): nothing to time
    const std::optional<UntunedLayout> rule = untuned_skinny_layout(n, k);
    const UntunedChoice any{n, rule.value_or(UntunedLayout{1, 1, 1, 1}), 1};
    if (!rule || select_plan(shape, 1, exc, &any).kernel != Kernel::skinny) {
      res.desc = what + ": the vendor family at every m (the 12-bit code's exceptions pass the skinny family's "
                 "bounds, or no layout fits)";
      return res;
    }
  }
  ColdTimer tm;
  void *x = nullptr, *out = nullptr;
  if (!tm.ok() || top < 1 || cudaMalloc(&x, static_cast<size_t>(top * k) * 2) != cudaSuccess ||
      cudaMalloc(&out, static_cast<size_t>(top * n) * 2) != cudaSuccess) {
    cudaFree(x);
    cudaFree(out);
    cudaGetLastError();
    res.desc = what + ": the vendor family (no memory to time the skinny layouts at prepare)";
    return res;
  }
  fill_tuning_x(static_cast<__nv_bfloat16*>(x), static_cast<size_t>(top * k), stream);
  cudaStreamSynchronize(stream);
  const auto* xb = static_cast<const __nv_bfloat16*>(x);
  auto* ob = static_cast<__nv_bfloat16*>(out);
  auto vendor_call = [&](int64_t m) {
    return timed_call([&, m](cudaStream_t s) { launch_vendor(blas, table, W, xb, m, ob, n, k, s); });
  };
  // The plan of layout u at m (nullopt where the plan would not serve m with it: the exception bounds).
  auto plan_of = [&](const UntunedLayout& u, int64_t m) -> std::optional<Plan> {
    const UntunedChoice c{n, u, top};
    Plan p = select_plan(shape, m, exc, &c);
    if (p.kernel != Kernel::skinny) return std::nullopt;
    return p;
  };
  auto skinny_call = [&](const Plan& p, int64_t m) {
    return timed_call([&, cfg = p.cfg, m](cudaStream_t s) { launch_skinny(cfg, w, xb, m, ob, n, s); });
  };
  // Screen: each candidate at 1 and 8 tokens (or the most it serves below 8), relative to the vendor family.
  const std::vector<UntunedLayout> cands = untuned_skinny_candidates(n, k, kUntunedCandidates);
  std::vector<int64_t> pts = {1};
  if (top >= 8) pts.push_back(8);
  std::vector<float> vendor_us;
  for (int64_t m : pts) vendor_us.push_back(tm.time_median(vendor_call(m), 2, 9));
  auto score = [&](const UntunedLayout& u, int warm, int reps) -> float {
    float s = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      const auto p = plan_of(u, pts[i]);
      if (!p) return ColdTimer::kNever;
      s += tm.time_median(skinny_call(*p, pts[i]), warm, reps) / vendor_us[i];
    }
    return s;
  };
  std::vector<std::pair<float, UntunedLayout>> screened;
  for (const UntunedLayout& u : cands) {
    const float s = score(u, 1, 5);
    if (log) fmt::print(stderr, "solgemm tune untuned {}x{} {}: {:.3f}\n", n, k, lstr(u), s / pts.size());
    if (s < ColdTimer::kNever) screened.push_back({s, u});
  }
  std::stable_sort(screened.begin(), screened.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (screened.size() > 3) screened.resize(3);
  for (auto& [s, u] : screened) s = score(u, 2, 9);
  std::stable_sort(screened.begin(), screened.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string ratios;
  if (!screened.empty()) {
    const UntunedLayout best = screened.front().second;
    res.choice.layout = best;
    for (int64_t m : kPoints) {
      if (m > top) break;
      const auto p = plan_of(best, m);
      if (!p) break;
      const float r = tm.paired_ratio(vendor_call(m), skinny_call(*p, m), 9);
      ratios += fmt::format("{}m{} {:.2f}", ratios.empty() ? "" : ", ", m, r);
      if (log) fmt::print(stderr, "solgemm tune untuned {}x{} {} at m = {}: {:.3f} of the vendor family\n", n, k,
                          lstr(best), m, r);
      if (r > kServeRatio) break;
      res.choice.max_m = m;
    }
  }
  cudaFree(x);
  cudaFree(out);
  cudaGetLastError();
  const Stored s{res.choice.layout.cs, res.choice.layout.rt_cta, res.choice.layout.wk, res.choice.layout.gpw,
                 res.choice.max_m};
  {
    std::lock_guard<std::mutex> lock(cache_mu);
    cache()[ckey] = s;
  }
  if (!tune_file.empty()) tune_file::append(tune_file, kTuneTag, fkey, &s, sizeof(s));
  const std::string how = screened.empty() ? "no candidate layout ran"
                                           : fmt::format("timed at prepare, ours / the tuned cuBLASLt: {}", ratios);
  res.desc = from_stored(s, n, w.n, how.c_str()).desc;
  return res;
}

}  // namespace solgemm::kernels
