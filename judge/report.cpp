// Terminal tables, markdown and JSON of a run (see report.hpp). Both text forms come from the same Table rows.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "seed_tables.hpp"

namespace solgemm::judge {
namespace {

// Rows of cells; rendered aligned for a terminal or as a markdown table. Columns after the first `left` are
// right-aligned.
struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  size_t left = 2;

  std::string text() const {
    std::vector<size_t> w(head.size());
    for (size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    auto line = [&](const std::vector<std::string>& r) {
      std::string s;
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string pad(w[i] - r[i].size(), ' ');
        s += (i ? "  " : "") + (i < left ? r[i] + pad : pad + r[i]);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      return s + "\n";
    };
    std::string out = line(head);
    size_t total = 0;
    for (size_t x : w) total += x + 2;
    out += std::string(total - 2, '-') + "\n";
    for (const auto& r : rows) out += line(r);
    return out;
  }
  std::string md() const {
    std::string out = "| " + fmt::format("{}", fmt::join(head, " | ")) + " |\n|";
    for (size_t i = 0; i < head.size(); ++i) out += i < left ? "---|" : "---:|";
    out += "\n";
    for (const auto& r : rows) out += "| " + fmt::format("{}", fmt::join(r, " | ")) + " |\n";
    return out;
  }
};

std::string us(double v) { return fmt::format("{:.2f}", v); }
std::string x(double v) { return fmt::format("{:.3f}x", v); }
std::string load_name(int load) { return load >= 0 ? std::string(loads()[static_cast<size_t>(load)].name) : "extra"; }

Table timed_table(const RunResult& r) {
  Table t;
  t.head = {"load", "layer", "m", "MB", "GFLOP", "bound", "floor us", "stored floor", "ceiling", r.baseline + " us",
            r.impl + " us", "impl/floor", "impl/ceiling", "speedup", "95% CI", "pairs", "SGLang us"};
  for (const ShapeResult& s : r.shapes) {
    if (!s.timed) continue;
    const Layer& L = s.shape.info();
    t.rows.push_back({load_name(s.shape.load), std::string(L.name), std::to_string(s.shape.m),
                      fmt::format("{:.1f}", s.floor.bytes / 1e6), fmt::format("{:.2f}", s.floor.flops / 1e9),
                      s.floor.math_bound ? "math" : "memory", us(s.floor.us),
                      fmt::format("{:.2f} ({:.1f}b)", s.stored_floor.us, s.weight_bits), us(s.ceiling_us),
                      us(s.speed.base_us), us(s.speed.impl_us), fmt::format("{:.2f}", s.speed.impl_us / s.floor.us),
                      fmt::format("{:.2f}", s.speed.impl_us / s.ceiling_us), x(s.speed.speedup),
                      fmt::format("[{:.3f}, {:.3f}]{}", s.speed.speedup_ci.lo, s.speed.speedup_ci.hi, s.ci_met ? "" : " *"),
                      std::to_string(s.pairs), s.shape.load >= 0 ? us(s.sglang_us) : "-"});
  }
  return t;
}

Table load_table(const RunResult& r) {
  Table t;
  t.left = 1;
  t.head = {"load", "m", "shapes", "floor us", "SGLang us (seed)", r.baseline + " us", r.impl + " us", "impl/floor",
            "speedup", "vs SGLang"};
  for (const LoadResult& l : r.loads) {
    const Load& ld = loads()[static_cast<size_t>(l.sum.load)];
    t.rows.push_back({std::string(ld.name), std::to_string(ld.m), std::to_string(l.sum.shapes), us(l.floor_us),
                      us(l.sglang_us), us(l.sum.base_us), us(l.sum.impl_us), fmt::format("{:.2f}", l.sum.impl_us / l.floor_us),
                      x(l.sum.speedup), x(l.sglang_us / l.sum.impl_us)});
  }
  return t;
}

Table check_table(const RunResult& r, bool with_plan) {
  Table t;
  t.head = {"load", "layer", "m", "rows", r.impl, "rel err", "worst probe", "worst row", r.baseline, "rel err"};
  if (with_plan) t.head.push_back("plan");
  for (const ShapeResult& s : r.shapes) {
    std::vector<std::string> row = {
        load_name(s.shape.load), std::string(s.shape.info().name), std::to_string(s.shape.m),
        std::to_string(s.shape.rows()), s.impl_check.ok ? "ok" : "FAIL", fmt::format("{:.2e}", s.impl_check.rel_err),
        fmt::format("{:.2e}", s.impl_check.worst_probe_err),
        fmt::format("{:.2e} (row {})", s.impl_check.worst_row_err, s.impl_check.worst_row),
        s.base_check.ok ? "ok" : "FAIL", fmt::format("{:.2e}", s.base_check.rel_err)};
    if (with_plan) row.push_back(s.impl_plan);
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string score_line(const RunResult& r) {
  if (!r.has_score) return "score: none (nothing scored was timed)\n";
  std::string s = fmt::format("score: {:.4f}x  95% CI [{:.4f}, {:.4f}]  ({} over {}: geometric mean of {} load "
                              "speedups{})\n",
                              r.score, r.score_ci.lo, r.score_ci.hi, r.impl, r.baseline, r.loads.size(),
                              r.score_complete ? "" : "; PARTIAL: not all 30 scored shapes were timed");
  s += fmt::format("vs the seed's SGLang table: {:.4f}x (the seed's own submission scored {:.4f}x against it)\n",
                   r.sglang_score, kSeedOfficialScore);
  if (!r.ci_all_met)
    s += fmt::format("note: some speedup intervals are wider than +-{:.1f}% after {} pairs (marked *)\n",
                     100 * r.ci_target, r.max_replays);
  return s;
}

std::string header_lines(const RunResult& r) {
  return fmt::format(
      "GPU: {} ({} SMs, cc {}, SM clock {} MHz, memory clock {} MHz, L2 {:.0f} MB), driver {}, runtime {}\n"
      "commit: {}{}\nimplementation: {}   baseline: {}   generator: {}   seed: {}   inputs per shape: {}\n"
      "fixed cost (graph replay of one empty kernel, cold L2, subtracted from both): {:.2f} us   flush: {:.0f} MB{}\n",
      r.gpu.name, r.gpu.sms, r.gpu.cc, r.gpu.sm_clock_mhz, r.gpu.mem_clock_mhz, r.gpu.l2_bytes / 1e6,
      r.gpu.driver_version, r.gpu.runtime_version, r.commit, r.dirty ? " (dirty)" : "", r.impl, r.baseline,
      r.generator, r.seed, r.inputs, r.fixed_cost_us, r.flush_mb,
      r.tune_file.empty() ? std::string() : fmt::format("\ntune file: {}", r.tune_file));
}

size_t count_ok(const RunResult& r) {
  return static_cast<size_t>(std::count_if(r.shapes.begin(), r.shapes.end(), [](const ShapeResult& s) {
    return s.impl_check.ok && s.base_check.ok;
  }));
}

nlohmann::json interval(const Interval& i) { return nlohmann::json::array({i.lo, i.hi}); }

nlohmann::json check_json(const CheckResult& c) {
  return {{"ok", c.ok},
          {"rel_err", c.rel_err},
          {"worst_probe_err", c.worst_probe_err},
          {"worst_probe_row", c.worst_probe_row},
          {"worst_row_err", c.worst_row_err},
          {"worst_row", c.worst_row},
          {"nonfinite", c.nonfinite},
          {"failure", c.failure}};
}

}  // namespace

void print_tables(const RunResult& r, std::ostream& out) {
  out << "\n" << header_lines(r);
  if (std::any_of(r.shapes.begin(), r.shapes.end(), [](const ShapeResult& s) { return s.timed; })) {
    out << "\nTimed shapes (us, fixed cost subtracted; speedup = median of paired " << r.baseline << "/" << r.impl
        << " ratios):\n"
        << timed_table(r).text();
    out << "\nLoads (sums of their shapes):\n" << load_table(r).text() << "\n" << score_line(r);
  }
  out << fmt::format("\ncorrectness: {}/{} shapes correct ({} inputs each; {} and {} checked)\n", count_ok(r),
                     r.shapes.size(), r.inputs, r.impl, r.baseline);
  for (const std::string& f : r.failures) out << "FAILED: " << f << "\n";
}

std::string markdown(const RunResult& r) {
  std::ostringstream o;
  o << "# solgemm-judge: " << r.impl << " vs " << r.baseline << "\n\n";
  std::istringstream h(header_lines(r));
  for (std::string line; std::getline(h, line);) o << "- " << line << "\n";
  o << fmt::format("- replays per shape: {} .. {} pairs (interval target +-{:.1f}%); run time {:.1f} s\n",
                   r.min_replays, r.max_replays, 100 * r.ci_target, r.elapsed_s);
  if (r.has_score) {
    o << "\n## Score\n\n" << score_line(r);
    o << "\n## Loads\n\n" << load_table(r).md();
    o << "\n## Timed shapes\n\nTimes in us, the fixed cost subtracted. floor = max(bytes / 4.8 TB/s, FLOPs / 989 "
         "TFLOP/s) with W as stored; stored floor: W at the implementation's bits per weight; ceiling: measured "
         "streaming read of the implementation's bytes. * = interval wider than the target.\n\n"
      << timed_table(r).md();
  }
  o << "\n## Layers\n\n";
  Table lt;
  lt.left = 1;
  lt.head = {"layer", "N x K", r.impl + " stores", "bits/weight", "device MB", "prepare s"};
  for (const LayerResult& l : r.layers) {
    const Layer& L = layers()[static_cast<size_t>(l.layer)];
    lt.rows.push_back({std::string(L.name), fmt::format("{} x {}", L.n, L.k), l.impl_description,
                       fmt::format("{:.2f}", l.impl_weight_bits), fmt::format("{:.1f}", l.impl_device_bytes / 1e6),
                       fmt::format("{:.2f}", l.impl_prepare_s)});
  }
  o << lt.md();
  o << fmt::format("\n## Correctness\n\n{}/{} shapes correct, {} fresh inputs each (timed shapes: plus one graph "
                   "replay).\n\n",
                   count_ok(r), r.shapes.size(), r.inputs);
  for (const std::string& f : r.failures) o << "- FAILED: " << f << "\n";
  o << "\n" << check_table(r, true).md();
  return o.str();
}

nlohmann::json to_json(const RunResult& r) {
  using nlohmann::json;
  json j;
  j["commit"] = r.commit;
  j["dirty"] = r.dirty;
  j["gpu"] = r.gpu.name;
  j["gpu_info"] = {{"sms", r.gpu.sms},
                   {"compute_capability", r.gpu.cc},
                   {"sm_clock_mhz", r.gpu.sm_clock_mhz},
                   {"mem_clock_mhz", r.gpu.mem_clock_mhz},
                   {"l2_bytes", r.gpu.l2_bytes},
                   {"memory_bytes", r.gpu.memory_bytes},
                   {"driver_version", r.gpu.driver_version},
                   {"runtime_version", r.gpu.runtime_version}};
  j["implementation"] = r.impl;
  j["baseline"] = r.baseline;
  j["generator"] = r.generator;
  j["tune_file"] = r.tune_file;
  j["seed"] = r.seed;
  j["inputs"] = r.inputs;
  j["replays"] = {r.min_replays, r.max_replays};
  j["ci_target"] = r.ci_target;
  j["check_only"] = r.check_only;
  j["flush_mb"] = r.flush_mb;
  j["fixed_cost_us"] = r.fixed_cost_us;
  j["elapsed_s"] = r.elapsed_s;
  j["correct"] = r.ok();
  j["failures"] = r.failures;
  if (r.has_score) {
    j["score"] = r.score;
    j["score_ci"] = interval(r.score_ci);
    j["score_complete"] = r.score_complete;
    j["score_vs_sglang_table"] = r.sglang_score;
  } else {
    j["score"] = nullptr;
    j["score_ci"] = nullptr;
  }
  j["ci_all_met"] = r.ci_all_met;
  j["layers"] = json::array();
  for (const LayerResult& l : r.layers) {
    const Layer& L = layers()[static_cast<size_t>(l.layer)];
    j["layers"].push_back({{"layer", L.name},
                           {"n", L.n},
                           {"k", L.k},
                           {"dtype", L.fp32 ? "f32" : "bf16"},
                           {"description", l.impl_description},
                           {"weight_bits", l.impl_weight_bits},
                           {"prepare_s", l.impl_prepare_s},
                           {"device_bytes", l.impl_device_bytes},
                           {"baseline_description", l.base_description},
                           {"baseline_prepare_s", l.base_prepare_s}});
  }
  j["shapes"] = json::array();
  for (const ShapeResult& s : r.shapes) {
    json e = {{"load", s.shape.load >= 0 ? json(load_name(s.shape.load)) : json(nullptr)},
              {"layer", s.shape.info().name},
              {"m", s.shape.m},
              {"rows", s.shape.rows()},
              {"k", s.shape.info().k},
              {"timed", s.timed},
              {"correct", s.impl_check.ok},
              {"rel_err", s.impl_check.rel_err},
              {"worst_probe_err", s.impl_check.worst_probe_err},
              {"worst_row_err", s.impl_check.worst_row_err},
              {"check", check_json(s.impl_check)},
              {"baseline_correct", s.base_check.ok},
              {"baseline_check", check_json(s.base_check)},
              {"inputs", s.inputs},
              {"plan", s.impl_plan},
              {"baseline_plan", s.base_plan},
              {"bytes", s.floor.bytes},
              {"flops", s.floor.flops},
              {"bound", s.floor.math_bound ? "math" : "memory"},
              {"floor_us", s.floor.us},
              {"stored_floor_us", s.stored_floor.us},
              {"stored_bytes", s.stored_floor.bytes},
              {"weight_bits", s.weight_bits},
              {"failure", s.failure}};
    if (s.timed) {
      e["impl_us"] = s.speed.impl_us;
      e["baseline_us"] = s.speed.base_us;
      e["speedup"] = s.speed.speedup;
      e["speedup_ci"] = interval(s.speed.speedup_ci);
      e["ci_met"] = s.ci_met;
      e["pairs"] = s.pairs;
      e["ceiling_us"] = s.ceiling_us;
      e["datasheet_ceiling_us"] = s.datasheet_ceiling_us;
      e["impl_over_floor"] = s.speed.impl_us / s.floor.us;
      e["impl_over_stored_floor"] = s.speed.impl_us / s.stored_floor.us;
      e["impl_over_ceiling"] = s.speed.impl_us / s.ceiling_us;
      e["baseline_over_floor"] = s.speed.base_us / s.floor.us;
    }
    if (s.shape.load >= 0) {
      e["sglang_us"] = s.sglang_us;
      e["seed_us"] = s.seed_us;
    }
    j["shapes"].push_back(std::move(e));
  }
  j["loads"] = json::array();
  for (const LoadResult& l : r.loads) {
    const Load& ld = loads()[static_cast<size_t>(l.sum.load)];
    j["loads"].push_back({{"load", ld.name},
                          {"m", ld.m},
                          {"shapes", l.sum.shapes},
                          {"complete", l.complete},
                          {"impl_us", l.sum.impl_us},
                          {"baseline_us", l.sum.base_us},
                          {"speedup", l.sum.speedup},
                          {"floor_us", l.floor_us},
                          {"sglang_us", l.sglang_us}});
  }
  return j;
}

}  // namespace solgemm::judge
