// The plan table (see plan.hpp and docs/kernels.md). Each branch names its kernel family and why.
#include "solgemm/plan.hpp"

#include <fmt/format.h>

namespace solgemm {

const char* to_string(Kernel k) {
  switch (k) {
    case Kernel::reference: return "reference";
    case Kernel::skinny: return "skinny";
    case Kernel::router: return "router";
    case Kernel::wide: return "wide";
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

// BF16 packed, 64 < m <= 256: the wide family. Split K over a cluster so that the CTAs (64 rows x 128 tokens
// each) fill the 132 SMs in whole waves; a little credit for >= 200 CTAs (two or more per SM hide latency).
Plan plan_wide(const Shape& s, int64_t m) {
  constexpr int kSms = 132;
  const int64_t tiles = ((s.rows + 63) / 64) * ((m + 127) / 128);
  Plan p;
  p.kernel = Kernel::wide;
  double best = -1;
  for (int split = 1; split <= 8; ++split) {
    const int64_t n = tiles * split;
    const double eff = static_cast<double>(n) / (kSms * ((n + kSms - 1) / kSms));
    const double score = eff + (n >= 200 ? 0.03 : 0.0);
    if (score > best + 1e-9) {
      best = score;
      p.cfg.split_k = split;
    }
  }
  p.cfg.n_tiles = 16;
  p.cfg.warps = 4;
  p.why = "verify batch: near the ridge; 12-bit weights straight into wgmma A registers, split K to fill waves";
  return p;
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
      if (m > 256) {
        Plan p;
        p.kernel = Kernel::vendor;
        p.why = "m > 256 BF16: math-bound; cuBLAS on the raw weights until a family of ours beats it there";
        return p;
      }
      if (m > 64) return plan_wide(s, m);
      return plan_packed(s, m);
    case Storage::hilo: return plan_hilo(s, m);
    case Storage::raw_bf16:
    case Storage::raw_f32: break;
  }
  return reference_plan("raw weights: only the reference kernel reads them");
}

}  // namespace solgemm
