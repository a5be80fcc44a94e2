// stream_study: how fast can a kernel stream its weights, by mechanism (perf-notes, session 4, step 18)?
//
// Every variant reads `bytes` cold bytes once, timed as skinny_bench times the family (bench_util.cuh: graph
// replay after a 512 MB read, events, median, empty-kernel graph subtracted):
//   read grid-stride     the judge's ceiling kernel (ld.global.nc 16 B, 4 loads in flight per thread)
//   read cta-chunk       the same loads, each CTA one contiguous chunk (the family's access pattern)
//   bulk s<streams> c<copy> S<stages>   one producer warp copies stages of `streams` copies of `copy` bytes
//       (cp.async.bulk, complete_tx on the stage's mbarrier) into a shared ring; `streams` consumer warps
//       wait for each stage, read a word of their slot and release it (no math). Stream w of CTA c is one
//       contiguous run of bytes. s16 c1536 is the skinny family's pooler ring (one 12-bit group per warp).
// Usage: stream_study [reps=60]. At 50 MB, on the skinny family's ring (family_ring below), instead of the table:
// STUDY_FILL=1 the rows on three fills of the buffer (is the rate data-dependent?); STUDY_MAP=1 three maps of the
// streams to CTAs (bulk_ring's `map`); STUDY_SMEM=1 the ring asking for 194-227 KB of shared memory (does the L1 /
// shared-memory split matter?); STUDY_TOUCH=1 consumers that read their slot; STUDY_RING=1 its ring trace (per
// iteration: refill allowed, copies issued, landed for warp 0 and the last warp); STUDY_NCU=1 one launch, for a
// profiler.
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

constexpr int kMaxS = 32;
constexpr int kRingOff = 1024;  // mbarriers first (2 x kMaxS x 8 B), the ring after them

using solgemm::kernels::family::smem_u32;
using solgemm::kernels::family::bulk_g2s;
using solgemm::kernels::family::mbar_arrive;
using solgemm::kernels::family::mbar_arrive_expect_tx;
using solgemm::kernels::family::mbar_init;
using solgemm::kernels::family::mbar_wait;

// Timeline stamps (trace != nullptr; the skinny bench's Timer::timeline prints them as x, g0, loop, local, count,
// out): 1 barriers initialised (thread 0), 2 first stage consumed (warp 0), 3 warp 0's loop done, 4 producer
// starts, 5 stage 0 posted, 6 stage 0's copies issued (producer lane 0).
__device__ __forceinline__ void study_stamp(unsigned long long* trace, int i) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[static_cast<size_t>(blockIdx.x) * 8 + i] = v;
}

