// Where the judge's data comes from: the --generator option ("default", "llm-like", "adversarial",
// "adversarial-dense", or "safetensors:PATH"), weights for one layer (generated on the GPU, or read from a
// checkpoint and checked for name, dtype and shape), fresh x on the GPU, and host copies of the same data
// for the tests. The element formulas live in gen.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gen.hpp"

namespace solgemm::judge {

struct GeneratorSpec {
  gen::Kind kind = gen::Kind::normal;
  std::string safetensors_path;  // non-empty: weights come from this file
  bool from_file() const { return !safetensors_path.empty(); }
  std::string str() const;       // as written on the command line
};
// Throws UsageError for an unknown generator name or an empty path.
GeneratorSpec parse_generator(const std::string& text);
// The names the option accepts, for messages and --help.
const char* generator_names();

// Without a GPU: when the weights come from a file, checks that it holds every listed layer (indices into
// layers()) with the right name, dtype and shape. Throws JudgeError naming the file, the tensor and the problem.
void check_weights_file(const GeneratorSpec& g, const std::vector<int>& layer_ids);

// Fills d_W (the layer's N x K weights in its stored dtype: BF16 or, for the router, FP32) on `stream` and
// synchronises. From a file: the tensor named after the layer ("pooler" or "pooler.weight") must exist, be
// BF16 (router: F32) and have shape [N, K]; anything else throws JudgeError naming the file and the tensor.
void load_layer_weights(const GeneratorSpec& g, uint64_t seed, int layer, void* d_W, cudaStream_t stream);

// Regenerates x (m x k BF16, gen::x_bits) on `stream`, no synchronisation (graph-free, untimed).
void generate_x(uint64_t x_seed, int64_t m, int64_t k, void* d_x, cudaStream_t stream);

// Host copies (tests): the layer's weights as FP32 bits (BF16 layers: BF16 values), and x as BF16 bits.
std::vector<uint32_t> host_weights(gen::Kind kind, uint64_t seed, int layer, int64_t rows, int64_t k);
std::vector<uint16_t> host_x(uint64_t x_seed, int64_t m, int64_t k);

// The seeds of x, derived from the run's seed so that a failing shape reproduces with a run of that shape
// alone: input i of the correctness check, and replay pair p of the timing.
uint64_t check_x_seed(uint64_t run_seed, int layer, int64_t m, int input);
uint64_t timing_x_seed(uint64_t run_seed, int layer, int64_t m, int pair);

}  // namespace solgemm::judge
