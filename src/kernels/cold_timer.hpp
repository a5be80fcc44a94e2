// Timing at prepare, the way calls are used: each call captured once into a CUDA graph on a private stream and
// replayed cold (a 256 MB read before each replay, events around the replay). Host code; the prepare-time tuners
// (vendor.cu's tune_vendor, tune_untuned.cpp) share it. A call is `bool call(cudaStream_t)`: it enqueues its work and
// says whether it could; one that cannot be captured or fails scores kNever.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "graph_capture.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::kernels {

// Reads `bytes` of `buf` on `stream` (evicts L2; vendor.cu).
void cold_flush(const void* buf, size_t bytes, unsigned* sink, cudaStream_t stream);

// A launch as a call to time: `launch(stream)` enqueues the work; one that throws solgemm::Error (a layout or tile the
// launcher cannot run) reports false, and so scores kNever.
template <class F>
auto timed_call(F launch) {
  return [launch](cudaStream_t s) {
    try {
      launch(s);
      return true;
    } catch (const Error&) {
      return false;
    }
  };
}

class ColdTimer {
 public:
  static constexpr float kNever = 1e30f;
  static constexpr size_t kFlushBytes = size_t{256} << 20;

  ColdTimer() {
    ok_ = cudaMalloc(&flush_, kFlushBytes) == cudaSuccess && cudaMalloc(&sink_, 64) == cudaSuccess &&
          cudaStreamCreateWithFlags(&ts_, cudaStreamNonBlocking) == cudaSuccess &&
          cudaEventCreate(&e0_) == cudaSuccess && cudaEventCreate(&e1_) == cudaSuccess &&
          cudaMemsetAsync(flush_, 1, kFlushBytes, ts_) == cudaSuccess && cudaStreamSynchronize(ts_) == cudaSuccess;
    cudaGetLastError();
  }
  ColdTimer(const ColdTimer&) = delete;
  ColdTimer& operator=(const ColdTimer&) = delete;
  ~ColdTimer() {
    if (ts_) cudaStreamSynchronize(ts_);
    if (e0_) cudaEventDestroy(e0_);
    if (e1_) cudaEventDestroy(e1_);
    if (ts_) cudaStreamDestroy(ts_);
    cudaFree(flush_);
    cudaFree(sink_);
    cudaGetLastError();
  }
  bool ok() const { return ok_; }
  cudaStream_t stream() const { return ts_; }

  // One cold run of `launch()` (true when it enqueued): the flush, then the launch between two events.
  template <class F>
  float cold_us(F&& launch) {
    cold_flush(flush_, kFlushBytes, sink_, ts_);
    cudaEventRecord(e0_, ts_);
    const bool ok = launch();
    cudaEventRecord(e1_, ts_);
    float ms = 0;
    const bool timed = cudaEventSynchronize(e1_) == cudaSuccess && cudaEventElapsedTime(&ms, e0_, e1_) == cudaSuccess;
    return ok && timed ? ms * 1000.f : kNever;
  }
  template <class F>
  cudaGraphExec_t graph(F&& call) {
    return capture_graph(ts_, call);
  }
  float replay_us(cudaGraphExec_t ge) {
    return cold_us([&] { return cudaGraphLaunch(ge, ts_) == cudaSuccess; });
  }
  static float median(std::vector<float>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? kNever : v[v.size() / 2];
  }
  // The median of `reps` cold replays after `warm` warm-up replays.
  template <class F>
  float time_median(F&& call, int warm, int reps) {
    cudaGraphExec_t ge = graph(call);
    if (!ge) return kNever;
    std::vector<float> v;
    for (int r = 0; r < warm + reps; ++r) {
      const float us = replay_us(ge);
      if (r >= warm) v.push_back(us);
    }
    cudaGraphExecDestroy(ge);
    cudaStreamSynchronize(ts_);
    cudaGetLastError();
    return median(v);
  }
  // `call_winner` against `call_default` in `pairs` interleaved pairs (order alternating, so that a drift of the
  // machine cancels): the median of the per-pair ratios winner / default. med (optional): the medians of the
  // default's and the winner's own times over the pairs.
  template <class FD, class FW>
  float paired_ratio(FD&& call_default, FW&& call_winner, int pairs = 15, std::pair<float, float>* med = nullptr) {
    cudaGraphExec_t gd = graph(call_default), gw = graph(call_winner);
    std::vector<float> v, vd, vw;
    if (gd && gw) {
      replay_us(gd);
      replay_us(gw);
      for (int r = 0; r < pairs; ++r) {
        float d, w;
        if (r & 1) {
          w = replay_us(gw);
          d = replay_us(gd);
        } else {
          d = replay_us(gd);
          w = replay_us(gw);
        }
        v.push_back(w / d);
        vd.push_back(d);
        vw.push_back(w);
      }
    }
    if (med) *med = {median(vd), median(vw)};
    if (gd) cudaGraphExecDestroy(gd);
    if (gw) cudaGraphExecDestroy(gw);
    cudaStreamSynchronize(ts_);
    cudaGetLastError();
    return v.empty() ? kNever : median(v);
  }

 private:
  bool ok_ = false;
  void* flush_ = nullptr;
  unsigned* sink_ = nullptr;
  cudaStream_t ts_ = nullptr;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
};

}  // namespace solgemm::kernels
