// What a kernel's code size costs when L2 is cold (perf-notes step 151).
//
// Question: the judge replays every call after a 512 MB read that also evicts the kernel's instructions from L2.
// The skinny family's kernels are ~70 KB of SASS, the simt family's ~16-21 KB, an empty kernel a few lines; does the
// first pass through the code (fetched from HBM on a cold L2) cost time that the fixed cost (an empty kernel) does
// not measure?
//
// Kernels: `code_kernel<N>` runs N predicated-off `ld.volatile.shared` (the predicate comes from a kernel argument,
// so ptxas keeps every one: ~2 N SASS instructions of straight-line code that do no work), stamping globaltimer at
// entry and after the run. Timed like the benches (bench_util.cuh): graph replays, cold (the flush read before each)
// and warm (the same graph replayed twice, the second timed), grid of one CTA per SM and of two.
// Printed per N: the SASS bytes, cold and warm replay times, and the per-CTA span entry -> end (median, max).
//
// Part 2, the library's calls (plan kernels): each call timed cold as the judge does (flush, replay), "code warm"
// (flush, a replay of the same call on a second Weights / x / out of the same shape, so the kernel's code is in L2
// and the instruction caches but its data is not, then the timed replay), and all warm (flush, the same replay
// twice). cold - code warm = what fetching the code costs the call.
//
// Usage: icache_probe [reps] [part: 0 = both, 1, 2]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_data.cuh"
#include "bench_util.cuh"
#include "solgemm/solgemm.hpp"

namespace {

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int N>
__global__ void code_kernel(int flag, unsigned long long* stamps, unsigned* sink) {
  __shared__ unsigned buf[64];
  const unsigned long long t0 = gtime();
  unsigned v = threadIdx.x;
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(buf));
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.s32 p, %1, 0;\n@p ld.volatile.shared.u32 %0, [%2];\n}\n"
        : "+r"(v)
        : "r"(flag), "r"(base + 4u * static_cast<unsigned>(i & 63)));
  __syncthreads();
  const unsigned long long t1 = gtime();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = t0;
    stamps[2 * blockIdx.x + 1] = t1;
  }
  if (v == 0xFFFFFFFFu) sink[0] = v;
}

struct Row {
  int n;
  void (*k)(int, unsigned long long*, unsigned*);
};

struct Call {
  const char* name;
  int64_t n, k, rows, m;
  bool f32;
};

