// Skinny family (m <= 64, packed weights): not implemented yet; the plan table does not select it.
#include "kernels.hpp"

namespace solgemm::kernels {
void launch_skinny(const Config&, const PackedView&, const __nv_bfloat16*, int64_t, __nv_bfloat16*, int64_t,
                   cudaStream_t) {
  throw Error("solgemm: skinny kernel family is not built yet");
}
}  // namespace solgemm::kernels
