// Host helpers of the TMA-fed families (wide, stream): a 2-D BF16 tensor map (128B swizzle, zero fill outside), a
// kernel's dynamic shared-memory limit, and how many of its CTAs the device holds at once.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <fmt/format.h>

#include "kernels.hpp"

namespace solgemm::kernels {

CUtensorMap bf16_tensor_map(const void* base, int64_t inner, int64_t outer, int box_inner, int box_outer,
                            const char* who) {
  using Encode = PFN_cuTensorMapEncodeTiled_v12000;
  static const Encode encode = [] {
    RelaxedCapture relaxed;
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<Encode>(fn);
  }();
  if (encode == nullptr) throw Error(fmt::format("solgemm: {}: the driver has no cuTensorMapEncodeTiled", who));
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(inner), static_cast<cuuint64_t>(outer)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(inner) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_inner), static_cast<cuuint32_t>(box_outer)};
  const cuuint32_t estr[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, estr,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(fmt::format("solgemm: {}: cuTensorMapEncodeTiled failed ({}) for {} x {} (box {} x {})", who,
                            static_cast<int>(r), outer, inner, box_outer, box_inner));
  return map;
}

bool set_dynamic_smem(const void* kernel, int bytes) {
  RelaxedCapture relaxed;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) == cudaSuccess;
}

int64_t resident_ctas(const void* kernel, int threads, int smem_bytes) {
  RelaxedCapture relaxed;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<int64_t>(sms) * per_sm;
}

}  // namespace solgemm::kernels
