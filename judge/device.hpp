// Small host-side CUDA helpers of the judge: the judge's error type, a CUDA status check that throws it, an owned
// device buffer, an owned stream, and what the judge reports about the GPU. Plain C++ (no kernels here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace solgemm::judge {

// Every problem the judge reports (bad input, CUDA errors): one line saying what is wrong.
class JudgeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// Bad command-line input (unknown name, out-of-range value).
class UsageError : public JudgeError {
 public:
  using JudgeError::JudgeError;
};

// Throws JudgeError("CUDA error while <what>: <reason>") unless e == cudaSuccess.
void cuda_check(cudaError_t e, const char* what);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, const char* what);  // cudaMalloc, throws JudgeError naming `what` when it fails
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  void* get() const { return p_; }
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
 public:
  Stream();  // non-blocking stream (graph capture needs a stream other than the legacy default)
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  cudaStream_t get() const { return s_; }
  void sync() const;

 private:
  cudaStream_t s_ = nullptr;
};

struct GpuInfo {
  std::string name;
  int sms = 0;
  int sm_clock_mhz = 0;   // peak (cudaDevAttrClockRate)
  int mem_clock_mhz = 0;  // peak (cudaDevAttrMemoryClockRate)
  int64_t l2_bytes = 0;
  int64_t memory_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  std::string cc;         // "9.0"
};
// Selects device 0 and describes it. Throws JudgeError("no CUDA GPU: ...") when none is usable.
GpuInfo open_gpu();

}  // namespace solgemm::judge
