// Command-line parsing and shape selection (see cli.hpp).
#include "cli.hpp"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "device.hpp"
#include "generators.hpp"
#include "impl.hpp"

namespace solgemm::judge {

namespace {
constexpr int64_t kMaxM = 65536;

std::string layer_names() {
  std::string s;
  for (const Layer& l : layers()) s += (s.empty() ? "" : ", ") + std::string(l.name);
  return s;
}
std::string load_names() {
  std::string s;
  for (const Load& l : loads()) s += (s.empty() ? "'" : ", '") + std::string(l.name) + "'";
  return s;
}
}  // namespace

std::optional<int> parse_cli(int argc, const char* const* argv, Options& opt, std::ostream& out, std::ostream& err) {
  CLI::App app{"solgemm-judge: checks and times solgemm against cuBLAS (torch F.linear) on the LLM projection\n"
               "shapes of judge-spec.md: correctness of 65 shapes, paired cold-L2 graph-replay timing of the 30\n"
               "scored ones, floors, load table and score. Exit code: 0 all correct, 1 a check failed, 2 bad\n"
               "input or a runtime error.",
               "solgemm-judge"};
  app.add_option("--layers", opt.layers, "layers to run (default: all): " + layer_names())->delimiter(',');
  app.add_option("--loads", opt.loads,
                 "scored loads to run (default: all): " + load_names() + " (spaces optional), or 'none'")
      ->delimiter(',');
  app.add_option("--m", opt.m,
                 "extra m values, checked and timed on every selected layer (replace the 35 default extra shapes, "
                 "which are checked only)")
      ->delimiter(',');
  app.add_option("--replays", opt.replays,
                 "paired replays per timed shape: MIN[,MAX]; more are added (up to MAX) until every speedup "
                 "interval is within +-1.5%")
      ->delimiter(',')
      ->expected(1, 2)
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "seed of the weights and of every x")->capture_default_str();
  app.add_option("--generator", opt.generator, std::string("weights: ") + generator_names())->capture_default_str();
  app.add_option("--impl", opt.impl, std::string("implementation timed: ") + implementation_names())
      ->capture_default_str();
  app.add_option("--baseline", opt.baseline, std::string("baseline: ") + implementation_names())
      ->capture_default_str();
  app.add_flag("--check-only", opt.check_only, "correctness only, no timing");
  app.add_option("--inputs", opt.inputs, "fresh x per shape for the correctness check")->capture_default_str();
  app.add_option("--ci-target", opt.ci_target, "target half-width of every speedup interval (relative)")
      ->capture_default_str();
  app.add_option("--json", opt.json, "JSON output ('' to skip)")->capture_default_str();
  app.add_option("--md", opt.md, "markdown output ('' to skip)")->capture_default_str();
  app.add_option("--svg", opt.svg, "SVG roofline plot ('' to skip)")->capture_default_str();
  app.add_option("--tune-file", opt.tune_file,
                 "file of solgemm's tuned cuBLASLt choices: read at prepare, a new tuning appended (default: none, "
                 "tune in every run)");
  try {
    app.parse(argc, argv);
    validate(opt);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "solgemm-judge: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const UsageError& e) {
    err << "solgemm-judge: " << e.what() << " (see --help)\n";
    return 2;
  }
  return std::nullopt;
}

void validate(const Options& opt) { (void)select(opt); }

Selection select(const Options& opt) {
  Selection s;
  // Layers, in table order.
  std::vector<bool> want_layer(kLayerCount, opt.layers.empty());
  for (const std::string& name : opt.layers) {
    const int i = find_layer(name);
    if (i < 0) throw UsageError(fmt::format("unknown layer '{}'; expected one of: {}", name, layer_names()));
    want_layer[static_cast<size_t>(i)] = true;
  }
  for (int i = 0; i < kLayerCount; ++i)
    if (want_layer[static_cast<size_t>(i)]) s.layers.push_back(i);
  // Loads.
  std::vector<bool> want_load(kLoadCount, opt.loads.empty());
  for (const std::string& name : opt.loads) {
    if (name == "none") continue;
    const int i = find_load(name);
    if (i < 0) throw UsageError(fmt::format("unknown load '{}'; expected one of: {}, or 'none'", name, load_names()));
    want_load[static_cast<size_t>(i)] = true;
  }
  for (int64_t m : opt.m)
    if (m < 1 || m > kMaxM) throw UsageError(fmt::format("--m {}: expected 1 <= m <= {}", m, kMaxM));
  if (opt.replays.empty() || opt.replays.size() > 2 || opt.min_replays() < 1 || opt.max_replays() < opt.min_replays() ||
      opt.max_replays() > 100000)
    throw UsageError(fmt::format("--replays {}: expected MIN[,MAX] with 1 <= MIN <= MAX <= 100000",
                                 fmt::join(opt.replays, ",")));
  if (opt.inputs < 1 || opt.inputs > 1000) throw UsageError(fmt::format("--inputs {}: expected 1 .. 1000", opt.inputs));
  if (!(opt.ci_target > 0 && opt.ci_target < 1))
    throw UsageError(fmt::format("--ci-target {}: expected a fraction in (0, 1)", opt.ci_target));
  (void)parse_generator(opt.generator);
  for (const std::string* name : {&opt.impl, &opt.baseline})
    if (!is_implementation_name(*name))
      throw UsageError(fmt::format("unknown implementation '{}'; expected one of: {}", *name, implementation_names()));

  // Shapes: scored (load order, layer order), then extra.
  for (int ld = 0; ld < kLoadCount; ++ld) {
    if (!want_load[static_cast<size_t>(ld)]) continue;
    for (int l : s.layers) s.shapes.push_back({l, loads()[static_cast<size_t>(ld)].m, ld, true});
  }
  const bool explicit_m = !opt.m.empty();
  std::vector<int64_t> extra(opt.m.begin(), opt.m.end());
  if (!explicit_m) extra.assign(kExtraM.begin(), kExtraM.end());
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  for (int64_t m : extra)
    for (int l : s.layers) {
      const bool dup = std::any_of(s.shapes.begin(), s.shapes.end(),
                                   [&](const Shape& sh) { return sh.layer == l && sh.m == m; });
      if (!dup) s.shapes.push_back({l, m, -1, explicit_m});
    }
  if (s.shapes.empty()) throw UsageError("nothing to run: no load selected and no --m given");
  for (const Shape& sh : s.shapes) s.max_m = std::max(s.max_m, sh.m);
  return s;
}

}  // namespace solgemm::judge
