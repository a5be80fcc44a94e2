// Router family (FP32 weights as hi + lo): not implemented yet; the plan table does not select it.
#include "kernels.hpp"

namespace solgemm::kernels {
void launch_router(const Config&, const HiLoView&, const __nv_bfloat16*, int64_t, float*, int64_t,
                   cudaStream_t) {
  throw Error("solgemm: router kernel family is not built yet");
}
}  // namespace solgemm::kernels
