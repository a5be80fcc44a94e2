// lt_pair: a few cuBLASLt configurations of one BF16 shape timed the way the judge times calls (captured into CUDA
// graphs, each replay after a 512 MB read, the configurations and cuBLAS's default call interleaved round by round in
// rotating order, medians), to see whether the vendor tuner's head-to-head choice at prepare (perf-notes step 134)
// agrees with judge-style timing on the same machine. Configurations: the heuristic's first algorithm, unsplit, with
// the tile and custom option given ("17/1,125/0": the tuner's sweep base).
// LT_FROM_M=M builds the configurations on the heuristic's first algorithm at M instead (the vendor tuner builds its
// choice at the bucket's top and runs it below; perf-notes step 190). LT_OFFSETS=0,256,65536 (bytes) times every
// configuration and the default once per offset of x and out from their allocations (does a configuration's time
// depend on where x and out lie? step 190's two modes). LT_JUDGE_X=1: x as the judge draws it (gen.hpp, seed 0: every
// 8th row a probe row of one nonzero); LT_JUDGE_W=L: the weights as the judge's default generator draws layer L's (seed 0;
// L = 2: the pooler) (does the data move a configuration's time? perf-notes step 195).
// Usage: LT_PAIR=17/1,125/0 [LT_FLUSH_MB=512] [LT_FROM_M=128] [LT_OFFSETS=0,4096] lt_pair [m=256] [rows=4096] [k=8192]
//        [rounds=150]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_data.cuh"
#include "bench_util.cuh"
#include "lt_bench.cuh"
#include "gen.hpp"
#include "kernels/graph_capture.hpp"

namespace {
namespace gen = solgemm::judge::gen;
__global__ void judge_x(uint16_t* x, int64_t m, int64_t k) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < m * k;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = gen::x_bits(0, k, i / k, i % k);
}
__global__ void judge_w(uint16_t* w, int64_t n, int64_t k, uint32_t layer) {
  gen::WeightSpec spec;
  spec.kind = gen::Kind::normal;
  spec.layer = layer;
  spec.k = k;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n * k;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    w[i] = static_cast<uint16_t>(gen::weight_bits(spec, i / k, i % k) >> 16);
}
}  // namespace