__global__ void __launch_bounds__(1024, 1)
    bulk_ring(const uint8_t* base, int streams, long long per_stream, int copy, int S, int iters, unsigned* sink,
              unsigned long long* trace, int map = 0, int touch = 0, unsigned long long* rtr = nullptr) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const uint32_t bars = smem_u32(smem);
  uint8_t* ring = smem + kRingOff;
  if (trace && threadIdx.x == 0) study_stamp(trace, 0);
  // Ring trace (rtr, 260 per CTA; as skinny_bench's SKINNY_RING): [256] the CTA's entry, [4 i + kind] for ring
  // iteration i < 64: kind 3 the producer's empty wait returned, 0 its copies issued, 1 warp 0 and 2 the last
  // consumer past the full barrier.
  auto rstamp = [&](int i, int kind) {
    if (rtr && i < 64) {
      unsigned long long v;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
      rtr[static_cast<size_t>(blockIdx.x) * 260 + (kind < 0 ? 256 : i * 4 + kind)] = v;
    }
  };
  if (threadIdx.x == 0) rstamp(0, -1);
  if (threadIdx.x == 0) {
    for (int q = 0; q < S; ++q) {
      mbar_init(bars + 8u * q, 1);
      mbar_init(bars + 8u * (kMaxS + q), static_cast<unsigned>(streams));
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (trace) study_stamp(trace, 1);
  }
  __syncthreads();
  if (warp == streams) {  // producer
    if (trace && lane == 0) study_stamp(trace, 4);
    // map 0: CTA c's streams are one contiguous run (c * streams + lane); map 1: the skinny family's pooler plan
    // (cs 8, rt_cta 16: CTA c = row block c / 8, K split c % 8; lane = row tile; a row tile's 8 K ranges
    // consecutive); map 2: as 1 with the CTA order swapped (c = K split c / 16, row block c % 16).
    const int rb = map == 1 ? static_cast<int>(blockIdx.x) / 8 : static_cast<int>(blockIdx.x) % 16;
    const int ks = map == 1 ? static_cast<int>(blockIdx.x) % 8 : static_cast<int>(blockIdx.x) / 16;
    const long long stream = map == 0 ? static_cast<long long>(blockIdx.x) * streams + lane
                                      : (static_cast<long long>(rb) * streams + lane) * 8 + ks;
    const uint8_t* src = base + stream * per_stream;
    int q = 0;
    uint32_t ph = 0;
    for (int i = 0; i < iters; ++i) {
      if (lane == 0) {
        mbar_wait(bars + 8u * (kMaxS + q), ph ^ 1u);
        rstamp(i, 3);
        mbar_arrive_expect_tx(bars + 8u * q, static_cast<uint32_t>(streams * copy));
        if (trace && i == 0) study_stamp(trace, 5);
      }
      __syncwarp();
      if (lane < streams)
        bulk_g2s(smem_u32(ring + static_cast<size_t>(q * streams + lane) * copy), src + static_cast<long long>(i) * copy,
                 static_cast<uint32_t>(copy), bars + 8u * q);
      if (trace && i == 0 && lane == 0) study_stamp(trace, 6);
      if (lane == 0) rstamp(i, 0);
      if (++q == S) {
        q = 0;
        ph ^= 1u;
      }
    }
  } else if (warp < streams) {  // consumers
    unsigned acc = 0;
    int q = 0;
    uint32_t ph = 0;
    for (int i = 0; i < iters; ++i) {
      mbar_wait(bars + 8u * q, ph);
      if (trace && i == 0 && threadIdx.x == 0) study_stamp(trace, 2);
      if (lane == 0 && (warp == 0 || warp == streams - 1)) rstamp(i, warp == 0 ? 1 : 2);
      acc ^= reinterpret_cast<const unsigned*>(ring + static_cast<size_t>(q * streams + warp) * copy)[lane];
      // touch > 0: the warp reads `touch` 16-byte chunks per lane of its slot (LDS.128; 3 = the skinny family's
      // whole 1536-byte group) before releasing it
      for (int c = 0; c < touch; ++c) {
        const uint8_t* slot = ring + static_cast<size_t>(q * streams + warp) * copy;
        const uint4 v = reinterpret_cast<const uint4*>(slot + c * 512)[lane];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(bars + 8u * (kMaxS + q));
      if (++q == S) {
        q = 0;
        ph ^= 1u;
      }
    }
    if (acc == 0x12345678u) sink[blockIdx.x] = acc;
    if (trace && threadIdx.x == 0) study_stamp(trace, 3);
  }
}

__global__ void read_chunk(const uint4* __restrict__ p, long long per_cta, unsigned* out) {
  const uint4* q = p + static_cast<long long>(blockIdx.x) * per_cta;
  unsigned acc = 0;
  long long i = threadIdx.x;
  for (; i + 3 * blockDim.x < per_cta; i += 4 * blockDim.x) {
    uint4 v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(q + i + u * blockDim.x));
#pragma unroll
    for (int u = 0; u < 4; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < per_cta; i += blockDim.x) acc ^= q[i].x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

__global__ void fill_random(uint32_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B1u ^ seed;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    p[i] = h;
  }
}

struct Bulk {
  int grid, streams, copy;
  int ring_kb;  // shared-memory budget of the ring
};

}  // namespace

