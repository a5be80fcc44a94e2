// Host-side CUDA helpers (see device.hpp).
#include "device.hpp"

#include <utility>

#include <fmt/format.h>

namespace solgemm::judge {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw JudgeError(fmt::format("CUDA error while {}: {}", what, cudaGetErrorString(e)));
}

DeviceBuffer::DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
  const cudaError_t e = cudaMalloc(&p_, bytes ? bytes : 1);
  if (e != cudaSuccess) {
    p_ = nullptr;
    throw JudgeError(fmt::format("cannot allocate {:.1f} MB of GPU memory for {}: {}", bytes / 1e6, what,
                                 cudaGetErrorString(e)));
  }
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

Stream::Stream() { cuda_check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "creating a stream"); }
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}
void Stream::sync() const { cuda_check(cudaStreamSynchronize(s_), "synchronising the judge's stream"); }

GpuInfo open_gpu() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw JudgeError(fmt::format("no CUDA GPU: {}", cudaGetErrorString(e)));
  }
  if (count < 1) throw JudgeError("no CUDA GPU: the driver reports 0 devices");
  cuda_check(cudaSetDevice(0), "selecting GPU 0");
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, 0), "reading the GPU's properties");
  GpuInfo g;
  g.name = p.name;
  g.sms = p.multiProcessorCount;
  g.cc = fmt::format("{}.{}", p.major, p.minor);
  g.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  int v = 0;
  cuda_check(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0), "reading the SM clock");
  g.sm_clock_mhz = v / 1000;
  cuda_check(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, 0), "reading the memory clock");
  g.mem_clock_mhz = v / 1000;
  cuda_check(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0), "reading the L2 size");
  g.l2_bytes = v;
  cuda_check(cudaDriverGetVersion(&g.driver_version), "reading the driver version");
  cuda_check(cudaRuntimeGetVersion(&g.runtime_version), "reading the runtime version");
  if (p.major != 9)
    throw JudgeError(fmt::format("GPU 0 is a {} (compute capability {}); solgemm is built for sm_90a (Hopper)",
                                 g.name, g.cc));
  return g;
}

}  // namespace solgemm::judge
