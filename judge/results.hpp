// Everything one judge run found, as plain data: what the reports (report.cpp, svg.cpp) print and the JSON
// holds. Filled by run.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check.hpp"
#include "device.hpp"
#include "score.hpp"
#include "shapes.hpp"

namespace solgemm::judge {

struct LayerResult {
  int layer = 0;
  std::string impl_description, base_description;  // what prepare chose
  double impl_weight_bits = 16, base_weight_bits = 16;
  double impl_prepare_s = 0, base_prepare_s = 0;
  size_t impl_device_bytes = 0;  // device memory the prepared layer owns (Implementation::device_bytes)
};

struct ShapeResult {
  Shape shape;
  std::string impl_plan, base_plan;
  // Correctness: worst over the inputs (and the graph-replay check of timed shapes).
  CheckResult impl_check, base_check;
  int inputs = 0;
  std::string failure;            // full failure line(s) for this shape ("" when correct)
  // Floors (datasheet, at the implementation's stored bits) and practical ceilings (measured streaming read of
  // the implementation's bytes and of the datasheet bytes), us.
  Floor floor, stored_floor;
  double weight_bits = 16;
  double ceiling_us = 0, datasheet_ceiling_us = 0;
  // Timing (timed shapes only).
  bool timed = false;
  int pairs = 0;
  ShapeSpeed speed;
  bool ci_met = false;
  double sglang_us = 0, seed_us = 0;  // the seed's tables (scored shapes; 0 otherwise)
};

struct LoadResult {
  LoadSummary sum;
  double floor_us = 0;
  double sglang_us = 0;           // the seed's SGLang sum of the same shapes
  bool complete = false;          // all five layers timed
};

struct RunResult {
  std::string commit;
  bool dirty = false;
  GpuInfo gpu;
  std::string impl, baseline, generator;
  std::string tune_file;  // --tune-file ("" = none: the vendor family tuned in this run)
  uint64_t seed = 0;
  int inputs = 0, min_replays = 0, max_replays = 0;
  double ci_target = 0;
  bool check_only = false;
  double flush_mb = 0;
  double fixed_cost_us = 0;
  std::vector<LayerResult> layers;
  std::vector<ShapeResult> shapes;
  std::vector<LoadResult> loads;
  bool has_score = false;
  bool score_complete = false;     // all 30 scored shapes timed
  double score = 0;
  Interval score_ci;
  double sglang_score = 0;         // implementation vs the seed's SGLang table (same loads)
  bool ci_all_met = true;
  std::vector<std::string> failures;  // one line per failing shape (check, row, size, seed)
  double elapsed_s = 0;
  bool ok() const { return failures.empty(); }
};

}  // namespace solgemm::judge
