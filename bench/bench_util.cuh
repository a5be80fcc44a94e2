// Timing helpers shared by the benches (skinny_bench, stream_study): each call captured once into a CUDA graph
// and replayed cold (a 512 MB read before every replay), timed with events around the replay alone; the
// practical read ceiling (a plain 16-byte streaming read, best of a few grids, timed the same way).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench {

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));                 \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

__global__ void flush_read(const uint4* __restrict__ p, size_t n, unsigned* out) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}
__global__ void read_stream(const uint4* __restrict__ p, size_t n, unsigned* out) {
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(p + i + u * stride));
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) acc ^= p[i].x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}
__global__ void nop() {}

struct Timer {
  cudaStream_t s;
  cudaEvent_t a, b;
  uint4* flush;
  unsigned* sink;
  size_t flush_n = (512ull << 20) / 16;
  int sms = 132, reps = 100;
  Timer() {
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaMalloc(&flush, flush_n * 16));
    CK(cudaMemset(flush, 1, flush_n * 16));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  }
  template <class F>
  cudaGraphExec_t capture(F&& launch) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    launch();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphDestroy(g));
    return ge;
  }
  // One replay of `ge` after the flush read (and, if given, a replay of `pre` between them), timed alone: us.
  float once(cudaGraphExec_t ge, cudaGraphExec_t pre = nullptr) {
    flush_read<<<sms * 4, 1024, 0, s>>>(flush, flush_n, sink);
    if (pre) CK(cudaGraphLaunch(pre, s));
    CK(cudaEventRecord(a, s));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.f;
  }
  float median(cudaGraphExec_t ge, int n) {
    std::vector<float> t;
    for (int r = 0; r < n; ++r) t.push_back(once(ge));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  // Timeline of one cold launch (skinny_family.cuh stamp()): `launch(trace)` runs the kernel with stamps into
  // `trace` (ctas x 8). Per stamp, over 7 cold launches: the median of (min, median, max over CTAs) in us after
  // the earliest CTA entry.
  template <class F>
  void timeline(const char* label, int ctas, unsigned long long* trace, F&& launch) {
    std::vector<std::array<double, 3>> acc[8];
    std::vector<unsigned long long> h(static_cast<size_t>(ctas) * 8);
    bool cluster = false;
    for (int r = 0; r < 7; ++r) {
      CK(cudaMemset(trace, 0, h.size() * 8));
      flush_read<<<sms * 4, 1024, 0, s>>>(flush, flush_n, sink);
      launch(trace);
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(h.data(), trace, h.size() * 8, cudaMemcpyDeviceToHost));
      unsigned long long t0 = ~0ull;
      for (int c = 0; c < ctas; ++c)
        if (h[c * 8]) t0 = std::min(t0, h[c * 8]);
      for (int c = 0; c < ctas; ++c) cluster |= (h[c * 8 + 7] & 0xFF) == 3;
      // TIMELINE_DUMP=1: every CTA of the first launch (its SM where the kernel stamps it: skinny_family.cuh
      // stamp_sm), us after the earliest entry: entry, main loop done, output written.
      if (r == 0 && std::getenv("TIMELINE_DUMP")) {
        auto us = [&](int c, int i) { return h[c * 8 + i] >= t0 && h[c * 8 + i] > 2 ? (h[c * 8 + i] - t0) * 1e-3 : -1.0; };
        for (int c = 0; c < ctas; ++c)
          std::printf("cta %-28s %5d sm %4lld entry %6.2f loop %6.2f out %6.2f\n", label, c,
                      static_cast<long long>(h[c * 8 + 7] >> 16) - 1, us(c, 0), us(c, 3), us(c, 6));
      }
      for (int i = 1; i < 7; ++i) {
        std::vector<double> v;
        for (int c = 0; c < ctas; ++c)
          if (h[c * 8 + i] > 2 && h[c * 8 + i] >= t0) v.push_back((h[c * 8 + i] - t0) * 1e-3);
        if (v.empty()) continue;
        std::sort(v.begin(), v.end());
        acc[i].push_back({v.front(), v[v.size() / 2], v.back()});
      }
    }
    std::printf("timeline %-28s%s", label, cluster ? " [cluster]" : "");
    const char* names[8] = {"", "x", "g0", "loop", "local", "count/exc", "out", ""};
    for (int i = 1; i < 7; ++i) {
      if (acc[i].empty()) continue;
      double q[3];
      for (int j = 0; j < 3; ++j) {
        std::vector<double> v;
        for (auto& a3 : acc[i]) v.push_back(a3[j]);
        std::sort(v.begin(), v.end());
        q[j] = v[v.size() / 2];
      }
      std::printf(" | %s %.2f/%.2f/%.2f", names[i], q[0], q[1], q[2]);
    }
    std::printf("\n");
  }
  // The fixed cost: median of an empty-kernel graph timed the same way (printed; subtracted from every figure).
  float fixed_cost() {
    cudaGraphExec_t g = capture([&] { nop<<<1, 32, 0, s>>>(); });
    for (int i = 0; i < 20; ++i) median(g, 5);
    const float f = median(g, 300);
    CK(cudaGraphExecDestroy(g));
    std::printf("fixed cost (empty-kernel graph, cold): %.2f us (subtracted below)\n", f);
    return f;
  }
  template <class F>
  float time(F&& launch) {
    cudaGraphExec_t ge = capture(launch);
    median(ge, 5);
    const float m = median(ge, reps);
    CK(cudaGraphExecDestroy(ge));
    return m;
  }
};

// A ring trace (skinny_bench SKINNY_RING, stream_study STUDY_RING): per ring iteration i < iters, the medians over
// `ctas` CTAs of stamp(cta, i, kind) - entry(cta) in us (kind 3 the producer's refill allowed, 0 its copies issued,
// 1 warp 0 and 2 the last compute warp past the stage's full barrier); unset stamps (0) are left out.
template <class Entry, class Stamp>
void print_ring_trace(int ctas, int iters, Entry&& entry, Stamp&& stamp) {
  for (int i = 0; i < iters; ++i) {
    double med[4];
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<double> d;
      for (int cta = 0; cta < ctas; ++cta) {
        const unsigned long long t0 = entry(cta), t = stamp(cta, i, kind);
        if (t0 && t) d.push_back((static_cast<double>(t) - static_cast<double>(t0)) * 1e-3);
      }
      std::sort(d.begin(), d.end());
      med[kind] = d.empty() ? -1.0 : d[d.size() / 2];
    }
    std::printf("  %2d: %6.2f %6.2f %6.2f %6.2f\n", i, med[3], med[0], med[1], med[2]);
  }
}

float ceiling(Timer& tm, const uint4* data, size_t bytes) {
  float best = 1e9f;
  for (int bm : {1, 2, 3, 4})
    for (int thr : {512, 1024}) {
      const float t = tm.time([&] { read_stream<<<tm.sms * bm, thr, 0, tm.s>>>(data, bytes / 16, tm.sink); });
      best = std::min(best, t);
    }
  return best;
}

}  // namespace bench
