// race_probe: hunts an intermittent wrong output (a race) by running one prepared layer many times on the same x and
// comparing every output bitwise with the first one (the library is bitwise deterministic, so any difference is a
// fault), while the timing around each call is varied: nothing, a cold L2, a bandwidth hog on a second stream running
// alongside, another m first. No host sync per call: a compare kernel counts the differing elements of each rep on
// the GPU and the first bad output is kept for the report (which row tiles and tokens, by how much).
//
//   race_probe GEN N K ROWS LAYER_INDEX "m1,m2,..." REPS
//   GEN: default | llm-like (the judge's weights, judge/gen.hpp, seed 0; LAYER_INDEX as the judge's layers())
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../judge/gen.hpp"
#include "load_kernels.cuh"
#include "solgemm/format.hpp"
#include "solgemm/solgemm.hpp"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

// the first bad output into `keep` (once)
__global__ void capture(const uint16_t* out, uint16_t* keep, size_t n, const unsigned* cnt, const unsigned* taken) {
  if (*cnt == 0 || *taken != 0) return;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    keep[i] = out[i];
}
__global__ void mark(const unsigned* cnt, unsigned* taken, int rep, int* first) {
  if (*cnt != 0 && *taken == 0) {
    *taken = 1;
    *first = rep;
  }
}
float bf(uint16_t b) { return solgemm::format::bf16_to_f32(b); }


