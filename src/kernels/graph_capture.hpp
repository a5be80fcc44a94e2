// One call captured into an instantiated CUDA graph, without throwing: for timing candidates that may fail to
// launch or to be captured (the vendor tuner, bench/lt_search).
#pragma once

#include <cuda_runtime.h>

namespace solgemm::kernels {

// `call(stream)` enqueues the work and returns whether it succeeded. The capture is thread-local (other threads'
// streams are unaffected). Returns nullptr, with the CUDA error state cleared, if anything fails.
template <class F>
cudaGraphExec_t capture_graph(cudaStream_t stream, F&& call) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  bool ok = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (ok) ok = call(stream);
  ok = cudaStreamEndCapture(stream, &g) == cudaSuccess && ok;
  ok = ok && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess;
  if (g) cudaGraphDestroy(g);
  if (!ok && ge) {
    cudaGraphExecDestroy(ge);
    ge = nullptr;
  }
  cudaGetLastError();
  return ge;
}

}  // namespace solgemm::kernels
