// One judge run, start to end (judge-spec.md): open the GPU, allocate the flush buffer, make the weights,
// prepare both sides, check every selected shape on fresh inputs, then (unless --check-only) measure the fixed
// cost and the practical ceilings, capture each timed call into a graph, replay the pairs until the intervals
// are tight, check the graph replays, and compute loads and the score. Progress goes to `log`.
#pragma once

#include <ostream>

#include "cli.hpp"
#include "results.hpp"

namespace solgemm::judge {

// Throws UsageError / JudgeError (bad input, no GPU, CUDA failure); correctness failures are in the result.
RunResult run_judge(const Options& opt, std::ostream& log);

// Writes the outputs the options name (JSON, markdown, SVG), creating their folders. Throws JudgeError.
void write_outputs(const RunResult& r, const Options& opt);

}  // namespace solgemm::judge
