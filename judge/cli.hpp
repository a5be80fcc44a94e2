// The command line of solgemm-judge (CLI11) and what it selects: which layers, which shapes are checked and
// which are timed. Everything here is plain host code, so the tests can feed it bad input without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "shapes.hpp"

namespace solgemm::judge {

struct Options {
  std::vector<std::string> layers;     // empty: all five
  std::vector<std::string> loads;      // empty: all six; "none": no scored shape
  std::vector<int64_t> m;              // non-empty: these m (every selected layer) are checked AND timed, in place
                                       // of the 35 default extra shapes (checked only)
  std::vector<int> replays = {100, 1000};  // paired replays per timed shape: minimum, maximum
  double ci_target = 0.015;            // stop adding replays once every speedup interval is within +-this
  uint64_t seed = 0;
  std::string generator = "default";
  std::string impl = "solgemm";
  std::string baseline = "cublas";
  bool check_only = false;
  int inputs = 3;                      // fresh x per shape for the correctness check
  std::string json = "judge-out/result.json";
  std::string md = "judge-out/result.md";
  std::string svg = "judge-out/result.svg";
  std::string tune_file;               // solgemm's vendor tuning kept across runs (PrepareOptions::tune_file)
  int min_replays() const { return replays.at(0); }
  int max_replays() const { return replays.size() > 1 ? replays[1] : replays[0]; }
};

// Parses argv into opt and validates it (validate() below). Returns std::nullopt to go on, or the exit code to
// end with: 0 after --help (help on `out`), 2 after bad input (one line on `err`).
std::optional<int> parse_cli(int argc, const char* const* argv, Options& opt, std::ostream& out, std::ostream& err);

// What a run does: the selected layers (indices into layers()) and the shapes, scored first (load order, layer
// order), then extra. Throws UsageError naming the bad value (unknown layer / load / generator / implementation,
// m < 1, replays or inputs out of range).
struct Selection {
  std::vector<int> layers;
  std::vector<Shape> shapes;
  int64_t max_m = 1;
};
Selection select(const Options& opt);
void validate(const Options& opt);

}  // namespace solgemm::judge
