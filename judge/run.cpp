// The judge's driver (see run.hpp). Phases, in order: setup -> weights and prepare -> correctness -> timing ->
// figures. Each phase is one function below; run_judge() reads as the list of phases.
#include "run.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "device.hpp"
#include "generators.hpp"
#include "impl.hpp"
#include "kernels.hpp"
#include "report.hpp"
#include "seed_tables.hpp"
#include "solgemm/solgemm.hpp"
#include "timing.hpp"
#include "version.hpp"

namespace solgemm::judge {
namespace {

constexpr size_t kFlushBytes = size_t{512} << 20;  // >= 4x the H200's 60 MB L2 (the anchors use 512 MB too)
constexpr double kPrepareLimitS = 300;
constexpr int kFixedCostReplays = 400;
constexpr int kCeilingReplays = 40;
constexpr int kWarmupPairs = 5;
constexpr double kMinUs = 0.01;  // a replay minus the fixed cost is clamped here (never <= 0)

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Everything the phases share.
struct Ctx {
  Ctx(const Options& o, std::ostream& l) : opt(o), log(l), sel(select(o)), gen(parse_generator(o.generator)) {}
  const Options& opt;
  std::ostream& log;
  Selection sel;
  GeneratorSpec gen;
  RunResult r;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<Bench> bench;
  std::array<DeviceBuffer, kLayerCount> w;
  std::unique_ptr<Implementation> impl, base;
  DeviceBuffer x, out_a, out_b, ref, row_err;
  std::vector<RowError> host_rows;
  std::vector<int> boot_loads;           // scored timed shapes: their load, and their paired samples
  std::vector<PairedTimes> boot_times;
  cudaStream_t s() const { return stream->get(); }
};

std::string reproduce_hint(const Ctx& c, const Shape& sh) {
  return fmt::format("reproduce: solgemm-judge --seed {} --generator {} --layers {} --m {} --impl {} --baseline {} "
                     "--check-only",
                     c.opt.seed, c.opt.generator, sh.info().name, sh.m, c.opt.impl, c.opt.baseline);
}

// ---- setup ----
void setup(Ctx& c) {
  c.r.gpu = open_gpu();
  c.r.commit = build_commit();
  c.r.dirty = build_dirty();
  const GpuInfo& g = c.r.gpu;
  c.log << fmt::format("solgemm-judge: {} ({} SMs, SM clock {} MHz, memory clock {} MHz, L2 {:.0f} MB), commit "
                       "{:.12}{}\n",
                       g.name, g.sms, g.sm_clock_mhz, g.mem_clock_mhz, g.l2_bytes / 1e6, c.r.commit,
                       c.r.dirty ? " (dirty)" : "");
  c.stream = std::make_unique<Stream>();
  c.bench = std::make_unique<Bench>(c.s(), g.sms, g.l2_bytes, kFlushBytes);  // the flush buffer comes first
  c.r.flush_mb = static_cast<double>(c.bench->flush_bytes()) / 1e6;
}

// ---- weights and prepare ----
void prepare_all(Ctx& c) {
  for (int l : c.sel.layers) {
    const Layer& L = layers()[static_cast<size_t>(l)];
    auto t0 = std::chrono::steady_clock::now();
    c.w[static_cast<size_t>(l)] = DeviceBuffer(static_cast<size_t>(L.n * L.k * L.weight_bytes()), "weights");
    load_layer_weights(c.gen, c.opt.seed, l, c.w[static_cast<size_t>(l)].get(), c.s());
    c.log << fmt::format("weights  {:<9} {}x{} {} from {} ({:.2f} s)\n", L.name, L.n, L.k, L.fp32 ? "f32" : "bf16",
                         c.gen.str(), seconds_since(t0));
  }
  c.impl = make_implementation(c.opt.impl, c.sel.max_m, c.opt.tune_file);
  c.base = make_implementation(c.opt.baseline, c.sel.max_m, c.opt.tune_file);
  for (int l : c.sel.layers) {
    const Layer& L = layers()[static_cast<size_t>(l)];
    LayerResult lr;
    lr.layer = l;
    auto t0 = std::chrono::steady_clock::now();
    c.impl->prepare(l, c.w[static_cast<size_t>(l)].get(), c.s());
    cuda_check(cudaStreamSynchronize(c.s()), "preparing the implementation");
    lr.impl_prepare_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    c.base->prepare(l, c.w[static_cast<size_t>(l)].get(), c.s());
    cuda_check(cudaStreamSynchronize(c.s()), "preparing the baseline");
    lr.base_prepare_s = seconds_since(t0);
    lr.impl_description = c.impl->description(l);
    lr.base_description = c.base->description(l);
    lr.impl_weight_bits = c.impl->weight_bits(l, 1, L.n);  // bits read at m = 1 (the plan may differ by m)
    lr.base_weight_bits = c.base->weight_bits(l, 1, L.n);
    lr.impl_device_bytes = c.impl->device_bytes(l);
    c.log << fmt::format("prepare  {:<9} {} ({:.2f} s): {}\n", L.name, c.impl->name(), lr.impl_prepare_s,
                         lr.impl_description);
    if (lr.impl_prepare_s > kPrepareLimitS)
      c.r.failures.push_back(fmt::format("{} / prepare: took {:.0f} s > {:.0f} s allowed", L.name, lr.impl_prepare_s,
                                         kPrepareLimitS));
    c.r.layers.push_back(lr);
  }
  // Buffers for every shape, allocated before anything is timed.
  int64_t max_k = 1, max_rows = 1;
  for (const Shape& sh : c.sel.shapes) {
    max_k = std::max(max_k, sh.info().k);
    max_rows = std::max(max_rows, sh.rows());
  }
  const size_t mm = static_cast<size_t>(c.sel.max_m);
  c.x = DeviceBuffer(mm * static_cast<size_t>(max_k) * 2, "x");
  c.out_a = DeviceBuffer(mm * static_cast<size_t>(max_rows) * 4, "the implementation's output");
  c.out_b = DeviceBuffer(mm * static_cast<size_t>(max_rows) * 4, "the baseline's output");
  c.ref = DeviceBuffer(mm * static_cast<size_t>(max_rows) * 8, "the FP64 reference");
  c.row_err = DeviceBuffer(mm * sizeof(RowError), "the per-row errors");
}

// ---- correctness ----
// Runs one side into `out` (pre-filled with NaN) on the current x and checks it against the current reference.
CheckResult check_side(Ctx& c, Implementation& side, const Shape& sh, void* out,
                       const std::function<void(cudaStream_t)>& call) {
  const Layer& L = sh.info();
  const int64_t rows = sh.rows();
  cuda_check(cudaMemsetAsync(out, 0xFF, static_cast<size_t>(sh.m * rows * L.out_bytes()), c.s()),
             "filling the output with NaN");  // 0xFFFF / 0xFFFFFFFF: NaN in BF16 and FP32
  CheckResult bad;
  bad.ok = false;
  try {
    call(c.s());
  } catch (const std::exception& e) {
    bad.failure = fmt::format("the call threw: {}", e.what());
    return bad;
  }
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    bad.failure = fmt::format("CUDA error after the call: {}", cudaGetErrorString(e));
    return bad;
  }
  kernels::row_errors(out, L.fp32, c.ref.as<double>(), sh.m, rows, c.row_err.as<RowError>(), c.s());
  c.host_rows.resize(static_cast<size_t>(sh.m));
  cuda_check(cudaMemcpyAsync(c.host_rows.data(), c.row_err.get(), static_cast<size_t>(sh.m) * sizeof(RowError),
                             cudaMemcpyDeviceToHost, c.s()),
             fmt::format("checking {} on {}", side.name(), sh.label()).c_str());
  cuda_check(cudaStreamSynchronize(c.s()), fmt::format("checking {} on {}", side.name(), sh.label()).c_str());
  return evaluate(c.host_rows, bounds_for(L.fp32));
}

void new_input(Ctx& c, const Shape& sh, uint64_t x_seed) {
  const Layer& L = sh.info();
  generate_x(x_seed, sh.m, L.k, c.x.get(), c.s());
  kernels::reference_fp64(c.w[static_cast<size_t>(sh.layer)].get(), L.fp32, c.x.as<uint16_t>(), sh.m, sh.rows(), L.k,
                          c.ref.as<double>(), c.s());
}

// Records a failing check of one side as a failure line (check, row, size: in r.failure; seed; how to rerun).
void note_failure(Ctx& c, ShapeResult& sr, const Implementation& side, const CheckResult& r, uint64_t x_seed,
                  const std::string& where) {
  const std::string line = fmt::format("{}: {} failed ({}): {}; x seed {:#x}; {}", sr.shape.label(), side.name(),
                                       where, r.failure, x_seed, reproduce_hint(c, sr.shape));
  if (!sr.failure.empty()) sr.failure += "\n";
  sr.failure += line;
  c.r.failures.push_back(line);
}

void check_all(Ctx& c) {
  const size_t n = c.sel.shapes.size();
  for (size_t i = 0; i < n; ++i) {
    const Shape& sh = c.sel.shapes[i];
    ShapeResult sr;
    sr.shape = sh;
    sr.impl_plan = c.impl->plan(sh.layer, sh.m, sh.rows());
    sr.base_plan = c.base->plan(sh.layer, sh.m, sh.rows());
    const int l = sh.layer;
    auto run_impl = [&](cudaStream_t s) { c.impl->run(l, c.x.get(), sh.m, c.out_a.get(), sh.rows(), s); };
    auto run_base = [&](cudaStream_t s) { c.base->run(l, c.x.get(), sh.m, c.out_b.get(), sh.rows(), s); };
    bool impl_failed = false, base_failed = false;
    for (int in = 0; in < c.opt.inputs; ++in) {
      const uint64_t xs = check_x_seed(c.opt.seed, l, sh.m, in);
      new_input(c, sh, xs);
      const CheckResult a = check_side(c, *c.impl, sh, c.out_a.get(), run_impl);
      const CheckResult b = check_side(c, *c.base, sh, c.out_b.get(), run_base);
      if (in == 0) {
        sr.impl_check = a;
        sr.base_check = b;
      } else {
        merge_worst(sr.impl_check, a);
        merge_worst(sr.base_check, b);
      }
      const std::string where = fmt::format("input {} of {}", in + 1, c.opt.inputs);
      if (!a.ok && !impl_failed) note_failure(c, sr, *c.impl, a, xs, where);
      if (!b.ok && !base_failed) note_failure(c, sr, *c.base, b, xs, where);
      impl_failed |= !a.ok;
      base_failed |= !b.ok;
    }
    sr.inputs = c.opt.inputs;
    c.log << fmt::format("[check {:>2}/{}] {:<30} {:<4} rel {:.2e} probe {:.2e} | {} {:<4} rel {:.2e}\n", i + 1, n,
                         sh.label(), sr.impl_check.ok ? "ok" : "FAIL", sr.impl_check.rel_err,
                         sr.impl_check.worst_probe_err, c.base->name(), sr.base_check.ok ? "ok" : "FAIL",
                         sr.base_check.rel_err);
    c.r.shapes.push_back(std::move(sr));
  }
}

// ---- floors ----
void floors(Ctx& c) {
  for (ShapeResult& sr : c.r.shapes) {
    const Layer& L = sr.shape.info();
    sr.weight_bits = c.impl->weight_bits(sr.shape.layer, sr.shape.m, sr.shape.rows());
    sr.floor = datasheet_floor(L, sr.shape.m);
    sr.stored_floor = floor_of(L, sr.shape.m, sr.weight_bits);
    if (sr.shape.load >= 0) {
      sr.sglang_us = seed_sglang_us()[static_cast<size_t>(sr.shape.load)][static_cast<size_t>(sr.shape.layer)];
      sr.seed_us = seed_submission_us()[static_cast<size_t>(sr.shape.load)][static_cast<size_t>(sr.shape.layer)];
    }
  }
}

// ---- timing ----
size_t round16(double bytes) { return (static_cast<size_t>(std::ceil(bytes)) + 15) / 16 * 16; }

void time_all(Ctx& c) {
  std::vector<ShapeResult*> timed;
  for (ShapeResult& sr : c.r.shapes) {
    if (!sr.shape.timed) continue;
    if (!sr.impl_check.ok || !sr.base_check.ok) {
      c.log << fmt::format("[time] {}: not timed (a correctness check failed)\n", sr.shape.label());
      continue;
    }
    timed.push_back(&sr);
  }
  if (timed.empty()) return;
  Bench& bench = *c.bench;
  auto regen_of = [&c](const Shape& sh) {
    return [&c, m = sh.m, k = sh.info().k](uint64_t seed, cudaStream_t s) { generate_x(seed, m, k, c.x.get(), s); };
  };

  // Fixed cost and practical ceilings (read buffer first: nothing is allocated once timing starts).
  std::map<size_t, double> ceilings;
  for (ShapeResult* sr : timed) {
    ceilings[round16(sr->stored_floor.bytes)] = 0;
    ceilings[round16(sr->floor.bytes)] = 0;
  }
  bench.reserve_read(ceilings.rbegin()->first);
  const auto regen0 = regen_of(timed.front()->shape);
  c.r.fixed_cost_us = bench.fixed_cost_us(kFixedCostReplays, regen0);
  c.log << fmt::format("[time] fixed cost (graph replay of one empty kernel, cold L2): {:.2f} us\n", c.r.fixed_cost_us);
  size_t ci = 0;
  for (auto& [bytes, us] : ceilings) {
    us = bench.read_ceiling_us(bytes, c.r.fixed_cost_us, kCeilingReplays, regen0);
    c.log << fmt::format("[ceiling {:>2}/{}] streaming read of {:.1f} MB: {:.2f} us ({:.2f} TB/s)\n", ++ci,
                         ceilings.size(), bytes / 1e6, us, bytes / (us * 1e-6) / 1e12);
  }
  for (ShapeResult* sr : timed) {
    sr->ceiling_us = ceilings.at(round16(sr->stored_floor.bytes));
    sr->datasheet_ceiling_us = ceilings.at(round16(sr->floor.bytes));
  }

  // One graph per side per shape.
  std::vector<Graph> ga, gb;
  std::vector<ShapeResult*> ok;
  for (ShapeResult* sr : timed) {
    const Shape sh = sr->shape;
    try {
      Graph a = Graph::capture(
          c.s(), [&](cudaStream_t s) { c.impl->run(sh.layer, c.x.get(), sh.m, c.out_a.get(), sh.rows(), s); },
          fmt::format("{} on {}", c.impl->name(), sh.label()));
      Graph b = Graph::capture(
          c.s(), [&](cudaStream_t s) { c.base->run(sh.layer, c.x.get(), sh.m, c.out_b.get(), sh.rows(), s); },
          fmt::format("{} on {}", c.base->name(), sh.label()));
      ga.push_back(std::move(a));
      gb.push_back(std::move(b));
      ok.push_back(sr);
    } catch (const std::exception& e) {
      const std::string line = fmt::format("{}: not graph-safe: {}", sh.label(), e.what());
      sr->failure += (sr->failure.empty() ? "" : "\n") + line;
      c.r.failures.push_back(line);
      c.log << "[time] " << line << "\n";
    }
  }
  timed = ok;
  const size_t T = timed.size();

  // Paired replays, A B B A ..., in rounds until every interval is tight (or MAX pairs are done).
  std::vector<PairedTimes> pt(T);
  std::vector<int> done(T, 0);
  std::vector<bool> met(T, false);
  auto run_pairs = [&](size_t t, int first, int count, bool keep) {
    const Shape& sh = timed[t]->shape;
    std::vector<Bench::Replay> rep;
    for (int p = first; p < first + count; ++p) {
      const uint64_t xs = timing_x_seed(c.opt.seed, sh.layer, sh.m, p);
      const bool a_first = p % 2 == 0;
      rep.push_back({a_first ? &ga[t] : &gb[t], xs});
      rep.push_back({a_first ? &gb[t] : &ga[t], xs});
    }
    const std::vector<double> us = bench.time(rep, regen_of(sh));
    if (!keep) return;
    for (int i = 0; i < count; ++i) {
      const bool a_first = (first + i) % 2 == 0;
      const double a = us[static_cast<size_t>(2 * i + (a_first ? 0 : 1))];
      const double b = us[static_cast<size_t>(2 * i + (a_first ? 1 : 0))];
      pt[t].impl.push_back(std::max(a - c.r.fixed_cost_us, kMinUs));
      pt[t].base.push_back(std::max(b - c.r.fixed_cost_us, kMinUs));
    }
  };
  for (size_t t = 0; t < T; ++t) run_pairs(t, 1 << 30, kWarmupPairs, false);
  const int lo = c.opt.min_replays(), hi = c.opt.max_replays();
  for (int round = 1;; ++round) {
    size_t busy = 0;
    for (size_t t = 0; t < T; ++t) {
      if (met[t] || done[t] >= hi) continue;
      const int add = done[t] == 0 ? lo : std::min(done[t], hi - done[t]);
      run_pairs(t, done[t], add, true);
      done[t] += add;
      met[t] = shape_speed(pt[t]).ci_met(c.opt.ci_target);
      ++busy;
    }
    if (busy == 0) break;
    const size_t n_met = static_cast<size_t>(std::count(met.begin(), met.end(), true));
    c.log << fmt::format("[time round {}] {} shapes replayed; intervals within +-{:.1f}%: {}/{}\n", round, busy,
                         100 * c.opt.ci_target, n_met, T);
  }

  // Per-shape figures, and a check of what the graphs computed (fresh x, NaN-filled outputs).
  for (size_t t = 0; t < T; ++t) {
    ShapeResult& sr = *timed[t];
    sr.timed = true;
    sr.pairs = done[t];
    sr.speed = shape_speed(pt[t]);
    sr.ci_met = met[t];
    c.r.ci_all_met = c.r.ci_all_met && met[t];
    const uint64_t xs = timing_x_seed(c.opt.seed, sr.shape.layer, sr.shape.m, 1 << 29);
    new_input(c, sr.shape, xs);
    const CheckResult a = check_side(c, *c.impl, sr.shape, c.out_a.get(), [&](cudaStream_t s) { ga[t].launch(s); });
    const CheckResult b = check_side(c, *c.base, sr.shape, c.out_b.get(), [&](cudaStream_t s) { gb[t].launch(s); });
    merge_worst(sr.impl_check, a);
    merge_worst(sr.base_check, b);
    if (!a.ok) note_failure(c, sr, *c.impl, a, xs, "graph replay");
    if (!b.ok) note_failure(c, sr, *c.base, b, xs, "graph replay");
  }
  for (size_t t = 0; t < T; ++t)
    if (timed[t]->shape.load >= 0) {
      c.boot_loads.push_back(timed[t]->shape.load);
      c.boot_times.push_back(pt[t]);
    }
}

// ---- loads and score ----
void score(Ctx& c) {
  std::vector<ShapeTime> st;
  for (const ShapeResult& sr : c.r.shapes)
    if (sr.timed && sr.shape.load >= 0) st.push_back({sr.shape.load, sr.speed.impl_us, sr.speed.base_us});
  if (st.empty()) return;
  std::vector<double> vs_sglang;
  for (const LoadSummary& ls : summarize_loads(st)) {
    LoadResult lr;
    lr.sum = ls;
    lr.complete = ls.shapes == kLayerCount;
    for (const ShapeResult& sr : c.r.shapes)
      if (sr.timed && sr.shape.load == ls.load) {
        lr.floor_us += sr.floor.us;
        lr.sglang_us += sr.sglang_us;
      }
    vs_sglang.push_back(lr.sglang_us / ls.impl_us);
    c.r.loads.push_back(lr);
  }
  std::vector<LoadSummary> sums;
  for (const LoadResult& lr : c.r.loads) sums.push_back(lr.sum);
  c.r.has_score = true;
  c.r.score = score_of(sums);
  c.r.score_ci = bootstrap_score_ci(c.boot_loads, c.boot_times);
  c.r.sglang_score = geomean(vs_sglang);
  c.r.score_complete = c.r.loads.size() == kLoadCount &&
                       std::all_of(c.r.loads.begin(), c.r.loads.end(), [](const LoadResult& l) { return l.complete; });
}

}  // namespace

