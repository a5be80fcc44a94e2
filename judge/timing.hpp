// The timing method (judge-spec.md "Timing"), one place for all of it: a call is captured once into a CUDA
// graph; every timed replay is preceded, untimed, by the regeneration of x (a new seed) and a cold-L2 flush (a
// read of a buffer of >= 4x the L2, allocated before anything is timed); CUDA events bracket the graph launch
// alone. Replays are queued in batches and read back after one synchronisation, so the host never sits
// between a flush and its replay. The same method measures the fixed cost (a graph holding one empty kernel)
// and the practical ceiling (a streaming read of a given number of bytes, best of a few grid shapes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "device.hpp"

namespace solgemm::judge {

// An instantiated CUDA graph holding one recorded call.
class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& o) noexcept;
  Graph& operator=(Graph&& o) noexcept;
  ~Graph();
  // Records body(stream) (global capture mode: any forbidden call inside, e.g. a synchronisation or an
  // allocation, fails the capture) and instantiates it. Throws JudgeError naming `what`; an exception thrown by
  // body ends the capture and is rethrown.
  static Graph capture(cudaStream_t stream, const std::function<void(cudaStream_t)>& body, const std::string& what);
  void launch(cudaStream_t stream) const;
  bool valid() const { return exec_ != nullptr; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

class Bench {
 public:
  // Allocates the flush buffer (max(flush_bytes, 4 x L2)); create the Bench before any other buffer.
  Bench(cudaStream_t stream, int sms, int64_t l2_bytes, size_t flush_bytes);
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;
  ~Bench();
  // Allocates the buffer the streaming read reads (call once, before anything is timed).
  void reserve_read(size_t bytes);

  // One timed replay: the graph, and the seed x is regenerated with before it.
  struct Replay {
    const Graph* graph;
    uint64_t x_seed;
  };
  using Regenerate = std::function<void(uint64_t x_seed, cudaStream_t stream)>;
  // Times every replay in order (regenerate, flush, event, launch, event); returns microseconds, raw.
  std::vector<double> time(const std::vector<Replay>& replays, const Regenerate& regen);

  // Median replay time of a graph holding one empty kernel (timed as above).
  double fixed_cost_us(int replays, const Regenerate& regen);
  // Practical ceiling: best (over a few grid shapes) median time of a streaming read of `bytes`, minus
  // `fixed_us`. bytes must be <= the reserved read buffer.
  double read_ceiling_us(size_t bytes, double fixed_us, int replays, const Regenerate& regen);

  size_t flush_bytes() const { return flush_.bytes(); }

 private:
  cudaStream_t stream_;
  int sms_;
  DeviceBuffer flush_, read_, sink_;
  std::vector<cudaEvent_t> events_;
};

}  // namespace solgemm::judge