int main(int argc, char** argv) {
  Timer tm;
  if (argc > 1) tm.reps = std::atoi(argv[1]);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s  %d SMs  reps %d\n", prop.name, prop.multiProcessorCount, tm.reps);
  const float fixed = tm.fixed_cost();
  uint8_t* buf;
  const size_t cap = 64ull << 20;
  CK(cudaMalloc(&buf, cap));
  CK(cudaMemset(buf, 3, cap));
  CK(cudaFuncSetAttribute(bulk_ring, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  unsigned long long* trace;
  CK(cudaMalloc(&trace, 1024 * 8 * 8));
  // The skinny family's pooler ring over 50 MB: 128 CTAs x 16 streams of 1536-byte copies, 8 stages, streams mapped to
  // CTAs as the pooler's plan maps them (map 1); `smem` 0: what the ring needs.
  auto family_ring = [&](unsigned long long* tr, int touch = 0, unsigned long long* rtr = nullptr, size_t smem = 0) {
    bulk_ring<<<128, 17 * 32, smem ? smem : kRingOff + 8 * 16 * 1536, tm.s>>>(buf, 16, 24576, 1536, 8, 16, tm.sink, tr,
                                                                             1, touch, rtr);
  };
  const Bulk bulks[] = {
      {128, 16, 1536, 192}, {128, 16, 1536, 96},  {128, 16, 3072, 192}, {128, 16, 6144, 192},
      {128, 16, 12288, 192}, {128, 8, 3072, 192}, {128, 4, 6144, 192},  {128, 1, 24576, 192},
      {128, 1, 49152, 192}, {132, 16, 1536, 192}, {132, 16, 6144, 192}, {132, 1, 49152, 192},
      {256, 8, 1536, 96},   {256, 8, 6144, 96},
  };
  if (std::getenv("STUDY_RING")) {  // ring trace of the family-shaped ring (map 1, 50 MB), as SKINNY_RING prints it
    unsigned long long* rtr;
    CK(cudaMalloc(&rtr, 128 * 260 * 8));
    for (int rep = 0; rep < 2; ++rep) {
      CK(cudaMemset(rtr, 0, 128 * 260 * 8));
      flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
      family_ring(nullptr, 0, rtr);
      CK(cudaStreamSynchronize(tm.s));
      std::vector<unsigned long long> h(128 * 260);
      CK(cudaMemcpy(h.data(), rtr, h.size() * 8, cudaMemcpyDeviceToHost));
      std::printf("ring study s16 c1536 S8 map 1 (us after each CTA's entry, median over 128 CTAs): i: refill-ok "
                  "issued land-w0 land-wlast\n");
      print_ring_trace(
          128, 16, [&](int c) { return h[c * 260 + 256]; },
          [&](int c, int i, int kind) { return h[c * 260 + i * 4 + kind]; });
    }
    return 0;
  }
  if (std::getenv("STUDY_TOUCH")) {  // the same ring (map 1, 50 MB), the consumers reading 0-3 chunks of their slot
    const float ceil_us = ceiling(tm, reinterpret_cast<const uint4*>(buf), 50331648ull) - fixed;
    std::printf("50.3 MB ceiling (best grid-stride read) %.2f us\n", ceil_us);
    for (const int touch : {0, 1, 3}) {
      const float t = tm.time([&] {
        family_ring(nullptr, touch);
      }) - fixed;
      CK(cudaGetLastError());
      std::printf("bulk g128 s16 c1536 S8 map 1, consumers read %d x 512 B of their slot: %7.2f us\n", touch, t);
    }
    return 0;
  }
  if (std::getenv("STUDY_SMEM")) {  // the same ring (map 1, 50 MB) asking for more shared memory than it uses
    const float ceil_us = ceiling(tm, reinterpret_cast<const uint4*>(buf), 50331648ull) - fixed;
    std::printf("50.3 MB ceiling (best grid-stride read) %.2f us\n", ceil_us);
    for (const int kb : {194, 196, 198, 200, 210, 214, 227}) {
      const size_t smem = static_cast<size_t>(kb) << 10;  // >= kRingOff + 8 x 16 x 1536
      const float t = tm.time([&] {
        family_ring(nullptr, 0, nullptr, smem);
      }) - fixed;
      CK(cudaGetLastError());
      std::printf("bulk g128 s16 c1536 S8 map 1, %3d KB of dynamic shared memory: %7.2f us\n", kb, t);
    }
    return 0;
  }
  if (std::getenv("STUDY_NCU")) {  // for a profiler: the family-shaped ring (map 1, 50 MB) launched once
    family_ring(nullptr);
    CK(cudaStreamSynchronize(tm.s));
    return 0;
  }
  if (std::getenv("STUDY_MAP")) {  // the same ring, three maps of streams to CTAs (see bulk_ring), 50 MB
    const float ceil_us = ceiling(tm, reinterpret_cast<const uint4*>(buf), 50331648ull) - fixed;
    std::printf("50.3 MB ceiling (best grid-stride read) %.2f us\n", ceil_us);
    for (const int copy : {1536, 3072})
      for (int map = 0; map < 3; ++map) {
        const int S = copy == 1536 ? 8 : 4, iters = 24576 / copy;
        auto go = [&](unsigned long long* tr) {
          bulk_ring<<<128, 17 * 32, kRingOff + S * 16 * copy, tm.s>>>(buf, 16, 24576, copy, S, iters, tm.sink, tr, map);
        };
        const float t = tm.time([&] { go(nullptr); }) - fixed;
        char l[64];
        std::snprintf(l, sizeof l, "bulk g128 s16 c%d S%d map %d", copy, S, map);
        std::printf("%-34s %7.2f us\n", l, t);
        tm.timeline(l, 128, trace, go);
      }
    return 0;
  }
  // STUDY_FILL=1: does the rate depend on the bytes? The 50 MB rows (read ceiling, chunks, the family-shaped ring)
  // with the buffer memset to 3 (as the judge's ceiling buffer), to 0, and random bits (as packed weights).
  if (std::getenv("STUDY_FILL")) {
    const size_t bytes = 50331648ull;
    for (int fill = 0; fill < 3; ++fill) {
      if (fill == 2)
        fill_random<<<2048, 256>>>(reinterpret_cast<uint32_t*>(buf), cap / 4, 12345u);
      else
        CK(cudaMemset(buf, fill == 0 ? 3 : 0, cap));
      CK(cudaDeviceSynchronize());
      const char* what = fill == 0 ? "memset 3" : fill == 1 ? "memset 0" : "random";
      const float ceil_us = ceiling(tm, reinterpret_cast<const uint4*>(buf), bytes) - fixed;
      std::printf("fill %-8s 50.3 MB ceiling (best grid-stride read) %.2f us", what, ceil_us);
      const long long per = static_cast<long long>(bytes / 16 / 128);
      const float tc = tm.time([&] {
        read_chunk<<<128, 1024, 0, tm.s>>>(reinterpret_cast<const uint4*>(buf), per, tm.sink);
      }) - fixed;
      const float tb = tm.time([&] {
        bulk_ring<<<128, 17 * 32, kRingOff + 8 * 16 * 1536, tm.s>>>(buf, 16, 24576, 1536, 8, 16, tm.sink, nullptr);
      }) - fixed;
      const float tb1 = tm.time([&] {
        bulk_ring<<<128, 2 * 32, kRingOff + 8 * 24576, tm.s>>>(buf, 1, 16 * 24576, 24576, 8, 16, tm.sink, nullptr);
      }) - fixed;
      std::printf(" | cta-chunk g128 t1024 %.2f | bulk g128 s16 c1536 S8 %.2f | bulk g128 s1 c24576 S8 %.2f\n", tc, tb,
                  tb1);
    }
    return 0;
  }
  // pooler / qkv_gate / o / the unpooler's 1024-row slice, at 12 bits per weight
  for (const size_t bytes : {50331648ull, 28311552ull, 12582912ull, 6291456ull}) {
    const float ceil_us = ceiling(tm, reinterpret_cast<const uint4*>(buf), bytes) - fixed;
    std::printf("\n# %.1f MB   ceiling (best grid-stride read) %.2f us = %.0f GB/s\n", bytes / 1e6, ceil_us,
                bytes / ceil_us / 1e3);
    auto row = [&](const char* label, size_t read, float us) {
      std::printf("%-34s %7.2f us  %6.0f GB/s  x%.3f ceiling\n", label, us, read / us / 1e3, us / ceil_us);
      std::fflush(stdout);
    };
    for (const int grid : {128, 132})
      for (const int thr : {544, 1024}) {
        const long long per = static_cast<long long>(bytes / 16 / grid);
        const float t = tm.time([&] {
          read_chunk<<<grid, thr, 0, tm.s>>>(reinterpret_cast<const uint4*>(buf), per, tm.sink);
        }) - fixed;
        char l[64];
        std::snprintf(l, sizeof l, "read cta-chunk g%d t%d", grid, thr);
        row(l, static_cast<size_t>(per) * 16 * grid, t);
      }
    for (const Bulk& b : bulks) {
      const long long per_stream = static_cast<long long>(bytes / (static_cast<size_t>(b.grid) * b.streams)) /
                                   b.copy * b.copy;
      const int iters = static_cast<int>(per_stream / b.copy);
      const int S = std::min({kMaxS, iters, (b.ring_kb << 10) / (b.streams * b.copy)});
      if (S < 1 || iters < 1) continue;
      const size_t smem = kRingOff + static_cast<size_t>(S) * b.streams * b.copy;
      const float t = tm.time([&] {
        bulk_ring<<<b.grid, (b.streams + 1) * 32, smem, tm.s>>>(buf, b.streams, per_stream, b.copy, S, iters,
                                                                  tm.sink, nullptr);
      }) - fixed;
      CK(cudaGetLastError());
      char l[64];
      std::snprintf(l, sizeof l, "bulk g%d s%d c%d S%d (%d KB)", b.grid, b.streams, b.copy, S,
                    static_cast<int>((smem - kRingOff) >> 10));
      row(l, static_cast<size_t>(per_stream) * b.streams * b.grid, t);
      if (&b == &bulks[0])  // the skinny family's shape: where the time goes (see study_stamp)
        tm.timeline(l, b.grid, trace, [&](unsigned long long* tr) {
          bulk_ring<<<b.grid, (b.streams + 1) * 32, smem, tm.s>>>(buf, b.streams, per_stream, b.copy, S, iters,
                                                                    tm.sink, tr);
        });
    }
  }
  return 0;
}
