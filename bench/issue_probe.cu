// issue_probe: what does issuing bulk copies cost an SM, and does issuing from several warps at once help (perf-notes
// step 125)? The skinny family's producer warp copies one 1536-byte group per compute warp and stage, each lane its own
// address (a waterfall of ELECT / R2UR / UBLKCP: ~35 ns a copy, perf-notes step 44); a CTA whose whole run fits in its
// ring issues all of it in the first round, serially.
//
// Every CTA (one or two per SM) copies `copies` bulk copies of `bytes` each (its own cold region of the buffer: 16
// streams, each a contiguous run, as the family's warps) into shared memory, all on one mbarrier armed for the whole
// byte count at entry, issued by:
//   mode 0: lane 0 of warp 0, one copy after the other (uniform addresses);
//   mode 1: the 32 lanes of warp 0, lane L the copies L, L + 32, ... (the family's producer: a per-lane address);
//   mode 2: lane 0 of each of W warps, warp w the copies w, w + W, ...
// Reported: the kernel's time (graph replay after a 512 MB read, events, the empty-kernel graph subtracted, median),
// and over CTAs the median (max) SM cycles from entry to the issuing warps' last copy issued and to every byte landed.
// Usage: issue_probe [reps=40]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.cuh"
#include "kernels/async_copy.cuh"

namespace {

using namespace bench;  // NOLINT: the shared timing helpers

using solgemm::kernels::family::bulk_g2s;
using solgemm::kernels::family::mbar_arrive_expect_tx;
using solgemm::kernels::family::mbar_init;
using solgemm::kernels::family::mbar_wait;
using solgemm::kernels::family::smem_u32;

constexpr int kStreams = 16;

__global__ void __launch_bounds__(512, 1)
    issue_probe(const uint8_t* base, int copies, int bytes, int mode, int w_issue, long long* cyc) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const long long t0 = clock64();
  const uint32_t bar = smem_u32(smem), ring = bar + 128;
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) mbar_arrive_expect_tx(bar, static_cast<uint32_t>(copies) * bytes);
  __syncthreads();
  const uint8_t* region = base + static_cast<size_t>(blockIdx.x) * copies * bytes;
  const int per_stream = copies / kStreams;
  // copy i: stream i % 16, its (i / 16)-th piece; stream s a contiguous run of per_stream copies
  auto src = [&](int i) { return region + (static_cast<size_t>(i % kStreams) * per_stream + i / kStreams) * bytes; };
  long long t_issue = -1;
  if (mode == 0 && threadIdx.x == 0) {
    for (int i = 0; i < copies; ++i) bulk_g2s(ring + i * bytes, src(i), bytes, bar);
    t_issue = clock64();
  } else if (mode == 1 && warp == 0) {
    for (int i = lane; i < copies; i += 32) bulk_g2s(ring + i * bytes, src(i), bytes, bar);
    __syncwarp();
    t_issue = clock64();
  } else if (mode == 2 && warp < w_issue && lane == 0) {
    for (int i = warp; i < copies; i += w_issue) bulk_g2s(ring + i * bytes, src(i), bytes, bar);
    t_issue = clock64();
  }
  mbar_wait(bar, 0);
  const long long t_land = clock64();
  // the issuing threads' latest issue time, then the landing time (thread 0)
  __shared__ long long last_issue;
  if (threadIdx.x == 0) last_issue = 0;
  __syncthreads();
  if (t_issue >= 0) atomicMax(reinterpret_cast<unsigned long long*>(&last_issue), static_cast<unsigned long long>(t_issue - t0));
  __syncthreads();
  if (threadIdx.x == 0) {
    cyc[2 * blockIdx.x] = last_issue;
    cyc[2 * blockIdx.x + 1] = t_land - t0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Timer tm;
  tm.reps = argc > 1 ? std::atoi(argv[1]) : 40;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const float fixed = tm.fixed_cost();
  const size_t max_bytes = static_cast<size_t>(2 * sms) * 200 * 1024;
  uint8_t* buf;
  CK(cudaMalloc(&buf, max_bytes));
  CK(cudaMemset(buf, 3, max_bytes));
  long long* cyc;
  CK(cudaMalloc(&cyc, static_cast<size_t>(2 * sms) * 2 * sizeof(long long)));
  CK(cudaFuncSetAttribute(issue_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("# issue_probe: %s, %d SMs, SM clock %d MHz; cold L2, graph replay, fixed cost %.2f us subtracted\n\n",
              prop.name, sms, clock_khz / 1000, fixed);
  std::printf("| CTAs/SM | KB/CTA | copy B | copies | mode | us | GB/s per SM | issue cycles med (max) | landed cycles med (max) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  struct Mode {
    int mode, w;
    const char* name;
  };
  const Mode modes[] = {{0, 1, "1 lane"}, {1, 32, "1 warp, 32 lanes (producer)"}, {2, 4, "4 warps"},
                        {2, 8, "8 warps"}, {2, 16, "16 warps"}};
  for (int per_sm : {1, 2})
    for (int kb : {48, 96})
      for (int bytes : {1536, 3072, 6144, 24576}) {
        const int total = kb * 1024;
        const int copies = total / bytes;
        if (copies < kStreams || copies % kStreams != 0) continue;
        for (const Mode& md : modes) {
          const int grid = sms * per_sm;
          const size_t smem = 128 + static_cast<size_t>(total);
          auto go = [&] {
            issue_probe<<<grid, 512, smem, tm.s>>>(buf, copies, bytes, md.mode, md.w, cyc);
          };
          go();
          CK(cudaStreamSynchronize(tm.s));
          CK(cudaGetLastError());
          const float us = tm.time(go) - fixed;
          std::vector<long long> h(static_cast<size_t>(grid) * 2);
          CK(cudaMemcpy(h.data(), cyc, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
          std::vector<long long> is, ld;
          for (int c = 0; c < grid; ++c) {
            is.push_back(h[2 * c]);
            ld.push_back(h[2 * c + 1]);
          }
          std::sort(is.begin(), is.end());
          std::sort(ld.begin(), ld.end());
          std::printf("| %d | %d | %d | %d | %s | %.2f | %.1f | %lld (%lld) | %lld (%lld) |\n", per_sm, kb, bytes, copies,
                      md.name, us, per_sm * total / 1e3 / us, is[is.size() / 2], is.back(), ld[ld.size() / 2], ld.back());
        }
      }
  return 0;
}
