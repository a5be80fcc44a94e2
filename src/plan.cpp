// The plan table (see plan.hpp and docs/kernels.md). Each branch names its kernel family and why.
#include "solgemm/plan.hpp"

#include <fmt/format.h>

namespace solgemm {

const char* to_string(Kernel k) {
  switch (k) {
    case Kernel::reference: return "reference";
    case Kernel::skinny: return "skinny";
    case Kernel::router: return "router";
    case Kernel::vendor: return "vendor";
  }
  return "?";
}

const char* to_string(Storage s) {
  switch (s) {
    case Storage::raw_bf16: return "raw_bf16";
    case Storage::raw_f32: return "raw_f32";
    case Storage::packed12: return "packed12";
    case Storage::packed16: return "packed16";
    case Storage::hilo: return "hilo";
  }
  return "?";
}

std::string Config::str() const { return fmt::format("split_k={} n_tiles={} warps={}", split_k, n_tiles, warps); }

std::string Plan::str() const { return fmt::format("{} [{}] ({})", to_string(kernel), cfg.str(), why); }

namespace {

Plan reference_plan(const char* why) {
  Plan p;
  p.kernel = Kernel::reference;
  p.why = why;
  return p;
}

// BF16 weights, packed (12-bit or 16-bit fallback): the skinny family for m <= 64 (memory-bound).
Plan plan_packed(const Shape& s, int64_t m) {
  (void)s;
  (void)m;
  return reference_plan("skinny family not built yet");
}

// FP32 weights as hi + lo: the router family for every m.
Plan plan_hilo(const Shape& s, int64_t m) {
  (void)s;
  (void)m;
  return reference_plan("router family not built yet");
}

}  // namespace

Plan select_plan(const Shape& s, int64_t m) {
  switch (s.storage) {
    case Storage::packed12:
    case Storage::packed16:
      if (m > 64) {
        Plan p;
        p.kernel = Kernel::vendor;
        p.why = "m > 64 BF16: cuBLAS on the raw weights until our tensor-core family for this range lands";
        return p;
      }
      return plan_packed(s, m);
    case Storage::hilo: return plan_hilo(s, m);
    case Storage::raw_bf16:
    case Storage::raw_f32: break;
  }
  return reference_plan("raw weights: only the reference kernel reads them");
}

}  // namespace solgemm
