// ingest_probe: how many bytes per second can all SMs pull in through bulk copies when part of every stage is the
// same data for every CTA (a GEMM's x tile, L2-resident) and part is the CTA's own stream (its weights, from HBM)?
// And does TMA multicast of the common part to a cluster of 2 (each CTA copies half, both receive all) raise it?
//
// Question behind it (perf-notes step 80, 143): at 128 tokens the big layers' CTAs read as many x bytes from L2 as
// weight bytes (128 weight rows x 128 tokens per CTA), and step 80 measured only ~7 TB/s from L2 to all SMs with
// plain loads. If bulk copies ingest no faster, a verify kernel must read x fewer times (bigger row tiles, multicast);
// if much faster, cuBLAS's ~20 us for the pooler at m = 128 is not an L2 limit.
//
// Kernel: one CTA per SM, a producer warp and 4 consumer warps that only wait for a stage and release it; a ring of
// `stages` slots of (own + common) bytes; own: this CTA's contiguous slice of a cold buffer; common: the same `common
// region` bytes for every CTA, walked stage by stage (wrapping). Multicast (clusters of 2): the common part of a stage
// is copied half by each CTA with .multicast::cluster into both CTAs' slot; a slot is refilled when the consumers of
// both CTAs have released it (remote mbarrier arrivals).
// Stores beside the stream (perf-notes step 163): the consumers may also write `store_stage` bytes per stage and
// `store_after` bytes after the last stage to a workspace of their own (plain 16-byte stores, as a split-K kernel's FP32
// partials): does a split-K tail's 16.8 MB of partials cost as much when written during the stream as after it?
// Timed as the judge times calls (graph replay after a 512 MB read, events, the empty-kernel graph subtracted).
// Usage: ingest_probe [reps=40] [stores=0: 1 = step 163's cases only]
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "bench_util.cuh"
#include "kernels/async_copy.cuh"

