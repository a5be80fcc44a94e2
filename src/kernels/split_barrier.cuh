// The split-K barrier of a cooperative launch, shared by the wide (hi + lo), stream and skinny families: the
// `split` CTAs that share an output tile meet at a 64-bit arrival counter that every launch advances by `split`
// and nothing ever resets (graph replays need no host work; perf-notes step 57). Read before a CTA arrives, the
// counter lies in [j split, (j + 1) split): the arrivals of earlier launches on the stream are complete, this
// launch's are not (this CTA's is missing), so this launch's barrier opens at (j + 1) split. Every launch on one
// counter must use the same split. Called by one thread; a CTA barrier before the arrival orders the CTA's
// stores, and one after the wait passes the acquired partials on to its threads.
#pragma once

#include <cstdint>

namespace solgemm::kernels {

// Where this launch's barrier on `c` opens (read before this CTA arrives, e.g. at entry).
__device__ __forceinline__ unsigned long long split_barrier_target(const unsigned long long* c, unsigned split) {
  unsigned long long v0;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];\n" : "=l"(v0) : "l"(c) : "memory");
  return (v0 / split + 1) * split;
}

// Release this CTA's arrival and wait (acquire) until `target` arrivals are counted (`target`: the value
// split_barrier_target stored, read where it is compared, after the arrival).
__device__ __forceinline__ void split_barrier_arrive_wait(unsigned long long* c, const unsigned long long& target) {
  asm volatile("red.release.gpu.global.add.u64 [%0], 1;\n" ::"l"(c) : "memory");
  unsigned long long v;
  do {
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(c) : "memory");
  } while (v < target);
}

// Both in one: arrive with an acq_rel atomic, take the target from the value before it (no read at entry, no
// target kept across the kernel), and wait. True for the last arrival.
__device__ __forceinline__ bool split_barrier_arrive_wait(unsigned long long* c, unsigned split) {
  unsigned long long prev;
  asm volatile("atom.add.acq_rel.gpu.global.u64 %0, [%1], 1;\n" : "=l"(prev) : "l"(c) : "memory");
  const unsigned long long target = (prev / split + 1) * split;
  unsigned long long v = prev + 1;
  while (v < target) asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(c) : "memory");
  return prev + 1 == target;
}

}  // namespace solgemm::kernels