int main(int argc, char** argv) {
  const int m = argc > 1 ? std::atoi(argv[1]) : 256;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 4096, k = argc > 3 ? std::atoll(argv[3]) : 8192;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 150;
  const char* spec = std::getenv("LT_PAIR") ? std::getenv("LT_PAIR") : "17/1,125/0";
  bench::Timer tm;
  // LT_FLUSH_MB: the read before each replay, in MB (default the judge-like 512; the vendor tuner reads 256).
  if (const char* f = std::getenv("LT_FLUSH_MB")) tm.flush_n = std::min<size_t>(tm.flush_n, (std::atoll(f) << 20) / 16);
  const float fixed = tm.fixed_cost();
  const bench::LtBlas blas(tm.s);
  std::vector<size_t> offsets;  // bytes (multiples of 16)
  for (const char* p = std::getenv("LT_OFFSETS") ? std::getenv("LT_OFFSETS") : "0"; *p;) {
    offsets.push_back(static_cast<size_t>(std::atoll(p)) / 16 * 16);
    const char* comma = std::strchr(p, ',');
    if (!comma) break;
    p = comma + 1;
  }
  const size_t max_off = *std::max_element(offsets.begin(), offsets.end());
  __nv_bfloat16 *w, *x0, *out0;
  CK(cudaMalloc(&w, n * k * 2));
  CK(cudaMalloc(&x0, m * k * 2 + max_off));
  CK(cudaMalloc(&out0, m * n * 2 + max_off));
  if (const char* jw = std::getenv("LT_JUDGE_W"))
    judge_w<<<1024, 256>>>(reinterpret_cast<uint16_t*>(w), n, k, static_cast<uint32_t>(std::atoi(jw)));
  else
    bench::gen_bf16<<<1024, 256>>>(w, n * k, 7, 0.02f);
  for (size_t off : offsets) {
    auto* xo = reinterpret_cast<__nv_bfloat16*>(reinterpret_cast<char*>(x0) + off);
    if (std::getenv("LT_JUDGE_X"))
      judge_x<<<1024, 256>>>(reinterpret_cast<uint16_t*>(xo), m, k);
    else
      bench::gen_bf16<<<1024, 256>>>(xo, m * k, 12345, 1.0f);
  }
  CK(cudaDeviceSynchronize());
  const float one = 1.f, zero = 0.f;
  std::vector<std::string> names;
  std::vector<cudaGraphExec_t> graphs;
  auto graph_of = [&](auto&& call) { return solgemm::kernels::capture_graph(tm.s, [&](cudaStream_t) { return call(); }); };
  const bench::LtGemm prob(n, m, k);
  const int from_m = std::getenv("LT_FROM_M") ? std::atoi(std::getenv("LT_FROM_M")) : m;
  const bench::LtGemm base_prob(n, from_m, k);  // (the problem whose heuristic the configurations start from)
  cublasLtMatmulHeuristicResult_t heur[1];
  if (base_prob.heuristic(blas.lt, blas.ws_bytes, 1, heur) < 1) {
    std::fprintf(stderr, "lt_pair: no heuristic result\n");
    return 1;
  }
  std::vector<cublasLtMatmulAlgo_t> algos;
  std::vector<std::string> algo_names;
  algos.reserve(16);
  for (const char* p = spec; *p;) {
    const unsigned tile = static_cast<unsigned>(std::atoi(p));
    const char* sl = std::strchr(p, '/');
    const unsigned custom = sl ? static_cast<unsigned>(std::atoi(sl + 1)) : 0;
    if (algos.size() == algos.capacity()) {  // (the graphs hold pointers into algos)
      std::fprintf(stderr, "lt_pair: at most 16 configurations\n");
      return 1;
    }
    cublasLtMatmulAlgo_t a = heur[0].algo;
    const int32_t no_split = 1;
    const uint32_t no_scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &no_split, sizeof(no_split));
    cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &no_scheme, sizeof(no_scheme));
    cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile));
    cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof(custom));
    if (!prob.usable(blas.lt, a, blas.ws_bytes)) {
      std::fprintf(stderr, "lt_pair: tile %u/%u not usable for this problem\n", tile, custom);
      return 1;
    }
    algos.push_back(a);
    algo_names.push_back("tile " + std::to_string(tile) + "/" + std::to_string(custom));
    const char* comma = std::strchr(p, ',');
    if (!comma) break;
    p = comma + 1;
  }
  // The default call and every configuration, once per offset of x and out.
  for (size_t off : offsets) {
    auto* x = reinterpret_cast<__nv_bfloat16*>(reinterpret_cast<char*>(x0) + off);
    auto* out = reinterpret_cast<__nv_bfloat16*>(reinterpret_cast<char*>(out0) + off);
    const std::string at = offsets.size() > 1 ? " @" + std::to_string(off) : "";
    graphs.push_back(graph_of([&, x, out] { return blas.gemm_default(n, m, k, w, x, out); }));
    names.push_back("cublasGemmEx default" + at);
    for (size_t ai = 0; ai < algos.size(); ++ai) {
      const cublasLtMatmulAlgo_t* ap = &algos[ai];
      graphs.push_back(graph_of([&, ap, x, out] {
        return cublasLtMatmul(blas.lt, prob.op, &one, w, prob.a, x, prob.b, &zero, out, prob.c, out, prob.c, ap, blas.ws,
                              blas.ws_bytes, tm.s) == CUBLAS_STATUS_SUCCESS;
      }));
      names.push_back(algo_names[ai] + at);
    }
  }
  const size_t g = graphs.size();
  for (size_t i = 0; i < g; ++i)
    if (!graphs[i]) {
      std::fprintf(stderr, "lt_pair: %s could not be captured\n", names[i].c_str());
      return 1;
    }
  std::vector<std::vector<float>> t(g);
  for (size_t i = 0; i < g; ++i) tm.median(graphs[i], 2);  // warm-up (module loading)
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < g; ++j) {
      const size_t i = (j + static_cast<size_t>(r)) % g;  // rotating order
      t[i].push_back(tm.median(graphs[i], 1) - fixed);
    }
  auto med = [](std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("lt_pair: %lld x %lld, m = %d (configurations from the heuristic at m = %d), %d rounds, %zu MB read before "
              "each replay, fixed cost %.2f us subtracted; ratios to the first default\n",
              static_cast<long long>(n), static_cast<long long>(k), m, from_m, rounds, tm.flush_n * 16 >> 20, fixed);
  for (size_t i = 0; i < g; ++i) {
    std::vector<float> ratio;
    for (int r = 0; r < rounds; ++r) ratio.push_back(t[i][static_cast<size_t>(r)] / t[0][static_cast<size_t>(r)]);
    std::printf("  %-22s median %7.2f us, per-round ratio to the default %.3f\n", names[i].c_str(), med(t[i]), med(ratio));
  }
  for (size_t i = 1; i < g; ++i)
    for (size_t j = i + 1; j < g; ++j) {
      std::vector<float> ratio;
      for (int r = 0; r < rounds; ++r) ratio.push_back(t[j][static_cast<size_t>(r)] / t[i][static_cast<size_t>(r)]);
      std::printf("  %s / %s per round: median %.3f\n", names[j].c_str(), names[i].c_str(), med(ratio));
    }
  return 0;
}
