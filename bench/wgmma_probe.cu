// wgmma_probe: what one m64nNk16 BF16 wgmma costs an SM when its A operand comes from registers decoded from the
// 12-bit code (perf-notes steps 56-59 measured ~140 SM cycles per register-A wgmma whatever N, in kernels that also
// streamed, waited and reduced; session 13's "next" asks for the pieces apart before a 12-bit kernel for m = 128 is
// built on it). No global memory in the loop: B is one 128B-swizzled tile of N tokens x 64 k in shared memory, each
// warp's 12-bit groups sit in shared memory (two, alternating), and every CTA (one per SM) runs `groups` groups of 4
// k steps per warpgroup. Modes:
//   ss        A and B from shared memory, one group in flight behind the current (wait 1): the tensor cores' rate
//   rs-const  A from registers, never rewritten (wait 1): register A without any decode
//   rs-dec    the group decoded from shared memory into A, its 4 wgmmas, wait 0 (the wide family's pattern)
//   rs-dec2   decoded into alternating A registers, wait 1 (ptxas may serialise it: its warning C7513)
//   dec-only  the decode alone, no wgmma
//   mma-dec   the skinny family's pattern for comparison (perf-notes step 147): each warp decodes its group and
//             multiplies it by the N / 8 token tiles with mma.sync m16n8k16, B fragments by ldmatrix.x4 from the same
//             swizzled x tile (two k steps per ldmatrix, as half_step in skinny_family.cuh)
// Output per (N, mode, warpgroups): SM cycles per group per warpgroup, per wgmma of the SM, and the TFLOP/s the
// whole GPU would do at that rate. Usage: wgmma_probe [groups, default 512] [1: N = 8..64 with mma-dec]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/decode.cuh"
#include "kernels/wgmma.cuh"

namespace k = solgemm::kernels;

namespace {

enum Mode { kSS = 0, kRsConst = 1, kRsDec = 2, kRsDec2 = 3, kDecOnly = 4, kMmaDec = 5 };
const char* kModeName[] = {"ss", "rs-const", "rs-dec", "rs-dec2", "dec-only", "mma-dec"};

__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int N, int MODE, int WG>
__global__ void __launch_bounds__(128 * WG, 1) probe(int groups, long long* cycles, float* sink) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  constexpr int kB = N * 128;             // B: N tokens x 64 k, 128B swizzle
  constexpr int kA = 64 * 128;            // A (ss mode): 64 rows x 64 k per warpgroup
  constexpr int kG = solgemm::format::kBytes12;  // one 12-bit group per warp, two of them
  uint8_t* b = smem;
  uint8_t* a_ss = smem + kB;
  uint8_t* grp = a_ss + WG * kA;
  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid % 32;
  const int total = kB + WG * kA + 4 * WG * 2 * kG;
  for (int i = tid * 4; i < total; i += blockDim.x * 4)  // small finite BF16 pairs, some variety for the decode
    *reinterpret_cast<uint32_t*>(smem + i) = 0x3C003C00u ^ ((i * 2654435761u) & 0x001F001Fu);
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  k::PackedView pv{};
  pv.base = 108;
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  uint32_t a[4][4], a2[4][4];
#pragma unroll
  for (int s = 0; s < 4; ++s)
#pragma unroll
    for (int j = 0; j < 4; ++j) a[s][j] = a2[s][j] = 0x3C003C00u + lane + s + j;
  const uint32_t b0 = static_cast<uint32_t>(__cvta_generic_to_shared(b));
  const uint32_t a0 = static_cast<uint32_t>(__cvta_generic_to_shared(a_ss + wg * kA));
  const uint8_t* my_grp = grp + warp * 2 * kG;
  __syncthreads();
  const long long t0 = clock64();
  uint32_t dx[4] = {0, 0, 0, 0};
  for (int g = 0; g < groups; ++g) {
    if constexpr (MODE == kRsDec || MODE == kDecOnly || MODE == kMmaDec) {
      k::GroupRegs<true> r;
      // (which of the two groups: not periodic in g, so that ptxas cannot hoist both groups' loads and decodes out
      // of the loop, as it did in mma-dec and dec-only with (g & 1): shared memory is not written in the loop)
      r.load_shared(my_grp + ((g ^ (g >> 3)) & 1) * kG, lane);
      r.decode(pv, a);
    }
    if constexpr (MODE == kRsDec2) {
      k::GroupRegs<true> r;
      r.load_shared(my_grp + (g & 1) * kG, lane);
      if (g & 1) r.decode(pv, a2);
      else r.decode(pv, a);
    }
    if constexpr (MODE == kMmaDec) {
      const uint32_t xsw = static_cast<uint32_t>(((lane >> 3) ^ (lane & 7)) * 16);
#pragma unroll
      for (int hs = 0; hs < 2; ++hs)
#pragma unroll
        for (int nt = 0; nt < N / 8; ++nt) {
          uint32_t b00, b01, b10, b11;
          const uint32_t xa = b0 + static_cast<uint32_t>((lane & 7) * 128 + nt * 1024) + (xsw ^ (hs * 64u));
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                       : "=r"(b00), "=r"(b01), "=r"(b10), "=r"(b11)
                       : "r"(xa));
          float(&d)[4] = *reinterpret_cast<float(*)[4]>(&acc[4 * nt]);
          mma16816(d, a[2 * hs], b00, b01);
          mma16816(d, a[2 * hs + 1], b10, b11);
        }
    } else if constexpr (MODE == kDecOnly) {
#pragma unroll
      for (int s = 0; s < 4; ++s)
#pragma unroll
        for (int j = 0; j < 4; ++j) dx[j] ^= a[s][j];  // (four independent integer chains, not an FADD chain)
    } else {
      k::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        if constexpr (MODE == kSS)
          k::wgmma_ss<N>(acc, k::sw128_desc(a0 + 32 * s), k::sw128_desc(b0 + 32 * s));
        else if constexpr (MODE == kRsDec2)
          k::wgmma_rs<N>(acc, (g & 1) ? a2[s] : a[s], k::sw128_desc(b0 + 32 * s));
        else
          k::wgmma_rs<N>(acc, a[s], k::sw128_desc(b0 + 32 * s));
      }
      k::wgmma_commit();
      if constexpr (MODE == kRsDec)
        k::wgmma_wait0();
      else
        k::wgmma_wait<1>();
    }
  }
  k::wgmma_wait0();
  const long long t1 = clock64();
  float s = __uint_as_float((dx[0] ^ dx[1] ^ dx[2] ^ dx[3]) & 0x3FFFFFFFu);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) s += acc[i];
  if (s == 1.2345f) sink[blockIdx.x] = s;  // keeps the work
  if (tid == 0) cycles[blockIdx.x] = t1 - t0;
}

