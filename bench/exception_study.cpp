// exception_study (CPU only): how many exceptions the 12-bit code would take on the judge's BF16 layers if its base
// were chosen per matrix (the format as it is), per 16-row tile, or per row, and how many of them sit in the
// llm-like generator's outlier input columns (1/512 of the columns, 16x larger). The question (perf-notes step 185):
// would a finer base make the llm-like weights as cheap for the skinny family's exception path as the default ones?
//   exception_study [default|llm-like] [seed=0]        (markdown on stdout)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "judge/gen.hpp"

namespace gen = solgemm::judge::gen;

namespace {
// The base b (exponent field) whose window [b, b + 15] holds the most weights of the histogram (zeros and subnormals,
// field 0, and Inf / NaN, 255, never count), and how many it holds.
int best_base(const int64_t* hist, int64_t* held) {
  int best = 1;
  int64_t most = -1;
  for (int b = 1; b + 15 <= 254; ++b) {
    int64_t n = 0;
    for (int e = b; e <= b + 15; ++e) n += hist[e];
    if (n > most) {
      most = n;
      best = b;
    }
  }
  *held = most;
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string g = argc > 1 ? argv[1] : "llm-like";
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  if (g != "default" && g != "llm-like") {
    std::fprintf(stderr, "usage: exception_study [default|llm-like] [seed]\n");
    return 2;
  }
  struct Layer {
    const char* name;
    int64_t n, k;
    uint32_t index;
  };
  const Layer layers[] = {{"qkv_gate", 2304, 8192, 0}, {"o", 8192, 1024, 1}, {"pooler", 4096, 8192, 2},
                          {"unpooler", 8192, 4096, 3}};
  std::printf("exceptions per weight of the 12-bit code, the judge's %s weights (seed %llu), by where the base is chosen\n\n",
              g.c_str(), static_cast<unsigned long long>(seed));
  std::printf("| layer | per matrix | in outlier columns | per 16-row tile | per row | in outlier columns |\n|---|---|---|---|---|---|\n");
  for (const Layer& l : layers) {
    gen::WeightSpec ws;
    ws.kind = g == "default" ? gen::Kind::normal : gen::Kind::llm_like;
    ws.seed = seed;
    ws.layer = l.index;
    ws.k = l.k;
    std::vector<uint8_t> expo(static_cast<size_t>(l.n * l.k));
    std::vector<int64_t> row_hist(static_cast<size_t>(l.n) * 256, 0);
    int64_t mat_hist[256] = {};
    std::vector<bool> outlier(static_cast<size_t>(l.k));
    for (int64_t c = 0; c < l.k; ++c)
      outlier[static_cast<size_t>(c)] = ws.kind == gen::Kind::llm_like &&
                                        gen::hash(seed, gen::stream_of(l.index, gen::kOutlierCol), static_cast<uint64_t>(c)) % 512u == 0;
    for (int64_t r = 0; r < l.n; ++r)
      for (int64_t c = 0; c < l.k; ++c) {
        const int e = static_cast<int>((gen::weight_bits(ws, r, c) >> 23) & 0xFFu);
        expo[static_cast<size_t>(r * l.k + c)] = static_cast<uint8_t>(e);
        ++mat_hist[e];
        ++row_hist[static_cast<size_t>(r) * 256 + static_cast<size_t>(e)];
      }
    const double total = static_cast<double>(l.n * l.k);
    int64_t held = 0;
    const int bm = best_base(mat_hist, &held);
    const int64_t exc_m = l.n * l.k - held;
    int64_t exc_t = 0, exc_r = 0, out_m = 0, out_r = 0;
    for (int64_t t = 0; t * 16 < l.n; ++t) {
      int64_t h[256] = {};
      for (int64_t r = t * 16; r < std::min(l.n, t * 16 + 16); ++r)
        for (int e = 0; e < 256; ++e) h[e] += row_hist[static_cast<size_t>(r) * 256 + static_cast<size_t>(e)];
      best_base(h, &held);
      exc_t += (std::min(l.n, t * 16 + 16) - t * 16) * l.k - held;
    }
    for (int64_t r = 0; r < l.n; ++r) {
      const int br = best_base(&row_hist[static_cast<size_t>(r) * 256], &held);
      exc_r += l.k - held;
      for (int64_t c = 0; c < l.k; ++c) {
        if (!outlier[static_cast<size_t>(c)]) continue;
        const int e = expo[static_cast<size_t>(r * l.k + c)];
        out_r += e < br || e > br + 15 || e == 0 || e == 255;
        out_m += e < bm || e > bm + 15 || e == 0 || e == 255;
      }
    }
    std::printf("| %s | %.2e | %.0f%% | %.2e | %.2e | %.0f%% |\n", l.name, static_cast<double>(exc_m) / total,
                100.0 * static_cast<double>(out_m) / static_cast<double>(std::max<int64_t>(1, exc_m)),
                static_cast<double>(exc_t) / total, static_cast<double>(exc_r) / total,
                100.0 * static_cast<double>(out_r) / static_cast<double>(std::max<int64_t>(1, exc_r)));
  }
  return 0;
}
