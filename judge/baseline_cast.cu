// The router baseline's first kernel: x.float(), as torch runs it before F.linear's FP32 SGEMM. Part of the
// baseline's timed call (it is what a torch user pays).
//
// torch's x.float() on CUDA is a dtype-converting copy, launched as at::native::unrolled_elementwise_kernel with
// LoadWithCast / StoreWithCast (128 threads per block, 4 elements per thread, every element read and written through
// c10's switch over the run-time dtypes). torch_cast.cuh writes that kernel out, and this launches it as
// launch_unrolled_kernel does. History (issue 2; perf-notes steps 52, 139, 162): a plain grid-stride cast made the
// router baseline 7-18% faster than torch's F.linear at m <= 32; a replica with torch's launch shape and a 9-dtype
// switch was still ~0.6-1 us faster than torch's cast cold (4.0-4.4 against 4.9-5.3 us under ncu), and one with torch's
// dtype lists but int dtypes 0.6-1 us slower: their SASS had jump tables where torch's has none. The written-out kernel
// compiles to torch's structure (a compare tree, 1896 against 1864 instructions) and times as torch's cast does:
// 4.9-5.6 us at m = 1 against torch's 4.9-5.4, 5.2-5.5 against 5.3-5.6 at m = 8 (step 162).
#include <cstdint>

#include "device.hpp"
#include "kernels.hpp"
#include "torch_cast.cuh"

namespace solgemm::judge::kernels {

void bf16_to_f32(const uint16_t* d_x, float* d_y, int64_t n, cudaStream_t s) {
  namespace tc = torch_cast;
  if (n <= 0) return;
  if (n > INT32_MAX) throw JudgeError("the router baseline's cast: more than 2^31 - 1 elements");
  const int64_t blocks = (n + tc::kBlockWorkSize - 1) / tc::kBlockWorkSize;
  tc::Data data{{reinterpret_cast<char*>(d_y), reinterpret_cast<char*>(const_cast<uint16_t*>(d_x))}};
  tc::unrolled_elementwise_kernel<<<static_cast<unsigned>(blocks), tc::kNumThreads, 0, s>>>(
      static_cast<int>(n), tc::Identity{}, data, {}, {}, tc::LoadWithCast{{tc::ScalarType::BFloat16}, {2}},
      tc::StoreWithCast{{tc::ScalarType::Float}, {4}});
  cuda_check(cudaGetLastError(), "launching the router baseline's cast");
}

}  // namespace solgemm::judge::kernels