template <int N, int MODE, int WG>
void run(int groups, int sms, long long* d_cycles, float* d_sink) {
  constexpr int smem = N * 128 + WG * 64 * 128 + 4 * WG * 2 * solgemm::format::kBytes12 + 1024;
  auto kern = probe<N, MODE, WG>;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int rep = 0; rep < 2; ++rep) kern<<<sms, 128 * WG, smem>>>(groups, d_cycles, d_sink);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("N %3d %-9s WG %d: %s\n", N, kModeName[MODE], WG, cudaGetErrorString(e));
    std::exit(1);
  }
  std::vector<long long> c(static_cast<size_t>(sms));
  cudaMemcpy(c.data(), d_cycles, sizeof(long long) * sms, cudaMemcpyDeviceToHost);
  std::sort(c.begin(), c.end());
  const double med = static_cast<double>(c[c.size() / 2]);
  const double per_group = med / groups;                  // one warpgroup's group of 4 k steps
  const double per_wgmma = med / (4.0 * groups * WG);     // of the SM, all warpgroups together
  int clk_khz = 0;
  cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0);
  const double flop = (MODE == kDecOnly) ? 0 : 2.0 * 64 * N * 16;  // (mma-dec: 4 warps' 16 rows = one wgmma's work)
  const double tflops = flop / per_wgmma * clk_khz * 1e3 * sms / 1e12;
  std::printf("N %3d %-9s WG %d: %8.1f cycles per group per warpgroup, %7.1f per wgmma of the SM, %6.0f TFLOP/s\n", N,
              kModeName[MODE], WG, per_group, per_wgmma, tflops);
}

template <int N, int WG>
void all_modes(int groups, int sms, long long* c, float* s) {
  run<N, kSS, WG>(groups, sms, c, s);
  run<N, kRsConst, WG>(groups, sms, c, s);
  run<N, kRsDec, WG>(groups, sms, c, s);
  run<N, kRsDec2, WG>(groups, sms, c, s);
  run<N, kDecOnly, WG>(groups, sms, c, s);
}

template <int N, int WG>
void small(int groups, int sms, long long* c, float* s) {
  run<N, kSS, WG>(groups, sms, c, s);
  run<N, kRsDec, WG>(groups, sms, c, s);
  run<N, kMmaDec, WG>(groups, sms, c, s);
  run<N, kDecOnly, WG>(groups, sms, c, s);
}

}  // namespace

int main(int argc, char** argv) {
  const int groups = argc > 1 ? std::max(16, std::atoi(argv[1])) : 512;
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  const int sms = p.multiProcessorCount;
  long long* c = nullptr;
  float* s = nullptr;
  cudaMalloc(&c, sizeof(long long) * sms);
  cudaMalloc(&s, sizeof(float) * sms);
  std::printf("%s, %d SMs, one CTA per SM, %d groups of 4 k steps per warpgroup (dense BF16 peak ~989 TFLOP/s)\n",
              p.name, sms, groups);
  if (argc > 2 && std::atoi(argv[2]) == 1) {  // the skinny family's token counts: wgmma against mma.sync (step 147)
    small<8, 2>(groups, sms, c, s);
    small<8, 4>(groups, sms, c, s);
    small<16, 2>(groups, sms, c, s);
    small<16, 4>(groups, sms, c, s);
    small<32, 2>(groups, sms, c, s);
    small<32, 4>(groups, sms, c, s);
    small<64, 4>(groups, sms, c, s);
    return 0;
  }
  all_modes<128, 1>(groups, sms, c, s);
  all_modes<128, 2>(groups, sms, c, s);
  all_modes<128, 3>(groups, sms, c, s);
  all_modes<128, 4>(groups, sms, c, s);
  all_modes<256, 1>(groups, sms, c, s);
  all_modes<256, 2>(groups, sms, c, s);
  return 0;
}
