// What a launch's shape costs before any work (perf-notes step 153).
//
// Question: the skinny family's kernels enter ~0.5 us after an empty kernel would (perf-notes steps 90, 148-149), and
// the judge subtracts the replay of a graph of one empty 32-thread kernel. Which launch properties add time: the grid
// and block size, dynamic shared memory, thread-block clusters, a cooperative launch?
//
// Each variant is an (almost) empty kernel: every CTA stamps %globaltimer at entry (thread 0) and leaves. Timed like
// the benches (bench_util.cuh): graph replays after the flush read (cold), the median over `reps`; and from one cold
// launch's stamps, the spread of the CTAs' entries (last - first). Printed: the replay time, its excess over the
// 1-CTA kernel's, the entry spread.
//
// Usage: launch_probe [reps]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.cuh"

namespace {

__global__ void entry_kernel(unsigned long long* stamps) {
  extern __shared__ unsigned char dyn[];
  if (threadIdx.x == 0) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    stamps[blockIdx.x] = t;
    if (t == 1) dyn[0] = 1;  // (never: keeps the dynamic shared memory referenced)
  }
}

struct Variant {
  const char* name;
  int ctas, threads, smem_kb, cluster;
  bool coop;
};

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 300;
  bench::Timer tm;
  unsigned long long* stamps;
  CK(cudaMalloc(&stamps, 4096 * 8));
  CK(cudaFuncSetAttribute(entry_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CK(cudaFuncSetAttribute(entry_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  const Variant vs[] = {
      {"1 x 32", 1, 32, 0, 1, false},
      {"132 x 32", 132, 32, 0, 1, false},
      {"128 x 512", 128, 512, 0, 1, false},
      {"256 x 320", 256, 320, 0, 1, false},
      {"256 x 320, 100 KB", 256, 320, 100, 1, false},
      {"128 x 544, 200 KB", 128, 544, 200, 1, false},
      {"128 x 288, 100 KB, cluster 8", 128, 288, 100, 8, false},
      {"232 x 352, 100 KB, cluster 8", 232, 352, 100, 8, false},
      {"232 x 352, 100 KB", 232, 352, 100, 1, false},
      {"176 x 224, 100 KB, cluster 8", 176, 224, 100, 8, false},
      {"176 x 224, 100 KB", 176, 224, 100, 1, false},
      {"128 x 256, 129 KB, cooperative", 128, 256, 129, 1, true},
      {"128 x 256, 129 KB", 128, 256, 129, 1, false},
      {"128 x 544, 200 KB, cooperative", 128, 544, 200, 1, true},
      {"264 x 352, 100 KB, cooperative", 264, 352, 100, 1, true},
  };
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s  %d SMs  reps %d (cold graph replays, us; no fixed cost subtracted)\n\n", prop.name, tm.sms, reps);
  std::printf("%-34s %9s %9s %14s\n", "variant", "replay", "excess", "entry spread");
  float base = 0;
  for (const Variant& v : vs) {
    cudaLaunchConfig_t lc{};
    lc.gridDim = dim3(v.ctas);
    lc.blockDim = dim3(v.threads);
    lc.dynamicSmemBytes = static_cast<size_t>(v.smem_kb) * 1024;
    lc.stream = tm.s;
    cudaLaunchAttribute attr[2];
    int na = 0;
    if (v.cluster > 1) {
      attr[na].id = cudaLaunchAttributeClusterDimension;
      attr[na].val.clusterDim.x = v.cluster;
      attr[na].val.clusterDim.y = 1;
      attr[na].val.clusterDim.z = 1;
      ++na;
    }
    if (v.coop) {
      attr[na].id = cudaLaunchAttributeCooperative;
      attr[na].val.cooperative = 1;
      ++na;
    }
    lc.attrs = attr;
    lc.numAttrs = na;
    cudaGraphExec_t g = tm.capture([&] { CK(cudaLaunchKernelEx(&lc, entry_kernel, stamps)); });
    for (int i = 0; i < 5; ++i) tm.median(g, 3);
    const float t = tm.median(g, reps);
    if (&v == &vs[0]) base = t;
    std::vector<double> spread;
    for (int r = 0; r < 9; ++r) {
      bench::flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
      CK(cudaGraphLaunch(g, tm.s));
      CK(cudaStreamSynchronize(tm.s));
      std::vector<unsigned long long> h(v.ctas);
      CK(cudaMemcpy(h.data(), stamps, h.size() * 8, cudaMemcpyDeviceToHost));
      const auto mm = std::minmax_element(h.begin(), h.end());
      spread.push_back((*mm.second - *mm.first) * 1e-3);
    }
    std::sort(spread.begin(), spread.end());
    std::printf("%-34s %9.2f %9.2f %14.2f\n", v.name, t, t - base, spread[spread.size() / 2]);
    CK(cudaGraphExecDestroy(g));
  }
  return 0;
}