RunResult run_judge(const Options& opt, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  Ctx c(opt, log);
  c.r.impl = opt.impl;
  c.r.baseline = opt.baseline;
  c.r.generator = c.gen.str();
  c.r.tune_file = c.opt.tune_file;
  c.r.seed = opt.seed;
  c.r.inputs = opt.inputs;
  c.r.min_replays = opt.min_replays();
  c.r.max_replays = opt.max_replays();
  c.r.ci_target = opt.ci_target;
  c.r.check_only = opt.check_only;

  check_weights_file(c.gen, c.sel.layers);  // a bad weights file is reported before the GPU is touched
  setup(c);
  prepare_all(c);
  check_all(c);
  floors(c);
  if (!opt.check_only) {
    time_all(c);
    score(c);
  }
  c.r.elapsed_s = seconds_since(t0);
  log << fmt::format("solgemm-judge: done in {:.1f} s\n", c.r.elapsed_s);
  return std::move(c.r);
}

void write_outputs(const RunResult& r, const Options& opt) {
  auto write = [](const std::string& path, const std::string& text) {
    if (path.empty()) return;
    const std::filesystem::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream f(p);
    f << text;
    f.close();
    if (!f) throw JudgeError(fmt::format("cannot write {}", path));
  };
  write(opt.json, to_json(r).dump(2) + "\n");
  write(opt.md, markdown(r));
  write(opt.svg, roofline_svg(r));
}

}  // namespace solgemm::judge
