// Host helpers of the TMA-fed families (wide, stream): a 2-D BF16 tensor map (128B swizzle, zero fill outside), a
// kernel's dynamic shared-memory limit, and how many of its CTAs the device holds at once.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <fmt/format.h>

#include <string>

#include "kernels.hpp"

namespace solgemm::kernels {

CUtensorMap tensor_map(const void* base, int rank, const uint64_t* dims, const uint64_t* strides, const uint32_t* box,
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
  if (rank < 1 || rank > 5) throw Error(fmt::format("solgemm: {}: tensor map of rank {} (1..5)", who, rank));
  CUtensorMap map;
  cuuint64_t d[5], st[4];
  cuuint32_t b[5], estr[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    estr[i] = 1;
    if (i + 1 < rank) st[i] = strides[i];
  }
  const CUresult r =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, static_cast<cuuint32_t>(rank), const_cast<void*>(base), d, st, b,
             estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::string shape;
    for (int i = 0; i < rank; ++i) shape += fmt::format("{}{} (box {})", i ? " x " : "", dims[i], box[i]);
    throw Error(fmt::format("solgemm: {}: cuTensorMapEncodeTiled failed ({}) for {}", who, static_cast<int>(r), shape));
  }
  return map;
}

CUtensorMap bf16_tensor_map(const void* base, int64_t inner, int64_t outer, int box_inner, int box_outer,
                            const char* who) {
  const uint64_t dims[2] = {static_cast<uint64_t>(inner), static_cast<uint64_t>(outer)};
  const uint64_t strides[1] = {static_cast<uint64_t>(inner) * 2};
  const uint32_t box[2] = {static_cast<uint32_t>(box_inner), static_cast<uint32_t>(box_outer)};
  return tensor_map(base, 2, dims, strides, box, who);
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
