// sync_probe: what compute-sanitizer's synccheck says about a warp-specialised named barrier (perf-notes step 204).
//
// The skinny family's exception warp meets the compute warps at `bar.sync 1, N` (N = the compute warps' threads + 32,
// the producer warp not taking part), reached from a different instruction than theirs, inside a loop whose trip
// count is warp-uniform but read from memory, after lane-divergent loads. synccheck reported "Divergent thread(s) in
// block" for every lane of that warp. This probe runs the same pattern in small variants, each with its result checked
// (the barrier must order the compute warps' shared-memory writes before the exception warp's reads), so that a run
// under `compute-sanitizer --tool synccheck` tells which feature the report follows:
//   same   all participating warps at one bar.sync instruction (the producer warp not taking part)
//   split  the exception warp at its own bar.sync instruction, straight-line code
//   loop   as split, the exception warp's bar.sync inside a warp-uniform loop after lane-divergent loads (the kernel's form)
//   full   as split, but every warp of the block takes part (count = blockDim)
//   aligned_all  as full, with __syncthreads() (count = blockDim, one instruction): the control that must be clean
//   barrier_loop as loop, with the non-aligned `barrier.sync` (which allows divergent arrival) at the exception warp
//
//   sync_probe VARIANT [blocks]   (prints "VARIANT ok" or the first wrong value; exit code 1 on a wrong value)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.cuh"  // CK

namespace {

constexpr int kCompute = 8;                 // compute warps 0..7
constexpr int kProducer = kCompute;         // warp 8: does not take part in barrier 1
// warp 9 (the last): the exception warp
constexpr int kThreads = (kCompute + 2) * 32;
constexpr int kPart = (kCompute + 1) * 32;  // compute warps + the exception warp

enum Variant { kSame, kSplit, kLoop, kFull, kAlignedAll, kBarrierLoop };

__device__ __forceinline__ void bar_sync(int count) { asm volatile("bar.sync 1, %0;\n" ::"r"(count) : "memory"); }
__device__ __forceinline__ void barrier_sync(int count) {
  asm volatile("barrier.sync 1, %0;\n" ::"r"(count) : "memory");
}

// out[block * 32 + lane] = the sum of what the compute warps wrote for that lane, read by the exception warp after the
// barrier; `trip` (1 in the host's buffer) is the warp-uniform trip count the loop variants read from memory, `vals`
// what the exception warp's lanes load where their lane index is below `trip * 7` (lane-divergent loads).
template <int V>
__global__ void __launch_bounds__(kThreads) probe(const int* trip, const int* vals, int* out, int* sink) {
  __shared__ int buf[kCompute][32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int acc = 0;
  if (warp == kProducer) {  // busy meanwhile, as the ring's producer is; takes part only in `full` / `aligned_all`
    int s = 0;
    for (int i = 0; i < 2000; ++i) s += __ldg(vals + (i + lane) % 64);
    if constexpr (V == kFull) bar_sync(kThreads);
    if constexpr (V == kAlignedAll) __syncthreads();
    if (s == 0x7fffffff) sink[0] = s;
    return;
  }
  if constexpr (V == kSame) {
    // one bar.sync instruction for every participating warp: the branches rejoin before it
    if (warp < kCompute) buf[warp][lane] = (blockIdx.x + 1) * (warp + 1) + lane;
    bar_sync(kPart);
    if (warp < kCompute) return;
  } else {
    if (warp < kCompute) {
      buf[warp][lane] = (blockIdx.x + 1) * (warp + 1) + lane;
      if constexpr (V == kAlignedAll) __syncthreads();
      else bar_sync(V == kFull ? kThreads : kPart);
      return;
    }
    // the exception warp, at its own barrier instruction
    if constexpr (V == kSplit || V == kFull) {
      bar_sync(V == kFull ? kThreads : kPart);
    } else if constexpr (V == kAlignedAll) {
      __syncthreads();
    } else {  // kLoop, kBarrierLoop: the kernel's form
      const int n = __ldg(trip);
      bool here = false;
      for (int c = 0; c < n || !here; ++c) {
        int v = 0;
        if (lane < n * 7) v = __ldg(vals + lane);  // lane-divergent load
        acc += v & 0;
        if (!here) {
          if constexpr (V == kLoop) bar_sync(kPart); else barrier_sync(kPart);
          here = true;
        }
      }
    }
  }
  int s = acc;
  for (int w = 0; w < kCompute; ++w) s += buf[w][lane];
  out[blockIdx.x * 32 + lane] = s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sync_probe same|split|loop|full|aligned_all|barrier_loop [blocks]\n");
    return 2;
  }
  const std::string v = argv[1];
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 4;
  int *trip, *vals, *out, *sink;
  CK(cudaMalloc(&trip, sizeof(int)));
  CK(cudaMalloc(&vals, 64 * sizeof(int)));
  CK(cudaMalloc(&out, blocks * 32 * sizeof(int)));
  CK(cudaMalloc(&sink, sizeof(int)));
  const int one = 1;
  std::vector<int> hv(64, 3);
  CK(cudaMemcpy(trip, &one, sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(vals, hv.data(), 64 * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(out, 0xff, blocks * 32 * sizeof(int)));
  if (v == "same") probe<kSame><<<blocks, kThreads>>>(trip, vals, out, sink);
  else if (v == "split") probe<kSplit><<<blocks, kThreads>>>(trip, vals, out, sink);
  else if (v == "loop") probe<kLoop><<<blocks, kThreads>>>(trip, vals, out, sink);
  else if (v == "full") probe<kFull><<<blocks, kThreads>>>(trip, vals, out, sink);
  else if (v == "aligned_all") probe<kAlignedAll><<<blocks, kThreads>>>(trip, vals, out, sink);
  else if (v == "barrier_loop") probe<kBarrierLoop><<<blocks, kThreads>>>(trip, vals, out, sink);
  else {
    std::fprintf(stderr, "sync_probe: unknown variant '%s'\n", v.c_str());
    return 2;
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<int> h(blocks * 32);
  CK(cudaMemcpy(h.data(), out, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int l = 0; l < 32; ++l) {
      int want = 0;
      for (int w = 0; w < kCompute; ++w) want += (b + 1) * (w + 1) + l;
      if (h[b * 32 + l] != want) {
        std::printf("%s WRONG: block %d lane %d: %d, expected %d\n", v.c_str(), b, l, h[b * 32 + l], want);
        return 1;
      }
    }
  std::printf("%s ok (%d blocks)\n", v.c_str(), blocks);
  return 0;
}