// Which k group (and 16-byte chunks of it) of which token went wrong in a bad output: for a bad (row tile, token) the
// difference bad - gold over the tile's 16 rows is fitted, group by group, as a sum over the group's 8 chunks (8 k each)
// of b_c (W . x_alt - W . x) with x_alt a candidate for what the kernel read instead of the token's x there: zeros,
// the same token's x of another group (g +- 1..4, +- 16, +- 32: the ring slot's previous or next box, another k warp's),
// or another token's x of the same group. Least squares on the 8 b_c; the best fits (smallest relative residual) are
// printed with their coefficients (b_c ~ 1: that chunk was read from the candidate).
struct Fit {
  double res = 1e300;
  int g = -1;
  std::string what;
  double b[8] = {};
};
bool solve8(double (&A)[8][8], double (&y)[8], double (&b)[8]) {
  int n = 8;
  double M[8][9];
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) M[i][j] = A[i][j] + (i == j ? 1e-9 * (A[i][i] + 1e-30) : 0);
    M[i][8] = y[i];
  }
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(M[r][c]) > std::fabs(M[p][c])) p = r;
    if (std::fabs(M[p][c]) < 1e-300) return false;
    for (int j = 0; j <= n; ++j) std::swap(M[c][j], M[p][j]);
    for (int r = 0; r < n; ++r)
      if (r != c) {
        const double f = M[r][c] / M[c][c];
        for (int j = c; j <= n; ++j) M[r][j] -= f * M[c][j];
      }
  }
  for (int i = 0; i < n; ++i) b[i] = M[i][8] / M[i][i];
  return true;
}
void analyze(const std::vector<uint16_t>& hw, const std::vector<uint16_t>& hx, int64_t k, int64_t rows, int64_t m,
             const std::vector<uint16_t>& gold, const std::vector<uint16_t>& bad, int max_pairs) {
  const int64_t groups = k / 64;
  int shown = 0;
  for (int64_t t = 0; t < (rows + 15) / 16 && shown < max_pairs; ++t)
    for (int64_t j = 0; j < m && shown < max_pairs; ++j) {
      double d[16];
      int nd = 0;
      for (int r = 0; r < 16; ++r) {
        const size_t e = static_cast<size_t>(j * rows + t * 16 + r);
        d[r] = static_cast<double>(bf(bad[e])) - bf(gold[e]);
        nd += bad[e] != gold[e];
      }
      if (nd == 0) continue;
      ++shown;
      double dn = 0;
      for (double v : d) dn += v * v;
      std::vector<Fit> best;
      auto xv = [&](int64_t tok, int64_t col) -> double {
        return tok < m && col >= 0 && col < k ? bf(hx[static_cast<size_t>(tok * k + col)]) : 0.0;
      };
      for (int64_t g = 0; g < groups; ++g) {
        // candidates: 0 = zeros; 1.. = groups g + off; then tokens
        std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> cands;  // (name, (token, group))
        cands.push_back({"zeros", {-1, -1}});
        for (int64_t g2 = 0; g2 < groups; ++g2)
          if (g2 != g) cands.push_back({fmt::format("group {} (k warp {}, i {})", g2, g2 / 16, g2 % 16), {j, g2}});
        for (int64_t j2 = 0; j2 < 16; ++j2)
          if (j2 != j) cands.push_back({fmt::format("token {}", j2), {j2, g}});
        for (auto& cd : cands) {
          double reg[8][16];
          for (int c = 0; c < 8; ++c)
            for (int r = 0; r < 16; ++r) {
              double s = 0;
              for (int q = 0; q < 8; ++q) {
                const int64_t col = g * 64 + c * 8 + q;
                const double w = bf(hw[static_cast<size_t>((t * 16 + r) * k + col)]);
                const double alt = cd.second.first < 0 ? 0.0 : xv(cd.second.first, cd.second.second * 64 + c * 8 + q);
                s += w * (alt - xv(j, col));
              }
              reg[c][r] = s;
            }
          double A[8][8], y[8], b[8];
          for (int a1 = 0; a1 < 8; ++a1) {
            y[a1] = 0;
            for (int r = 0; r < 16; ++r) y[a1] += reg[a1][r] * d[r];
            for (int a2 = 0; a2 < 8; ++a2) {
              A[a1][a2] = 0;
              for (int r = 0; r < 16; ++r) A[a1][a2] += reg[a1][r] * reg[a2][r];
            }
          }
          if (!solve8(A, y, b)) continue;
          double res = 0;
          for (int r = 0; r < 16; ++r) {
            double p = 0;
            for (int c = 0; c < 8; ++c) p += b[c] * reg[c][r];
            res += (d[r] - p) * (d[r] - p);
          }
          Fit f;
          f.res = std::sqrt(res / std::max(dn, 1e-300));
          f.g = static_cast<int>(g);
          f.what = cd.first;
          std::memcpy(f.b, b, sizeof b);
          best.push_back(f);
        }
      }
      std::sort(best.begin(), best.end(), [](const Fit& a, const Fit& b) { return a.res < b.res; });
      std::printf("    tile %lld token %lld: %d of 16 rows differ, |delta| %.3g\n", (long long)t, (long long)j, nd,
                  std::sqrt(dn));
      for (size_t i = 0; i < std::min<size_t>(3, best.size()); ++i) {
        const Fit& f = best[i];
        std::printf("      fit %.3g: group %d (k warp %d, i %d) chunks read from %s, b =", f.res, f.g, f.g / 16, f.g % 16,
                    f.what.c_str());
        for (double v : f.b) std::printf(" %.2f", v);
        std::printf("\n");
      }
    }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 8) {
    std::fprintf(stderr, "usage: race_probe GEN N K ROWS LAYER_INDEX m1,m2,... REPS\n");
    return 1;
  }
  namespace gen = solgemm::judge::gen;
  const std::string g = argv[1];
  const int64_t n = std::atoll(argv[2]), k = std::atoll(argv[3]), rows = std::atoll(argv[4]);
  const int layer = std::atoi(argv[5]);
  std::vector<int64_t> ms;
  for (const char* s = argv[6]; *s;) {
    ms.push_back(std::atoll(s));
    while (*s && *s != ',') ++s;
    if (*s == ',') ++s;
  }
  const int reps = std::atoi(argv[7]);
  gen::WeightSpec ws;
  ws.kind = g == "llm-like" ? gen::Kind::llm_like : gen::Kind::normal;
  ws.layer = static_cast<uint32_t>(layer);
  ws.k = k;
  const std::vector<uint16_t> hw = gen::bf16_weights(ws, n);
  void* dw;
  CK(cudaMalloc(&dw, hw.size() * 2));
  CK(cudaMemcpy(dw, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
  cudaStream_t st, st2;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking));
  solgemm::PrepareOptions po;
  int64_t max_m = 0;
  for (int64_t m : ms) max_m = std::max(max_m, m + 7);
  po.max_m = static_cast<int>(max_m);
  po.tune_vendor = false;
  auto w = solgemm::Weights::prepare(dw, solgemm::DType::bf16, n, k, st, po);
  CK(cudaStreamSynchronize(st));
  std::printf("%s N=%lld K=%lld rows=%lld: %s\n", g.c_str(), (long long)n, (long long)k, (long long)rows,
              w.description().c_str());
  const size_t hog_n = (size_t{1} << 30) / 16, fl_n = (size_t{256} << 20) / 16;
  uint4 *hp, *fp;
  CK(cudaMalloc(&hp, hog_n * 16));
  CK(cudaMalloc(&fp, fl_n * 16));
  CK(cudaMemset(hp, 1, hog_n * 16));
  unsigned *cnt, *taken, *sink;
  int* first;
  CK(cudaMalloc(&cnt, sizeof(unsigned) * reps));
  CK(cudaMalloc(&taken, 4));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&first, 4));
  int bad_total = 0;
  for (int64_t m : ms) {
    std::vector<uint16_t> hx(static_cast<size_t>(max_m * k));
    for (int64_t i = 0; i < max_m; ++i)
      for (int64_t c = 0; c < k; ++c) hx[static_cast<size_t>(i * k + c)] = gen::x_bits(0x5EED + m, k, i, c);
    void *dx, *dout, *gold, *keep;
    const size_t on = static_cast<size_t>(max_m * rows);
    CK(cudaMalloc(&dx, hx.size() * 2));
    CK(cudaMemcpy(dx, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&dout, on * 2));
    CK(cudaMalloc(&gold, on * 2));
    CK(cudaMalloc(&keep, on * 2));
    CK(cudaMemsetAsync(gold, 0xFF, on * 2, st));
    w.run(dx, m, gold, rows, st);
    const size_t used = static_cast<size_t>(m * rows);
    CK(cudaMemsetAsync(cnt, 0, sizeof(unsigned) * reps, st));
    CK(cudaMemsetAsync(taken, 0, 4, st));
    CK(cudaMemsetAsync(first, 0xFF, 4, st));
    cudaEvent_t ev;
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    for (int r = 0; r < reps; ++r) {
      const int mode = r % 5;
      CK(cudaMemsetAsync(dout, 0xFF, on * 2, st));  // NaN poison
      if (mode == 1) solgemm::load::write_fill<<<1024, 256, 0, st>>>(fp, fl_n, static_cast<unsigned>(r));
      if (mode == 2 || mode == 4) {  // a hog alongside: started just before the call
        CK(cudaEventRecord(ev, st));
        CK(cudaStreamWaitEvent(st2, ev));
        solgemm::load::read_hog<<<264, 512, 0, st2>>>(hp, mode == 2 ? hog_n : hog_n / 16, sink);
      }
      if (mode == 3) w.run(dx, std::min<int64_t>(max_m, m + 7), dout, rows, st);  // another m first
      if (mode == 3) CK(cudaMemsetAsync(dout, 0xFF, on * 2, st));
      w.run(dx, m, dout, rows, st);
      solgemm::load::count_diff<<<256, 256, 0, st>>>(static_cast<uint16_t*>(dout), static_cast<uint16_t*>(gold), used,
                                                     cnt + r);
      capture<<<256, 256, 0, st>>>(static_cast<uint16_t*>(dout), static_cast<uint16_t*>(keep), used, cnt + r, taken);
      mark<<<1, 1, 0, st>>>(cnt + r, taken, r, first);
      if (mode == 2 || mode == 4) {
        CK(cudaEventRecord(ev, st2));
        CK(cudaStreamWaitEvent(st, ev));
      }
      if (r % 512 == 511) CK(cudaStreamSynchronize(st));
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<unsigned> hc(static_cast<size_t>(reps));
    CK(cudaMemcpy(hc.data(), cnt, sizeof(unsigned) * reps, cudaMemcpyDeviceToHost));
    int bad = 0, by_mode[5] = {};
    for (int r = 0; r < reps; ++r)
      if (hc[static_cast<size_t>(r)]) {
        ++bad;
        ++by_mode[r % 5];
      }
    int fr = -1;
    CK(cudaMemcpy(&fr, first, 4, cudaMemcpyDeviceToHost));
    std::printf("m=%lld plan: %s\n  reps %d, bad %d (by mode none/flush/hog/m+7 first/short hog: %d %d %d %d %d)\n",
                (long long)m, w.plan_for(m, rows).c_str(), reps, bad, by_mode[0], by_mode[1], by_mode[2], by_mode[3],
                by_mode[4]);
    if (bad) {
      bad_total += bad;
      std::vector<uint16_t> hg(used), hk(used);
      CK(cudaMemcpy(hg.data(), gold, used * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hk.data(), keep, used * 2, cudaMemcpyDeviceToHost));
      std::printf("  first bad rep %d (mode %d): %u elements differ\n", fr, fr % 5, hc[static_cast<size_t>(fr)]);
      // per 16-row tile: tokens that differ, worst relative difference
      const int64_t tiles = (rows + 15) / 16;
      int shown = 0;
      for (int64_t t = 0; t < tiles && shown < 24; ++t) {
        unsigned tok_mask = 0;
        int cnt_t = 0;
        double worst = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t r = t * 16; r < std::min(rows, t * 16 + 16); ++r) {
            const size_t e = static_cast<size_t>(i * rows + r);
            if (hg[e] != hk[e]) {
              ++cnt_t;
              tok_mask |= 1u << std::min<int64_t>(i, 31);
              const double a = bf(hg[e]), b = bf(hk[e]);
              worst = std::max(worst, std::fabs(a - b) / std::max(1e-30, std::fabs(a)));
            }
          }
        if (cnt_t) {
          std::printf("  row tile %lld: %d elements, tokens mask 0x%x, worst rel %.3g\n", (long long)t, cnt_t, tok_mask,
                      worst);
          ++shown;
        }
      }
    }
    // RACE_ANALYZE=n: the first bad output of the loop, n of its bad (row tile, token) pairs fitted (analyze)
    if (bad && std::getenv("RACE_ANALYZE")) {
      std::vector<uint16_t> hg(used), hk(used);
      CK(cudaMemcpy(hg.data(), gold, used * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hk.data(), keep, used * 2, cudaMemcpyDeviceToHost));
      analyze(hw, hx, k, rows, m, hg, hk, std::atoi(std::getenv("RACE_ANALYZE")));
      std::fflush(stdout);
    }
    CK(cudaFree(dx));
    CK(cudaFree(dout));
    CK(cudaFree(gold));
    CK(cudaFree(keep));
    CK(cudaEventDestroy(ev));
  }
  std::printf("total bad reps: %d\n", bad_total);
  return bad_total ? 3 : 0;
}