namespace {

using namespace bench;                      // NOLINT: the shared timing helpers
using namespace solgemm::kernels::family;  // NOLINT: the mbarrier and bulk-copy helpers (async_copy.cuh)

constexpr int kConsumerWarps = 4;
constexpr int kPiece = 8192;  // bytes per bulk copy (a W or x box is 16 KB; pieces as the boxes' rows would be)

struct Args {
  const uint8_t* own;     // cold buffer: CTA c reads [c * own_per_cta, (c + 1) * own_per_cta)
  const uint8_t* common;  // common_bytes, read by every CTA
  size_t own_per_cta, common_bytes;
  int own_stage, common_stage, stages, n_iter, multicast;
  float4* ws;             // CTA c writes [c * ws_per_cta, ...) (16-byte units)
  int ws_per_cta;         // 16-byte units per CTA
  int store_stage, store_after;  // bytes per stage / after the loop, per CTA (multiples of 2 KB)
};

// The consumers' 128 threads write `bytes` of the CTA's workspace from unit u0 on (consecutive 2 KB per pass).
__device__ __forceinline__ void store_part(const Args& a, int u0, int bytes, float v) {
  float4* w = a.ws + static_cast<size_t>(blockIdx.x) * a.ws_per_cta;
  for (int u = static_cast<int>(threadIdx.x); u < bytes / 16; u += 32 * kConsumerWarps)
    w[(u0 + u) % a.ws_per_cta] = make_float4(v, v, v, v);
}

__device__ __forceinline__ void bulk_mc(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
}

__global__ void __launch_bounds__(32 * (kConsumerWarps + 1), 1) ingest(const Args a) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t bars = smem_u32(smem);  // full[s] at 8 s, empty[s] at 8 (32 + s)
  const uint32_t ring = bars + 1024;
  const int stage_bytes = a.own_stage + a.common_stage;
  uint32_t rank = 0, peer = 0;
  if (a.multicast) {
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    peer = rank ^ 1u;
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(bars + 8u * s, 1);
      mbar_init(bars + 8u * (32 + s), kConsumerWarps * (a.multicast ? 2 : 1));
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if (a.multicast) cluster_sync(); else __syncthreads();
  const size_t cta = blockIdx.x;
  if (warp == kConsumerWarps) {  // producer
    if (lane == 0)
      for (int it = 0; it < a.n_iter; ++it) {
        const int s = it % a.stages;
        if (it >= a.stages) mbar_wait(bars + 8u * (32 + s), static_cast<uint32_t>((it / a.stages - 1) & 1));
        const uint32_t full = bars + 8u * s, slot = ring + static_cast<uint32_t>(s * stage_bytes);
        mbar_arrive_expect_tx(full, static_cast<uint32_t>(stage_bytes));
        const uint8_t* own = a.own + cta * a.own_per_cta + static_cast<size_t>(it) * a.own_stage;
        for (int p = 0; p < a.own_stage; p += kPiece) bulk_g2s(slot + p, own + p, kPiece, full);
        // (four groups of CTAs on four slices of the common region: the K slices of a 4-way split)
        const size_t c0 = ((cta / (a.multicast ? 2 : 1) % 4 * a.n_iter + it) * static_cast<size_t>(a.common_stage)) % a.common_bytes;
        if (!a.multicast) {
          for (int p = 0; p < a.common_stage; p += kPiece)
            bulk_g2s(slot + a.own_stage + p, a.common + c0 + p, kPiece, full);
        } else {  // this CTA's half of the common part, to both CTAs of the cluster
          const int half = a.common_stage / 2;
          for (int p = 0; p < half; p += kPiece)
            bulk_mc(slot + a.own_stage + rank * half + p, a.common + c0 + rank * half + p, kPiece, full, 0x3);
        }
      }
  } else {  // consumers: wait, release (here and, with multicast, in the peer, whose copies also fill this slot)
    for (int it = 0; it < a.n_iter; ++it) {
      const int s = it % a.stages;
      mbar_wait(bars + 8u * s, static_cast<uint32_t>((it / a.stages) & 1));
      if (a.store_stage > 0) store_part(a, it * (a.store_stage / 16), a.store_stage, static_cast<float>(it));
      __syncwarp();
      if (lane == 0) {
        const uint32_t e = bars + 8u * (32 + s);
        mbar_arrive(e);
        if (a.multicast) {
          uint32_t re;
          asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(re) : "r"(e), "r"(peer));
          asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(re) : "memory");
        }
      }
    }
    if (a.store_after > 0) store_part(a, a.n_iter * (a.store_stage / 16), a.store_after, 1.f);
  }
  if (a.multicast) cluster_sync();  // (the peer's copies and arrivals target this CTA's shared memory)
}

}  // namespace

