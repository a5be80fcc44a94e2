// exception_rounds (CPU only): the skinny family's exception warp's serial work per CTA for the plan's layouts, on the
// judge's weights (perf-notes step 187). The warp takes a CTA's exception entries 32 at a time (a chunk); each lane
// applies one entry, and the entries of one row in a chunk go one round after another (a table lists a block's
// entries row by row, so a row with many entries makes many rounds). Per layout: CTAs, entries, chunks and rounds per
// CTA (median / max (mean)), from the library's encoder; and, for the kernels that read x from global memory (the x ring),
// the 32-byte sectors of one token's x row that the chunks' loads touch (each token one load instruction per chunk:
// 8 NT times as many requests per CTA) against the CTA's weight stream in 128-byte lines (perf-notes step 193).
//   exception_rounds [default|llm-like] [seed=0]        (markdown on stdout)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "judge/gen.hpp"
#include "solgemm/format.hpp"

namespace gen = solgemm::judge::gen;
namespace format = solgemm::format;

namespace {
struct Layout {
  const char* layer;
  int64_t n, k;
  uint32_t index;  // the judge's layer index (decorrelates the layers' data)
  const char* plan;
  int rt, split;
  bool pair;       // Args::seq: a cluster pair, each CTA correcting its half of the row tiles over the whole K
};
std::string stats(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  double s = 0;
  for (int x : v) s += x;
  char b[96];
  std::snprintf(b, sizeof b, "%d / %d (%.0f)", v[v.size() / 2], v.back(), s / static_cast<double>(v.size()));
  return b;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string g = argc > 1 ? argv[1] : "llm-like";
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  if (g != "default" && g != "llm-like") {
    std::fprintf(stderr, "usage: exception_rounds [default|llm-like] [seed]\n");
    return 2;
  }
  // The plan's skinny layouts (src/plan.cpp) where the exception path runs.
  const Layout layouts[] = {
      {"qkv_gate", 2304, 8192, 0, "m 5..8: cs8/rt6/wk2/g8", 6, 8, false},
      {"qkv_gate", 2304, 8192, 0, "m 9..16: cs8/rt5/wk2/g8", 5, 8, false},
      {"qkv_gate", 2304, 8192, 0, "m 17..32: cs8/rt10/wk1/g16", 10, 8, false},
      {"o", 8192, 1024, 1, "m 1: cs1/rt2/wk2/g8", 2, 1, false},
      {"pooler", 4096, 8192, 2, "m 3..16: cs1/rt1/wk8/g16", 1, 1, false},
      {"pooler", 4096, 8192, 2, "m 17..32: cs2/rt2/wk4/g16 pair", 2, 2, true},
      {"unpooler", 8192, 4096, 3, "m <= 32: cs1/rt2/wk4/g16", 2, 1, false},
  };
  std::printf("the skinny exception warp's work per CTA, the judge's %s weights (seed %llu)\n\n", g.c_str(),
              static_cast<unsigned long long>(seed));
  std::printf("| layer | plan layout | CTAs | entries | chunks of 32 | rounds (one entry per lane, by row) | x sectors per "
              "token (distinct in the CTA) | weight lines |\n");
  std::printf("|---|---|---:|---|---|---|---|---:|\n");
  std::map<std::string, format::Packed> packs;
  for (const Layout& l : layouts) {
    if (!packs.count(l.layer)) {
      gen::WeightSpec ws;
      ws.kind = g == "default" ? gen::Kind::normal : gen::Kind::llm_like;
      ws.seed = seed;
      ws.layer = l.index;
      ws.k = l.k;
      const std::vector<uint16_t> w = gen::bf16_weights(ws, l.n);
      packs[l.layer] = format::encode_bf16(w.data(), l.n, l.k);
    }
    const format::Packed& p = packs[l.layer];
    const int64_t kgs = p.k_groups / l.split;
    std::vector<int> ents, chunks, rounds, sectors, distinct;
    for (int64_t rb = 0; rb < (p.row_tiles + l.rt - 1) / l.rt; ++rb)
      for (int cr = 0; cr < l.split; ++cr) {
        const int64_t kg0 = l.pair ? 0 : cr * kgs, kg1 = l.pair ? p.k_groups : kg0 + kgs;
        std::vector<std::pair<int, bool>> e;  // (row in the CTA's block, k inside the CTA's range), table order
        std::vector<int64_t> kks;              // (each entry's k)
        for (int j = 0; j < l.rt && rb * l.rt + j < p.row_tiles; ++j) {
          if (l.pair && l.rt % 2 == 0 && j / (l.rt / 2) != cr) continue;
          const int64_t rt = rb * l.rt + j;
          for (int64_t b = kg0 / 4; b < (kg1 + 3) / 4; ++b) {
            const int64_t bi = rt * p.k_blocks + b;
            for (uint32_t q = p.exc_off[static_cast<size_t>(bi)]; q < p.exc_off[static_cast<size_t>(bi) + 1]; ++q) {
              const uint32_t x = p.exc[q];
              const int64_t kk = b * 256 + ((x >> 16) & 255);
              e.emplace_back(j * 16 + static_cast<int>(x >> 24), kk >= kg0 * 64 && kk < kg1 * 64);
              kks.push_back(kk);
            }
          }
        }
        int rs = 0, sec = 0;
        std::set<int64_t> cta_secs;  // (distinct over the whole CTA)
        for (size_t i = 0; i < e.size(); ++i)
          if (e[i].second) cta_secs.insert(kks[i] >> 4);
        distinct.push_back(static_cast<int>(cta_secs.size()));
        for (size_t c0 = 0; c0 < e.size(); c0 += 32) {
          std::map<int, int> per_row;
          std::set<int64_t> secs;  // the 32-byte sectors of one token's x row that the chunk's loads touch
          int most = 0;
          for (size_t i = c0; i < std::min(e.size(), c0 + 32); ++i)
            if (e[i].second) {
              most = std::max(most, ++per_row[e[i].first]);
              secs.insert(kks[i] >> 4);
            }
          rs += most;
          sec += static_cast<int>(secs.size());
        }
        sectors.push_back(sec);
        ents.push_back(static_cast<int>(e.size()));
        chunks.push_back(static_cast<int>((e.size() + 31) / 32));
        rounds.push_back(rs);
      }
    // the CTA's own weight stream in 128-byte lines (12 bits per weight; a pair's CTA streams its half of K)
    const int64_t lines = static_cast<int64_t>(l.rt) * 16 * kgs * 64 * 3 / 2 / 128;
    std::printf("| %s | %s | %zu | %s | %s | %s | %s (%s) | %lld |\n", l.layer, l.plan, ents.size(), stats(ents).c_str(),
                stats(chunks).c_str(), stats(rounds).c_str(), stats(sectors).c_str(), stats(distinct).c_str(),
                static_cast<long long>(lines));
  }
  return 0;
}
