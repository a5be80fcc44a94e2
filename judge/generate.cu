// GPU generation of the judge's data: weights once per run, x before every call (untimed). One thread per
// element, grid-stride; every value is gen.hpp's pure function of its position, so the launch shape does not
// matter and the same seed gives the same data.
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"

namespace solgemm::judge::kernels {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 8192 ? (b > 0 ? b : 1) : 8192);
}

__global__ void weights_kernel(gen::WeightSpec spec, int64_t total, void* W) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint32_t b = gen::weight_bits(spec, i / spec.k, i % spec.k);
    if (spec.fp32)
      static_cast<uint32_t*>(W)[i] = b;
    else
      static_cast<uint16_t*>(W)[i] = static_cast<uint16_t>(b >> 16);
  }
}

__global__ void x_kernel(uint64_t seed, int64_t m, int64_t k, uint16_t* x) {
  const int64_t total = m * k;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = gen::x_bits(seed, k, i / k, i % k);
}

}  // namespace

void generate_weights(const gen::WeightSpec& spec, int64_t rows, void* d_W, cudaStream_t s) {
  const int64_t total = rows * spec.k;
  weights_kernel<<<blocks_for(total), kThreads, 0, s>>>(spec, total, d_W);
  cuda_check(cudaGetLastError(), "launching the weight generator");
}

void generate_x(uint64_t seed, int64_t m, int64_t k, uint16_t* d_x, cudaStream_t s) {
  x_kernel<<<blocks_for(m * k), kThreads, 0, s>>>(seed, m, k, d_x);
  cuda_check(cudaGetLastError(), "launching the x generator");
}

}  // namespace solgemm::judge::kernels
