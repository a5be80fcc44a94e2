// The run's results for people and for tools: terminal tables (per shape, per load, score), markdown (the same
// tables plus the run's parameters, plans and descriptions), JSON (every figure; the fields of judge-spec.md
// "Report" and more), and the SVG roofline plot (svg.cpp).
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "results.hpp"

namespace solgemm::judge {

void print_tables(const RunResult& r, std::ostream& out);
std::string markdown(const RunResult& r);
nlohmann::json to_json(const RunResult& r);
// Achieved FLOP/s against arithmetic intensity (FLOP per datasheet byte), log-log, both sides as two marker
// series, with the HBM roof (4.8 TB/s), the measured streaming-read ceiling and the 989 TFLOP/s roof.
std::string roofline_svg(const RunResult& r);

}  // namespace solgemm::judge
