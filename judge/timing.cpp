// Graph capture, cold-L2 replay timing, fixed cost and streaming-read ceiling (see timing.hpp).
#include "timing.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "kernels.hpp"
#include "stats.hpp"

namespace solgemm::judge {

Graph::Graph(Graph&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
Graph& Graph::operator=(Graph&& o) noexcept {
  if (this != &o) {
    if (exec_) cudaGraphExecDestroy(exec_);
    exec_ = std::exchange(o.exec_, nullptr);
  }
  return *this;
}
Graph::~Graph() {
  if (exec_) cudaGraphExecDestroy(exec_);
}

Graph Graph::capture(cudaStream_t stream, const std::function<void(cudaStream_t)>& body, const std::string& what) {
  const cudaError_t begin = cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
  if (begin != cudaSuccess)
    throw JudgeError(fmt::format("cannot start capturing {}: {}", what, cudaGetErrorString(begin)));
  cudaGraph_t g = nullptr;
  try {
    body(stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &g);
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    throw;
  }
  const cudaError_t end = cudaStreamEndCapture(stream, &g);
  if (end != cudaSuccess || !g) {
    if (g) cudaGraphDestroy(g);
    cudaGetLastError();
    throw JudgeError(fmt::format("capturing {} into a CUDA graph failed: {} (the call must be graph-safe: no "
                                 "synchronisation, no allocation)",
                                 what, cudaGetErrorString(end)));
  }
  Graph out;
  const cudaError_t inst = cudaGraphInstantiate(&out.exec_, g, 0);
  cudaGraphDestroy(g);
  if (inst != cudaSuccess) {
    out.exec_ = nullptr;
    throw JudgeError(fmt::format("instantiating the graph of {} failed: {}", what, cudaGetErrorString(inst)));
  }
  return out;
}

void Graph::launch(cudaStream_t stream) const { cuda_check(cudaGraphLaunch(exec_, stream), "launching a graph"); }

Bench::Bench(cudaStream_t stream, int sms, int64_t l2_bytes, size_t flush_bytes) : stream_(stream), sms_(sms) {
  const size_t fb = std::max(flush_bytes, static_cast<size_t>(4 * l2_bytes));
  flush_ = DeviceBuffer((fb + 15) / 16 * 16, "the L2 flush buffer");
  cuda_check(cudaMemsetAsync(flush_.get(), 1, flush_.bytes(), stream_), "filling the flush buffer");
  sink_ = DeviceBuffer(1 << 20, "the read sink");
  cuda_check(cudaStreamSynchronize(stream_), "filling the flush buffer");
}

Bench::~Bench() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void Bench::reserve_read(size_t bytes) {
  read_ = DeviceBuffer((bytes + 15) / 16 * 16, "the streaming-read buffer");
  cuda_check(cudaMemsetAsync(read_.get(), 3, read_.bytes(), stream_), "filling the streaming-read buffer");
  cuda_check(cudaStreamSynchronize(stream_), "filling the streaming-read buffer");
}

std::vector<double> Bench::time(const std::vector<Replay>& replays, const Regenerate& regen) {
  constexpr size_t kBatch = 256;  // replays queued between two synchronisations
  if (events_.empty()) {
    events_.resize(2 * kBatch);
    for (cudaEvent_t& e : events_) cuda_check(cudaEventCreate(&e), "creating events");
  }
  std::vector<double> us;
  us.reserve(replays.size());
  for (size_t b0 = 0; b0 < replays.size(); b0 += kBatch) {
    const size_t nb = std::min(kBatch, replays.size() - b0);
    for (size_t i = 0; i < nb; ++i) {
      const Replay& r = replays[b0 + i];
      regen(r.x_seed, stream_);
      kernels::flush_l2(flush_.get(), flush_.bytes(), sink_.as<unsigned>(), sms_, stream_);
      cuda_check(cudaEventRecord(events_[2 * i], stream_), "recording an event");
      r.graph->launch(stream_);
      cuda_check(cudaEventRecord(events_[2 * i + 1], stream_), "recording an event");
    }
    cuda_check(cudaStreamSynchronize(stream_), "waiting for timed replays");
    for (size_t i = 0; i < nb; ++i) {
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "reading events");
      us.push_back(1000.0 * ms);
    }
  }
  return us;
}

double Bench::fixed_cost_us(int replays, const Regenerate& regen) {
  const Graph g = Graph::capture(stream_, [](cudaStream_t s) { kernels::empty_kernel(s); }, "the empty kernel");
  std::vector<Replay> r(static_cast<size_t>(replays), Replay{&g, 0});
  for (size_t i = 0; i < r.size(); ++i) r[i].x_seed = i;
  time(std::vector<Replay>(r.begin(), r.begin() + std::min<std::ptrdiff_t>(20, replays)), regen);  // warm-up
  return median(time(r, regen));
}

double Bench::read_ceiling_us(size_t bytes, double fixed_us, int replays, const Regenerate& regen) {
  if (bytes > read_.bytes()) throw JudgeError("read_ceiling_us: more bytes than the read buffer holds");
  double best = 0;
  bool first = true;
  for (int per_sm : {1, 2, 4})
    for (int threads : {256, 512, 1024}) {
      if (per_sm * threads > 2048) continue;
      const int blocks = sms_ * per_sm;
      const Graph g = Graph::capture(
          stream_, [&](cudaStream_t s) { kernels::stream_read(read_.get(), bytes, blocks, threads, sink_.as<unsigned>(), s); },
          "the streaming read");
      std::vector<Replay> r(static_cast<size_t>(replays), Replay{&g, 0});
      for (size_t i = 0; i < r.size(); ++i) r[i].x_seed = i;
      time(std::vector<Replay>(r.begin(), r.begin() + std::min<std::ptrdiff_t>(3, replays)), regen);  // warm-up
      const double t = median(time(r, regen));
      if (first || t < best) best = t;
      first = false;
    }
  return best - fixed_us;
}

}  // namespace solgemm::judge