// Part 2 (see the top); `fixed`: the cold empty-kernel graph's time, subtracted.
void library_calls(bench::Timer& tm, int reps, float fixed) {
  const Call calls[] = {{"qkv_gate", 2304, 8192, 2304, 1, false}, {"qkv_gate", 2304, 8192, 2304, 8, false},
                        {"o", 8192, 1024, 8192, 1, false},        {"pooler", 4096, 8192, 4096, 1, false},
                        {"unpooler", 8192, 4096, 8192, 16, false}, {"slice", 8192, 4096, 1024, 1, false},
                        {"slice", 8192, 4096, 1024, 8, false},    {"router", 256, 8192, 256, 1, true},
                        {"router", 256, 8192, 256, 8, true},      {"router", 256, 8192, 256, 128, true}};
  std::printf("\nlibrary calls: us, the cold empty-kernel graph (%.2f us) subtracted\n", fixed);
  std::printf("%-9s %4s  %-60s %8s %10s %8s %12s\n", "layer", "m", "plan", "cold", "code_warm", "warm", "cold-codewarm");
  for (const Call& c : calls) {
    solgemm::PrepareOptions opt;
    opt.tune_vendor = false;
    opt.max_m = 256;
    const size_t wbytes = static_cast<size_t>(c.n) * c.k * (c.f32 ? 4 : 2);
    void *w[2], *x[2], *out[2];
    for (int i = 0; i < 2; ++i) {
      CK(cudaMalloc(&w[i], wbytes));
      CK(cudaMalloc(&x[i], static_cast<size_t>(c.m) * c.k * 2));
      CK(cudaMalloc(&out[i], static_cast<size_t>(c.m) * c.rows * 4));
      if (c.f32)
        bench::gen_f32<<<1024, 256, 0, tm.s>>>(static_cast<float*>(w[i]), c.n * c.k, 1000003ull * (i + 1), 0.02f);
      else
        bench::gen_bf16<<<1024, 256, 0, tm.s>>>(static_cast<__nv_bfloat16*>(w[i]), c.n * c.k, 1000003ull * (i + 1),
                                                0.02f);
      bench::gen_bf16<<<1024, 256, 0, tm.s>>>(static_cast<__nv_bfloat16*>(x[i]), c.m * c.k, 7777777ull * (i + 1), 1.f);
    }
    CK(cudaStreamSynchronize(tm.s));
    std::vector<solgemm::Weights> W;
    for (int i = 0; i < 2; ++i)
      W.push_back(solgemm::Weights::prepare(w[i], c.f32 ? solgemm::DType::f32 : solgemm::DType::bf16, c.n, c.k, tm.s,
                                            opt));
    cudaGraphExec_t g[2];
    for (int i = 0; i < 2; ++i) g[i] = tm.capture([&] { W[i].run(x[i], c.m, out[i], c.rows, tm.s); });
    for (int i = 0; i < 3; ++i) tm.median(g[0], 3);
    std::vector<float> t[3];
    for (int r = 0; r < reps; ++r)
      for (int mode = 0; mode < 3; ++mode)
        t[mode].push_back(tm.once(g[0], mode == 0 ? nullptr : g[mode == 1 ? 1 : 0]) - fixed);
    float med[3];
    for (int mode = 0; mode < 3; ++mode) {
      std::sort(t[mode].begin(), t[mode].end());
      med[mode] = t[mode][t[mode].size() / 2];
    }
    std::string plan = W[0].plan_for(c.m, c.rows);
    if (plan.size() > 60) plan.resize(60);
    std::printf("%-9s %4lld  %-60s %8.2f %10.2f %8.2f %12.2f\n", c.name, static_cast<long long>(c.m), plan.c_str(),
                med[0], med[1], med[2], med[0] - med[1]);
    for (int i = 0; i < 2; ++i) {
      CK(cudaGraphExecDestroy(g[i]));
      CK(cudaFree(w[i]));
      CK(cudaFree(x[i]));
      CK(cudaFree(out[i]));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int part = argc > 2 ? std::atoi(argv[2]) : 0;
  bench::Timer tm;
  unsigned long long* stamps;
  CK(cudaMalloc(&stamps, 4096 * 16));
  const Row rows[] = {{0, code_kernel<0>},       {256, code_kernel<256>},   {1024, code_kernel<1024>},
                      {2048, code_kernel<2048>}, {4096, code_kernel<4096>}, {8192, code_kernel<8192>}};
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s  %d SMs  reps %d\n", prop.name, tm.sms, reps);
  const float fixed = tm.fixed_cost();
  std::printf("empty-kernel graph (bench_util nop<<<1,32>>>), cold: %.2f us\n\n", fixed);
  if (part == 2) {
    library_calls(tm, reps, fixed);
    return 0;
  }
  std::printf("%6s %6s %5s %9s %9s | %-24s | %-24s\n", "N", "ctas", "thr", "cold_us", "warm_us",
              "cold span med/max us", "warm span med/max us");
  for (const Row& r : rows) {
    for (int per_sm : {1, 2}) {
      const int ctas = tm.sms * per_sm, thr = 256;
      cudaGraphExec_t g = tm.capture([&] { r.k<<<ctas, thr, 0, tm.s>>>(0, stamps, tm.sink); });
      // cold: the flush before each replay (Timer::median)
      for (int i = 0; i < 5; ++i) tm.median(g, 3);
      const float cold = tm.median(g, reps);
      // the per-CTA spans of 15 replays after the flush (warm: each after one more replay of the same graph)
      auto spans = [&](bool warm) {
        std::vector<double> med, mx;
        for (int t = 0; t < 15; ++t) {
          bench::flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
          if (warm) CK(cudaGraphLaunch(g, tm.s));
          CK(cudaGraphLaunch(g, tm.s));
          CK(cudaStreamSynchronize(tm.s));
          std::vector<unsigned long long> h(2 * ctas);
          CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
          std::vector<double> d;
          for (int c = 0; c < ctas; ++c) d.push_back((h[2 * c + 1] - h[2 * c]) * 1e-3);
          std::sort(d.begin(), d.end());
          med.push_back(d[d.size() / 2]);
          mx.push_back(d.back());
        }
        std::sort(med.begin(), med.end());
        std::sort(mx.begin(), mx.end());
        return std::pair<double, double>(med[med.size() / 2], mx[mx.size() / 2]);
      };
      const auto cs = spans(false);
      // warm: the same graph twice after the flush, the second timed
      std::vector<float> wt;
      for (int t = 0; t < reps; ++t) wt.push_back(tm.once(g, g));
      std::sort(wt.begin(), wt.end());
      const auto ws = spans(true);
      std::printf("%6d %6d %5d %9.2f %9.2f | %10.2f / %-11.2f | %10.2f / %-11.2f\n", r.n, ctas, thr, cold,
                  wt[wt.size() / 2], cs.first, cs.second,
                  ws.first, ws.second);
      CK(cudaGraphExecDestroy(g));
    }
  }
  if (part == 0) library_calls(tm, reps, fixed);
  return 0;
}
