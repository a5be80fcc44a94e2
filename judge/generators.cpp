// Generator names, weights per layer (GPU-generated or from a safetensors file), x, and host copies for tests
// (see generators.hpp; the element formulas are in gen.hpp).
#include "generators.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device.hpp"
#include "kernels.hpp"
#include "shapes.hpp"
#include "solgemm/safetensors.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::judge {

namespace {
constexpr const char* kSafetensorsPrefix = "safetensors:";

const char* kind_name(gen::Kind k) {
  switch (k) {
    case gen::Kind::normal: return "default";
    case gen::Kind::llm_like: return "llm-like";
    case gen::Kind::adversarial: return "adversarial";
    case gen::Kind::adversarial_dense: return "adversarial-dense";
  }
  return "?";
}

gen::WeightSpec spec_of(gen::Kind kind, uint64_t seed, int layer) {
  const Layer& l = layers().at(static_cast<size_t>(layer));
  gen::WeightSpec s;
  s.kind = kind;
  s.seed = seed;
  s.layer = static_cast<uint32_t>(layer);
  s.k = l.k;
  s.fp32 = l.fp32;
  return s;
}

safetensors::File open_file(const std::string& path) {
  try {
    return safetensors::File::open(path);
  } catch (const solgemm::Error& e) {
    throw JudgeError(fmt::format("--generator safetensors:{}: {}", path, e.what()));
  }
}

// The layer's tensor ("pooler" or "pooler.weight"), checked for dtype and shape.
const safetensors::TensorInfo& layer_tensor(const safetensors::File& f, int layer) {
  const Layer& l = layers().at(static_cast<size_t>(layer));
  const std::string name(l.name);
  const safetensors::TensorInfo* t = f.find(name);
  if (!t) t = f.find(name + ".weight");
  if (!t)
    throw JudgeError(fmt::format("{}: no tensor named '{}' or '{}.weight' (layer {} needs it)", f.path(), name, name,
                                 name));
  const char* want = l.fp32 ? "F32" : "BF16";
  if (t->dtype != want)
    throw JudgeError(fmt::format("{}: tensor '{}' has dtype {}; expected {}", f.path(), t->name, t->dtype, want));
  if (t->shape.size() != 2 || t->shape[0] != l.n || t->shape[1] != l.k)
    throw JudgeError(fmt::format("{}: tensor '{}' has shape [{}]; expected [{}, {}]", f.path(), t->name,
                                 fmt::join(t->shape, ", "), l.n, l.k));
  const uint64_t want_bytes = static_cast<uint64_t>(l.n * l.k * l.weight_bytes());
  if (t->end - t->begin != want_bytes)
    throw JudgeError(fmt::format("{}: tensor '{}' holds {} bytes; expected {}", f.path(), t->name, t->end - t->begin,
                                 want_bytes));
  return *t;
}

void load_from_file(const std::string& path, int layer, void* d_W, cudaStream_t stream) {
  const safetensors::File f = open_file(path);
  const safetensors::TensorInfo& t = layer_tensor(f, layer);
  std::vector<uint8_t> bytes;
  try {
    bytes = f.read(t);
  } catch (const solgemm::Error& e) {
    throw JudgeError(fmt::format("--generator safetensors:{}: {}", path, e.what()));
  }
  if (bytes.size() != t.end - t.begin)
    throw JudgeError(fmt::format("{}: tensor '{}': read {} bytes; expected {}", path, t.name, bytes.size(),
                                 t.end - t.begin));
  cuda_check(cudaMemcpyAsync(d_W, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream), "uploading weights");
  cuda_check(cudaStreamSynchronize(stream), "uploading weights");
}
}  // namespace

const char* generator_names() { return "default, llm-like, adversarial, adversarial-dense, safetensors:PATH"; }

std::string GeneratorSpec::str() const {
  return from_file() ? kSafetensorsPrefix + safetensors_path : std::string(kind_name(kind));
}

GeneratorSpec parse_generator(const std::string& text) {
  GeneratorSpec g;
  const std::string prefix = kSafetensorsPrefix;
  if (text.rfind(prefix, 0) == 0) {
    g.safetensors_path = text.substr(prefix.size());
    if (g.safetensors_path.empty()) throw UsageError("--generator safetensors:PATH: the path is empty");
    return g;
  }
  for (gen::Kind k : {gen::Kind::normal, gen::Kind::llm_like, gen::Kind::adversarial, gen::Kind::adversarial_dense})
    if (text == kind_name(k)) {
      g.kind = k;
      return g;
    }
  throw UsageError(fmt::format("unknown generator '{}'; expected one of: {}", text, generator_names()));
}

void check_weights_file(const GeneratorSpec& g, const std::vector<int>& layer_ids) {
  if (!g.from_file()) return;
  const safetensors::File f = open_file(g.safetensors_path);
  for (int l : layer_ids) (void)layer_tensor(f, l);
}

void load_layer_weights(const GeneratorSpec& g, uint64_t seed, int layer, void* d_W, cudaStream_t stream) {
  if (g.from_file()) return load_from_file(g.safetensors_path, layer, d_W, stream);
  const Layer& l = layers().at(static_cast<size_t>(layer));
  kernels::generate_weights(spec_of(g.kind, seed, layer), l.n, d_W, stream);
  cuda_check(cudaStreamSynchronize(stream), "generating weights");
}

void generate_x(uint64_t x_seed, int64_t m, int64_t k, void* d_x, cudaStream_t stream) {
  kernels::generate_x(x_seed, m, k, static_cast<uint16_t*>(d_x), stream);
}

std::vector<uint32_t> host_weights(gen::Kind kind, uint64_t seed, int layer, int64_t rows, int64_t k) {
  gen::WeightSpec s = spec_of(kind, seed, layer);
  s.k = k;
  std::vector<uint32_t> w(static_cast<size_t>(rows * k));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c) w[static_cast<size_t>(r * k + c)] = gen::weight_bits(s, r, c);
  return w;
}

std::vector<uint16_t> host_x(uint64_t x_seed, int64_t m, int64_t k) {
  std::vector<uint16_t> x(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < k; ++c) x[static_cast<size_t>(i * k + c)] = gen::x_bits(x_seed, k, i, c);
  return x;
}

uint64_t check_x_seed(uint64_t run_seed, int layer, int64_t m, int input) {
  return gen::hash(gen::hash(run_seed, 0xC4EC, static_cast<uint64_t>(layer) << 32 | static_cast<uint64_t>(m)),
                   1, static_cast<uint64_t>(input));
}

uint64_t timing_x_seed(uint64_t run_seed, int layer, int64_t m, int pair) {
  return gen::hash(gen::hash(run_seed, 0x714E, static_cast<uint64_t>(layer) << 32 | static_cast<uint64_t>(m)),
                   2, static_cast<uint64_t>(pair));
}

}  // namespace solgemm::judge