int main(int argc, char** argv) {
  Timer tm;  // (its SM count: tm.sms)
  tm.reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const float fixed = tm.fixed_cost();
  const int sms = tm.sms;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t own_per_cta = 512 * 1024;  // the pooler at m = 128: 64 MB of BF16 weights over ~128 SMs
  uint8_t *own, *common;
  CK(cudaMalloc(&own, own_per_cta * sms));
  CK(cudaMalloc(&common, 4u << 20));
  CK(cudaMemset(own, 3, own_per_cta * sms));
  CK(cudaMemset(common, 5, 4u << 20));
  const int ws_per_cta = 256 * 1024 / 16;  // 256 KB of 16-byte units per CTA
  float4* ws;
  CK(cudaMalloc(&ws, static_cast<size_t>(ws_per_cta) * 16 * sms));
  constexpr int kSmem = 1024 + 192 * 1024;
  CK(cudaFuncSetAttribute(ingest, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CK(cudaFuncSetAttribute(ingest, cudaFuncAttributeNonPortableClusterSizeAllowed, 0));
  std::printf("# ingest_probe: %s, %d SMs; one CTA per SM, own %zu KB per CTA (cold) + a common part (the same bytes for "
              "every CTA); cold L2, graph replay, fixed cost %.2f us subtracted\n\n",
              prop.name, sms, own_per_cta / 1024, fixed);
  std::printf("| own KB / stage | common KB / stage | common region MB | stages | multicast | stored KB / stage | "
              "stored KB after | CTAs | us | own TB/s | into SMs TB/s | common from L2 TB/s |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  struct Case {
    int own_kb, common_kb, region_mb, mc, store_stage_kb = 0, store_after_kb = 0;
  };
  const bool stores_only = argc > 2 && std::atoi(argv[2]) == 1;  // step 163's cases alone
  const Case all_cases[] = {{32, 0, 2, 0},  {0, 32, 2, 0},  {32, 32, 2, 0}, {32, 16, 2, 0}, {32, 8, 2, 0},
                            {32, 32, 2, 1}, {32, 16, 2, 1}, {0, 32, 2, 1},  {16, 16, 2, 0}, {16, 16, 2, 1}};
  // step 163: the m = 128 pooler's per-SM traffic (a 32 KB own stage for its 12-bit weights, 16 KB of x), with its
  // 128 KB of partials written after the loop, during it, or half and half; x twice (a two-tile CTA) with half the
  // partials during the loop; the partials alone; the first three again last (the machine's drift).
  const Case store_cases[] = {{32, 16, 2, 0, 0, 0}, {32, 16, 2, 0, 0, 128}, {32, 16, 2, 0, 8, 0},
                              {32, 16, 2, 0, 4, 64}, {32, 32, 2, 0, 4, 64}, {0, 0, 2, 0, 0, 128},
                              {32, 16, 2, 0, 0, 0},  {32, 16, 2, 0, 0, 128}, {32, 16, 2, 0, 8, 0}};
  const Case* cases = stores_only ? store_cases : all_cases;
  const int n_cases = static_cast<int>(stores_only ? std::size(store_cases) : std::size(all_cases));
  for (int ci = 0; ci < n_cases; ++ci) {
    const Case& c = cases[ci];
    Args a{};
    a.own = own;
    a.common = common;
    a.own_per_cta = own_per_cta;
    a.common_bytes = static_cast<size_t>(c.region_mb) << 20;
    a.own_stage = c.own_kb * 1024;
    a.common_stage = c.common_kb * 1024;
    a.ws = ws;
    a.ws_per_cta = ws_per_cta;
    a.store_stage = c.store_stage_kb * 1024;
    a.store_after = c.store_after_kb * 1024;
    const int stage = a.own_stage + a.common_stage;
    a.stages = stage > 0 ? std::min(32, 192 * 1024 / stage) : 1;
    // iterations: the own stream's length (512 KB), or as many stages of the common part alone (none: stores only)
    a.n_iter = a.own_stage > 0      ? static_cast<int>(own_per_cta / a.own_stage)
               : a.common_stage > 0 ? static_cast<int>(own_per_cta / a.common_stage)
                                    : 0;
    a.multicast = c.mc;
    const int grid = c.mc ? sms / 2 * 2 : sms;
    cudaLaunchConfig_t lc{};
    lc.gridDim = dim3(static_cast<unsigned>(grid));
    lc.blockDim = dim3(32 * (kConsumerWarps + 1));
    lc.dynamicSmemBytes = kSmem;
    lc.stream = tm.s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = c.mc ? 2 : 1;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    lc.attrs = attr;
    lc.numAttrs = 1;
    auto go = [&] { CK(cudaLaunchKernelEx(&lc, ingest, a)); };
    go();
    CK(cudaStreamSynchronize(tm.s));
    const float us = tm.time(go) - fixed;
    const double own_b = static_cast<double>(a.own_stage) * a.n_iter * grid;
    const double com_b = static_cast<double>(a.common_stage) * a.n_iter * grid;  // bytes landed in shared memory
    const double com_l2 = c.mc ? com_b / 2 : com_b;                              // bytes read from L2
    std::printf("| %d | %d | %d | %d | %s | %d | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", c.own_kb, c.common_kb,
                c.region_mb, a.stages, c.mc ? "2" : "-", c.store_stage_kb, c.store_after_kb, grid, us, own_b / us / 1e6,
                (own_b + com_b) / us / 1e6, com_l2 / us / 1e6);
  }
  return 0;
}
