// The solgemm sides of the comparison ("solgemm", "reference") and the factory of all sides (see impl.hpp).
#include "impl.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "baseline.hpp"
#include "device.hpp"
#include "shapes.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::judge {
namespace {

class SolgemmImpl final : public Implementation {
 public:
  SolgemmImpl(bool force_reference, int64_t max_m, std::string tune_file)
      : force_reference_(force_reference), max_m_(max_m), tune_file_(std::move(tune_file)) {}

  std::string name() const override { return force_reference_ ? "reference" : "solgemm"; }

  void prepare(int layer, const void* d_W, cudaStream_t stream) override {
    const Layer& l = layers().at(static_cast<size_t>(layer));
    PrepareOptions opt;
    opt.max_m = static_cast<int>(std::max<int64_t>(max_m_, opt.max_m));
    if (force_reference_) opt.kernel = "reference";
    opt.tune_file = tune_file_;
    // The row counts the judge's calls use (judge-spec "Work": the unpooler computes its first 1024 rows at m <= 8),
    // declared as max_m declares m: other row counts are refused, and per-slice data is prepared for these only.
    for (int64_t m = 1; m <= opt.max_m; ++m)
      if (const int64_t r = out_rows(l, m); opt.row_counts.empty() || opt.row_counts.back() != r) opt.row_counts.push_back(r);
    w_.at(static_cast<size_t>(layer)).emplace(
        Weights::prepare(d_W, l.fp32 ? DType::f32 : DType::bf16, l.n, l.k, stream, opt));
  }

  void run(int layer, const void* d_x, int64_t m, void* d_out, int64_t rows, cudaStream_t stream) override {
    weights(layer).run(d_x, m, d_out, rows, stream);
  }

  std::string plan(int layer, int64_t m, int64_t rows) const override {
    return weights(layer).plan_for(m, rows);
  }
  size_t device_bytes(int layer) const override { return weights(layer).device_bytes(); }
  std::string description(int layer) const override {
    const Layer& l = layers().at(static_cast<size_t>(layer));
    if (force_reference_)
      return fmt::format("{} {}x{} read raw by the reference kernel", l.fp32 ? "f32" : "bf16", l.n, l.k);
    return weights(layer).description();
  }
  double weight_bits(int layer, int64_t m, int64_t rows) const override {
    return weights(layer).weight_bits(m, rows);
  }

 private:
  const Weights& weights(int layer) const {
    const auto& w = w_.at(static_cast<size_t>(layer));
    if (!w) throw JudgeError(fmt::format("{}: layer {} was not prepared", name(), layers().at(static_cast<size_t>(layer)).name));
    return *w;
  }
  bool force_reference_;
  int64_t max_m_;
  std::string tune_file_;
  std::array<std::optional<Weights>, kLayerCount> w_;
};

}  // namespace

const char* implementation_names() { return "solgemm, reference, cublas"; }

bool is_implementation_name(const std::string& name) {
  return name == "solgemm" || name == "reference" || name == "cublas";
}

std::unique_ptr<Implementation> make_implementation(const std::string& name, int64_t max_m, const std::string& tune_file) {
  if (name == "solgemm") return std::make_unique<SolgemmImpl>(false, max_m, tune_file);
  if (name == "reference") return std::make_unique<SolgemmImpl>(true, max_m, tune_file);
  if (name == "cublas") return make_cublas_baseline(max_m);
  throw UsageError(fmt::format("unknown implementation '{}'; expected one of: {}", name, implementation_names()));
}

}  // namespace solgemm::judge
