// mma.sync m16n8k16 (BF16 in, FP32 accumulate), shared by the skinny family (skinny_family.cuh) and the simt family's
// BF16 rows (simt.cu). PTX ISA: warp-level matrix multiply-accumulate; a = A fragment (16 x 16, row), b0, b1 = B
// fragment (16 x 8, col), d += a b.
#pragma once

#include <cstdint>

namespace solgemm::kernels::family {

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace solgemm::kernels::family
