// l2_probe: how fast every SM can read the same few MB from L2 at once (perf-notes step 80). A 12-bit wgmma kernel
// for the verify batches (step 79) would have each CTA read x's slice for its K range from L2: at m = 128 and 128
// weight rows per CTA the pooler's CTAs together read ~64 MB of x from L2 while ~50 MB of weights stream from HBM.
// Each of `ctas` CTAs (1024 threads) reads `bytes` of one shared buffer (16-byte loads, 4 in flight per thread),
// after a warm-up that leaves the buffer in L2; events around each launch, median of 20; the aggregate rate is
// ctas x bytes over the time. For comparison, the same reads from a buffer of ctas x bytes (each CTA its own
// slice, cold: HBM). Times include the launch (a few us): rough rates. Usage: l2_probe
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

template <int U>
__global__ void __launch_bounds__(1024) read_slice(const uint4* __restrict__ p, size_t n16, size_t stride16,
                                                   unsigned* sink) {
  const uint4* q = p + blockIdx.x * stride16;
  unsigned acc = 0;
  size_t i = threadIdx.x;
  for (; i + (U - 1) * 1024 < n16; i += U * 1024) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcg(q + i + u * 1024);
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].w;
  }
  for (; i < n16; i += 1024) acc ^= __ldcg(q + i).x;
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

__global__ void flush(const uint4* __restrict__ p, size_t n16, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n16;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    acc ^= p[i].x;
  if (acc == 0x12345678u) sink[0] = acc;
}

}  // namespace

int main() {
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  const int sms = p.multiProcessorCount;
  const size_t big = size_t{640} << 20;  // >= 132 slices of 4 MB
  uint4 *buf = nullptr, *fl = nullptr;
  unsigned* sink = nullptr;
  cudaMalloc(&buf, big);
  cudaMalloc(&fl, big);
  cudaMalloc(&sink, 4096 * 4);
  cudaMemset(buf, 1, big);
  cudaMemset(fl, 2, big);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::printf("%s, %d SMs; CTAs of 1024 threads; median of 20 launches\n", p.name, sms);
  // (per_sm CTAs per SM, U loads in flight per thread; the shared buffer read by every CTA, or each CTA its own
  // cold slice)
  for (int per_sm : {1, 2})
    for (int unroll : {4, 8})
      for (size_t mb : {1, 2, 4}) {
        const size_t bytes = mb << 20, n16 = bytes / 16;
        const int ctas = sms * per_sm;
        if (static_cast<size_t>(ctas) * bytes > big) continue;
        for (int shared = 1; shared >= 0; --shared) {
          std::vector<float> t;
          for (int r = 0; r < 22; ++r) {
            if (!shared) flush<<<sms * 4, 1024>>>(fl, big / 16, sink);  // cold: each CTA its own slice from HBM
            cudaEventRecord(e0);
            if (unroll == 4) read_slice<4><<<ctas, 1024>>>(buf, n16, shared ? 0 : n16, sink);
            else read_slice<8><<<ctas, 1024>>>(buf, n16, shared ? 0 : n16, sink);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms = 0;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r >= 2) t.push_back(ms * 1000.f);
          }
          std::sort(t.begin(), t.end());
          const float us = t[t.size() / 2];
          std::printf("%d CTA/SM, %d loads in flight, %zu MB per CTA, %s: %7.2f us, %6.2f TB/s aggregate (%5.1f GB/s "
                      "per SM)\n", per_sm, unroll, mb, shared ? "one shared buffer (L2)" : "own slices, cold (HBM)", us,
                      static_cast<double>(bytes) * ctas / (us * 1e-6) / 1e12,
                      static_cast<double>(bytes) * per_sm / (us * 1e-6) / 1e9);
        }
      }
  return 0;
}
