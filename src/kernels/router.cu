// Router launcher: FP32 weights stored as BF16 hi + lo (or hi + lo + lo2, exact), FP32 out, any m.
//
// Idea and roofline: the same skinny family (skinny_family.cuh) with the HiLo weight source: two (three)
// raw BF16 matrices in the same fragment order, one MMA per term into separate FP32 accumulators,
// out = acc_hi + acc_lo * 2^-8 (+ acc_lo2 * 2^-16), combined per warp before the fixed-order reduction.
// 256 x 8192 gives only 16 row tiles, so K is split across CTAs (reduced in a fixed order through a cluster's
// distributed shared memory when the grid fits as clusters, else a global workspace; skinny_family.cuh) plus
// warps along K inside each CTA. Bytes: 8.4 MB (hi + lo) -> floor ~1.3 + 1.8 us; the anchors measure 3.17 us.
// m > 8 * n_tiles: the grid's y dimension walks 8 * n_tiles-token chunks (weights re-read from L2); the plan sends
// the 256 x 8192 router's verify batches (65..256 tokens) to the wide family's hi + lo source instead (wide.cu).
// Compiled variants: {HiLo, HiLoExact} x n_tiles {1, 2, 4}, each with the workspace and the cluster reduction
// (HiLo x 8, 64-token chunks, only in the bench).
#include "kernels.hpp"
#include "family_dispatch.cuh"

namespace solgemm::kernels {

void launch_router(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                   int64_t rows, cudaStream_t stream) {
  family::router_dispatch<family::kLibrary>(cfg, w, x, m, out, rows, stream);
}

}  // namespace solgemm::kernels
