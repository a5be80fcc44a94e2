// What reading a kernel's parameters costs when L2 is cold (perf-notes step 153).
//
// Question: a graph's kernel parameters live in device memory written once at instantiation; after the judge's flush
// read they are cold in L2, so a kernel's first use of a parameter may wait on HBM, and a prologue that reads
// parameters from several cache lines one after another may wait several times. The fixed cost's empty kernel reads
// none. Does it matter, and does the layout of the parameters (one line or many) change it?
//
// Kernel: a 512-byte parameter block (64 x 8 bytes). Thread 0 of each CTA stamps %globaltimer at entry, then reads
// the parameters at word offsets off[0..5] in order, each read followed by a branch on its value (so the next stamp
// waits for it), stamping after each. Variants: the six words in one 64-byte line (0..5), in six lines (0, 8, 16, 24,
// 32, 40), and in six lines of the block's far end. Cold: the flush read before each replay; warm: the same graph
// replayed twice, the second stamped. Printed: median over CTAs and launches of each stamp after entry, us.
//
// Usage: param_probe [launches]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.cuh"

namespace {

struct Block {
  unsigned long long v[64];
};

__device__ __forceinline__ unsigned long long gtime() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <int O0, int O1, int O2, int O3, int O4, int O5>
__global__ void param_kernel(const __grid_constant__ Block p, unsigned long long* stamps) {
  if (threadIdx.x != 0) return;
  unsigned long long t[7];
  t[0] = gtime();
  const int offs[6] = {O0, O1, O2, O3, O4, O5};
  unsigned long long acc = 0;
#pragma unroll
  for (int i = 0; i < 6; ++i) {
    const unsigned long long v = p.v[offs[i]];
    if (v == 0x5A5A5A5A5A5A5A5Aull) __trap();  // never: the stamp below waits for v
    acc += v;
    t[i + 1] = gtime();
  }
  // stamps: (cta, 8) with t[0..6] and acc
#pragma unroll
  for (int i = 0; i < 7; ++i) stamps[blockIdx.x * 8 + i] = t[i];
  stamps[blockIdx.x * 8 + 7] = acc;
}

using KernelFn = void (*)(Block, unsigned long long*);

struct Row {
  const char* name;
  KernelFn k;
};

}  // namespace

int main(int argc, char** argv) {
  const int launches = argc > 1 ? std::atoi(argv[1]) : 41;
  bench::Timer tm;
  unsigned long long* stamps;
  const int ctas = tm.sms;
  CK(cudaMalloc(&stamps, ctas * 64));
  Block b;
  for (int i = 0; i < 64; ++i) b.v[i] = 1000 + i;
  const Row rows[] = {
      {"one line (words 0-5)", param_kernel<0, 1, 2, 3, 4, 5>},
      {"six lines (words 0, 8, .., 40)", param_kernel<0, 8, 16, 24, 32, 40>},
      {"six lines, far end (63, 55, .., 23)", param_kernel<63, 55, 47, 39, 31, 23>},
  };
  std::printf("%s: %d CTAs of 32 threads, %d launches per row; us after entry, median over CTAs and launches\n\n",
              "param_probe", ctas, launches);
  for (const Row& r : rows) {
    cudaGraphExec_t g = tm.capture([&] { r.k<<<ctas, 32, 0, tm.s>>>(b, stamps); });
    for (int warm = 0; warm < 2; ++warm) {
      std::vector<double> s[6];
      for (int l = 0; l < launches; ++l) {
        bench::flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
        if (warm) CK(cudaGraphLaunch(g, tm.s));
        CK(cudaGraphLaunch(g, tm.s));
        CK(cudaStreamSynchronize(tm.s));
        std::vector<unsigned long long> h(ctas * 8);
        CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
        for (int c = 0; c < ctas; ++c)
          for (int i = 0; i < 6; ++i) s[i].push_back((h[c * 8 + i + 1] - h[c * 8]) * 1e-3);
      }
      std::printf("%-38s %s:", r.name, warm ? "warm" : "cold");
      for (int i = 0; i < 6; ++i) {
        std::sort(s[i].begin(), s[i].end());
        std::printf(" %6.3f", s[i][s[i].size() / 2]);
      }
      std::printf("   (max over CTAs of the last: %.3f)\n", s[5].back());
    }
    CK(cudaGraphExecDestroy(g));
  }
  return 0;
}
