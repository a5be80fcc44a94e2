// The router baseline's first kernel: x.float(), as torch runs it before F.linear's FP32 SGEMM. Part of the
// baseline's timed call (it is what a torch user pays).
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"

namespace solgemm::judge::kernels {
namespace {

__global__ void cast_kernel(const uint16_t* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = gen::bf16_f32(x[i]);
}

}  // namespace

void bf16_to_f32(const uint16_t* d_x, float* d_y, int64_t n, cudaStream_t s) {
  const int64_t b = (n + 255) / 256;
  cast_kernel<<<static_cast<unsigned>(b < 4096 ? b : 4096), 256, 0, s>>>(d_x, d_y, n);
  cuda_check(cudaGetLastError(), "launching the router baseline's cast");
}

}  // namespace solgemm::judge::kernels
