// skinny_bench: times the skinny family (packed BF16 layers) and the router on the device, layout by layout.
//
// Each (shape, m, layout) call is captured once into a CUDA graph and replayed cold (a 512 MB read before
// every replay), timed with events around the replay alone; median minus the median of an empty-kernel graph
// timed the same way (../shared/anchors/read_ceiling.cu is the model). Beside each shape: the practical read
// ceiling for the same bytes (a plain 16-byte streaming read, best of a few grids, timed the same way).
// Each layout's output is compared with the first layout's (relative L2): a wrong layout shows up.
// v2: layouts split K across CTAs through a global workspace (no clusters); "cublas" = the vendor family
// (cublasGemmEx on the raw BF16 weights, same handle setup as src/api.cu), timed the same way.
// Beside the plan's layout: "-noexc" (exception tables emptied), "-ring" (no decode, no MMA: the weight ring
// and the tail alone), "-notail" (no reduction or output: wrong results), "-ring-notail" (the stream alone; the
// bench instantiation's producer tests its knobs at run time and streams ~0.7-1.3 us slower than the library's
// would, perf-notes step 93),
// "-benchk-noexc" (the bench instantiation with the tables emptied, step 103), "-benchk-excnox" (the bench
// instantiation whose exception warp takes x = 1 instead of loading it: wrong out; what its x loads cost, step 193),
// "-exc1of<s>" (only row tiles rt % s == 0 keep their exception entries: step 109), "-nod0" (every group through the
// ring, perf-notes step 49), "-nodecode" (raw bits as MMA operands), "-xfirst" (the producer waits until x is
// requested), "-xonephase" (x in one phase), "-benchk" (the bench's kernel instantiation without any experiment: the diagnostic rows run it, the
// plan and candidate rows the library's), "-S<n>" (ring depth capped at n stages), "-nowait" (the compute alone:
// the loop does not wait for its stages; wrong results), "-iadd" (the 12-bit decode in the true domain, an IADD
// per register, as before perf-notes step 42); router: "-notail", "-nomma",
// "-stream"; "-lasttail": the split-K tail summed by each tile's last arrival alone (before session 10).
// "timeline" rows: per-CTA %globaltimer stamps (Timer::timeline), plan layout with and without exceptions, and without
// the loop stamp ("-noloopstamp", perf-notes step 119).
// Usage: skinny_bench [reps=100] [diag|-] [m list, e.g. 1,8,16,32]; SKINNY_ONLY=<shape> runs that shape alone,
// SKINNY_QUICK=1 fewer diagnostic rows; SKINNY_NCU=1 the plan kernel and its stream alone once each (a profiler's
// run); SKINNY_RINGBISECT=1 the stream alone with one knob at a time; SKINNY_RING=1 adds the ring trace of the first
// layout (per ring iteration: the producer's refill allowed / copies issued, warp 0 and the last warp past the
// stage's barrier); SKINNY_GM=1
// times every layout of the list on a group-major copy of the groups with one bulk copy per k warp and stage, on the
// library's loop (perf-notes step 89), beside the library's kernel, with timelines (and ring traces with SKINNY_RING);
// SKINNY_XRING=1 times the plan's and the no-split layouts with x through the ring and x staged (perf-notes step 96).
// SKINNY_CANDS lists the layouts to time (and, at m = 1, trace) instead of each shape's list (env_cands).
// SKINNY_LLM=1 draws the weights as the judge's llm-like generator does (seed 0; perf-notes step 187: where the
// exception warp's time goes on them, its "corrections done" stamp against the loop's end).
// SKINNY_TAIL=<dir> writes, for the plan layout at every m, 5 cold launches' raw stamps with the per-warp tail trace
// (kTailTrace, perf-notes step 120) to <dir>/<shape>_m<m>.bin (scripts/tail_trace.py reads them).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../judge/gen.hpp"
#include "bench_data.cuh"
#include "bench_util.cuh"
#include "kernels/family_dispatch.cuh"
#include "kernels/kernels.hpp"
#include "solgemm/format.hpp"
#include "solgemm/plan.hpp"

namespace {

using namespace bench;  // NOLINT: the shared timing helpers

// The library's kernels; with stamps or the group-major copy asked for and no other diagnostic, the trace-only
// instantiation (the library's loop plus the stamps: timelines and ring traces of the plan rows, perf-notes step 89);
// else the bench's instantiation with every diagnostic compiled in.
void run_skinny(const solgemm::Config& c, const solgemm::kernels::PackedView& v, const __nv_bfloat16* x, int64_t m,
                __nv_bfloat16* out, int64_t rows, cudaStream_t s) {
  namespace fam = solgemm::kernels::family;
  if ((v.trace != nullptr || v.diag != 0) &&
      (v.diag & ~(fam::kRingTrace | fam::kGroupMajor | fam::kNoLoopStamp | fam::kTailTrace)) == 0)
    fam::skinny_dispatch<fam::kTraceOnly>(c, v, x, m, out, rows, s);
  else if (v.diag != 0 || v.trace != nullptr)
    fam::skinny_dispatch<fam::kDiagnostics>(c, v, x, m, out, rows, s);
  else
    solgemm::kernels::launch_skinny(c, v, x, m, out, rows, s);
}
// One cold launch with the ring trace (perf-notes step 87; `vt` has kRingTrace in diag and `buf` as its trace, room for
// ctas CTAs), printed under `label`: per ring iteration, medians over CTAs of the producer's refill allowed / copies
// issued and warp 0 / the last compute warp past the stage's barrier (us after each CTA's entry).
void ring_trace(Timer& tm, const solgemm::Config& c, const solgemm::kernels::PackedView& vt, const __nv_bfloat16* x,
                int64_t m, void* out, int64_t rows, int ctas, unsigned long long* buf, const std::string& label) {
  namespace fam = solgemm::kernels::family;
  const size_t n_tr = fam::kRingTraceOff + static_cast<size_t>(ctas) * 256;
  CK(cudaMemset(buf, 0, n_tr * 8));
  flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
  run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), rows, tm.s);
  CK(cudaStreamSynchronize(tm.s));
  std::vector<unsigned long long> tr(n_tr);
  CK(cudaMemcpy(tr.data(), buf, n_tr * 8, cudaMemcpyDeviceToHost));
  std::printf("ring %s (us after each CTA's entry, median over %d CTAs): i: refill-ok issued land-w0 land-wlast\n",
              label.c_str(), ctas);
  print_ring_trace(
      ctas, std::min(64, c.gpw), [&](int cta) { return tr[static_cast<size_t>(cta) * 8]; },
      [&](int cta, int i, int kind) { return tr[fam::kRingTraceOff + (static_cast<size_t>(cta) * 64 + i) * 4 + kind]; });
}

__global__ void gstamp(unsigned long long* p) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  *p = v;
}

// Where a timed replay's time goes (step 89's open question: the group-major copy ran faster than the library in
// the timelines, slower in the timed replays): the kernel captured between two one-thread stamp kernels, replayed
// cold as Timer::median does; per replay the event time, and from the stamps: the first stamp to the first CTA's
// entry (pre), the first entry to the last output store (body), the last store to the second stamp (post). Run with
// and without the kernel's own stamps (launch(j, trace or nullptr); j = 0 the library's layout, 1 group-major).
template <class F>
void span_check(Timer& tm, float fixed, const char* name, int m, int ctas, unsigned long long* trace,
                unsigned long long* stamps, F&& launch) {
  for (int j = 0; j < 2; ++j)
    for (int with_tr = 0; with_tr < 2; ++with_tr) {
      const cudaGraphExec_t ge = tm.capture([&] {
        gstamp<<<1, 1, 0, tm.s>>>(stamps);
        launch(j, with_tr ? trace : nullptr);
        gstamp<<<1, 1, 0, tm.s>>>(stamps + 1);
      });
      std::vector<double> ev, pre, body, post, whole;
      std::vector<unsigned long long> h(static_cast<size_t>(ctas) * 8);
      for (int r = 0; r < 25; ++r) {
        CK(cudaMemset(trace, 0, h.size() * 8));
        flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
        CK(cudaEventRecord(tm.a, tm.s));
        CK(cudaGraphLaunch(ge, tm.s));
        CK(cudaEventRecord(tm.b, tm.s));
        CK(cudaEventSynchronize(tm.b));
        float ms;
        CK(cudaEventElapsedTime(&ms, tm.a, tm.b));
        unsigned long long st[2];
        CK(cudaMemcpy(st, stamps, 16, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h.data(), trace, h.size() * 8, cudaMemcpyDeviceToHost));
        if (r < 5) continue;
        ev.push_back(ms * 1e3 - fixed);
        whole.push_back((static_cast<double>(st[1]) - static_cast<double>(st[0])) * 1e-3);
        if (with_tr) {
          unsigned long long t0 = ~0ull, t6 = 0;
          for (int c = 0; c < ctas; ++c) {
            if (h[c * 8]) t0 = std::min(t0, h[c * 8]);
            t6 = std::max(t6, h[c * 8 + 6]);
          }
          pre.push_back((static_cast<double>(t0) - static_cast<double>(st[0])) * 1e-3);
          body.push_back((static_cast<double>(t6) - static_cast<double>(t0)) * 1e-3);
          post.push_back((static_cast<double>(st[1]) - static_cast<double>(t6)) * 1e-3);
        }
      }
      CK(cudaGraphExecDestroy(ge));
      auto q = [](std::vector<double> v) {
        if (v.empty()) return std::string("-");
        std::sort(v.begin(), v.end());
        return fmt::format("{:.2f}/{:.2f}/{:.2f}", v.front(), v[v.size() / 2], v.back());
      };
      std::printf("span %s m=%d %s%s (min/med/max of 20 cold replays, us): event-fixed %s | stamp to stamp %s | "
                  "pre %s | body %s | post %s\n", name, m, j ? "group-major" : "library layout",
                  with_tr ? " +stamps" : "", q(ev).c_str(), q(whole).c_str(), q(pre).c_str(), q(body).c_str(),
                  q(post).c_str());
    }
}

void run_router(const solgemm::Config& c, const solgemm::kernels::HiLoView& v, const __nv_bfloat16* x, int64_t m,
                float* out, int64_t rows, cudaStream_t s) {
  if (v.diag != 0 || v.trace != nullptr)
    solgemm::kernels::family::router_dispatch<solgemm::kernels::family::kDiagnostics>(c, v, x, m, out, rows, s);
  else
    solgemm::kernels::launch_router(c, v, x, m, out, rows, s);
}

struct Layout {
  int cs, rt_cta, wk, gpw;
  int stages = 0;   // ring depth cap (0: the launcher's)
  bool nc = false;  // never a cluster (split K through the workspace)
  bool lt = false;  // ("/lt": that split-K tail summed by each tile's last arrival, not shared)
};
solgemm::Config cfg_of(const Layout& l, int nt) { return solgemm::layout_config(l.cs, l.rt_cta, l.wk, l.gpw, nt); }
std::string lstr(const Layout& l) {
  return fmt::format("cs{}/rt{}/wk{}/g{}", l.cs, l.rt_cta, l.wk, l.gpw) + (l.stages ? fmt::format("/S{}", l.stages) : "") +
         (l.nc ? "/nc" : "") + (l.lt ? "/lt" : "");
}
// SKINNY_CANDS="cs11/rt6/wk2/g6,cs8/rt6/wk2/g8/nc,...": these layouts instead of a shape's list (the first one takes
// the plan's diagnostic rows); "/nc": no cluster; a layout may cover more than K's groups (the last k slices hold fewer).
std::vector<Layout> env_cands() {
  std::vector<Layout> v;
  for (const NamedLayout& n : env_layouts("SKINNY_CANDS", "skinny_bench")) {
    Layout l{n.cs, n.rt, n.wk, n.gpw};
    l.nc = n.nc;
    l.lt = n.lt;
    v.push_back(l);
  }
  return v;
}

struct Shape {
  const char* name;
  int64_t n, k, rows;
  std::vector<Layout> cands;
};

}  // namespace

int main(int argc, char** argv) {
  Timer tm;
  if (argc > 1) tm.reps = std::atoi(argv[1]);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s  %d SMs  L2 %d MB  reps %d\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              tm.reps);
  const float fixed = tm.fixed_cost();
  uint4* rbuf;
  CK(cudaMalloc(&rbuf, 64ull << 20));
  CK(cudaMemset(rbuf, 3, 64ull << 20));
  uint4* rbuf2;  // a second buffer (SKINNY_WARM)
  CK(cudaMalloc(&rbuf2, 64ull << 20));
  CK(cudaMemset(rbuf2, 3, 64ull << 20));
  if (argc > 2 && std::string(argv[2]) == "diag") {
    // Fixed-cost diagnostics: does a kernel that reserves dynamic shared memory (carveout change after the
    // flush kernel, which uses none) pay a fixed cost? Empty kernel and a 50.4 MB streaming read, each with
    // 0 / 16 / 128 / 200 KB of (unused) dynamic shared memory, timed like everything else.
    CK(cudaFuncSetAttribute(nop, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    CK(cudaFuncSetAttribute(read_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    const size_t bytes = 50397184 / 16 * 16;
    for (int kb : {0, 16, 128, 200}) {
      const size_t sm = static_cast<size_t>(kb) << 10;
      const float tn = tm.time([&] { nop<<<tm.sms, 32, sm, tm.s>>>(); }) - fixed;
      const float t1 = tm.time([&] { read_stream<<<tm.sms, 1024, sm, tm.s>>>(rbuf, bytes / 16, tm.sink); }) - fixed;
      const float t2 =
          tm.time([&] { read_stream<<<tm.sms * 2, 512, sm, tm.s>>>(rbuf, bytes / 16, tm.sink); }) - fixed;
      std::printf("diag smem %3d KB: empty kernel (132 CTAs) %6.2f us; read 50.4 MB 132x1024 %6.2f us, 264x512 %6.2f us\n",
                  kb, tn, t1, t2);
    }
    std::fflush(stdout);
  }

  // First layout of each list = the plan's; "noexc" = the plan's layout with the exception tables emptied
  // (wrong results where exceptions are; measures what the exception path costs).
  std::vector<Shape> shapes = {
      // the plan's at m <= 8 (192 CTAs, two per SM) and at 9..16; cs8/rt9/wk1/g16 at <= 6 stages: two CTAs per SM,
      // so the grid fits as clusters of 8
      {"qkv_gate", 2304, 8192, 2304, {{8, 6, 2, 8}, {8, 9, 2, 8}, {8, 9, 1, 16, 6}}},
      // 8-warp CTAs, two per SM (no split; clusters of 2)
      {"o", 8192, 1024, 8192, {{1, 4, 4, 4}, {1, 2, 4, 4}, {2, 4, 2, 4}, {2, 2, 4, 2}}},
      // no split / 2-way split: whole (half) K per CTA, x of m <= 8 (16) tokens over the whole k range
      // 8-warp CTAs, two per SM (256 CTAs): the grid fits as clusters of cs (DSMEM split-K reduction)
      // the same K order as the plan's (8 k slices of 1024, summed in order): no split (local reduction only), or
      // clusters of 2 (perf-notes step 43)
      {"pooler", 4096, 8192, 4096, {{8, 16, 1, 16}, {1, 2, 8, 16}, {2, 4, 4, 16}}},
      {"unpooler", 8192, 4096, 8192, {{4, 16, 1, 16}, {1, 4, 4, 16}, {2, 8, 2, 16}}},
      // 8-warp CTAs, two per SM, clusters of 2 / 4 (the router's structure)
      {"unpool_1024", 8192, 4096, 1024, {{4, 2, 8, 2}, {2, 1, 16, 2}, {2, 2, 8, 2}, {4, 1, 8, 2}}},
  };
  if (const std::vector<Layout> given = env_cands(); !given.empty())
    for (Shape& sh : shapes) sh.cands = given;
  // m values: argv[3] = comma list (default 1,8,16,32,33,64).
  std::vector<int> ms = {1, 8, 16, 32, 33, 64};
  if (argc > 3) ms = int_list(argv[3]);
  // Split-K workspace (generous: every candidate fits) and zeroed counters, as src/api.cu allocates them.
  const solgemm::kernels::SplitWs split = split_workspace(size_t{16} << 20);
  const solgemm::kernels::Blas blas = blas_with_workspace();
  __nv_bfloat16* x;
  CK(cudaMalloc(&x, 256ull * 8192 * 2));
  gen_bf16<<<1024, 256>>>(x, 256ll * 8192, 12345, 1.0f);
  void* out;
  CK(cudaMalloc(&out, 256ull * 8192 * 4));
  unsigned long long* trace;
  // (timelines: 8 stamps per CTA; ring traces: kRingTraceOff + 256 per CTA, up to 1024 CTAs)
  CK(cudaMalloc(&trace, (solgemm::kernels::family::kRingTraceOff + 1024ull * 256) * 8));
  unsigned long long* stamps;
  CK(cudaMalloc(&stamps, 64));
  unsigned long long* big_trace;  // (SKINNY_XRING ring traces: up to 512 CTAs)
  CK(cudaMalloc(&big_trace, (16384ull + 512 * 256) * 8));
  std::printf("\n%-12s %4s %-18s %9s %9s %8s %8s %10s\n", "shape", "m", "layout", "us", "ceil_us", "x_ceil",
              "GB/s", "rel_vs_1st");
  // SKINNY_ONLY=<shape name>: that shape alone, no router section (for a profiler run).
  const char* only = std::getenv("SKINNY_ONLY");
  // SKINNY_QUICK=1: of the diagnostic rows only -noexc, -ring-notail, -benchk, -nowait, -iadd, -nowait-iadd, -nod0,
  // -lasttail; no ring caps.
  const bool quick = std::getenv("SKINNY_QUICK") != nullptr;
  for (const Shape& sh : shapes) {
    if (only && std::string(only) != sh.name) continue;
    __nv_bfloat16* dw;
    CK(cudaMalloc(&dw, sh.n * sh.k * 2));
    gen_bf16<<<2048, 256>>>(dw, sh.n * sh.k, 777 + sh.n, 0.02f);
    std::vector<uint16_t> hw(static_cast<size_t>(sh.n * sh.k));
    CK(cudaMemcpy(hw.data(), dw, hw.size() * 2, cudaMemcpyDeviceToHost));
    if (std::getenv("SKINNY_LLM")) {  // SKINNY_LLM=1: the judge's llm-like weights (judge/gen.hpp, seed 0), as tune_plan's
      solgemm::judge::gen::WeightSpec ws;
      ws.kind = solgemm::judge::gen::Kind::llm_like;
      const std::string nm = sh.name;
      ws.layer = nm == "qkv_gate" ? 0 : nm == "o" ? 1 : nm == "pooler" ? 2 : 3;
      ws.k = sh.k;
      hw = solgemm::judge::gen::bf16_weights(ws, sh.n);
      CK(cudaMemcpy(dw, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    }
    const solgemm::format::Packed pk = solgemm::format::encode_bf16(hw.data(), sh.n, sh.k);
    uint8_t* d_data;
    uint32_t *d_off, *d_exc;
    CK(cudaMalloc(&d_data, pk.data.size()));
    CK(cudaMemcpy(d_data, pk.data.data(), pk.data.size(), cudaMemcpyHostToDevice));
    // SKINNY_GM=1: a group-major copy of the groups (k group major, row tile minor; perf-notes step 89).
    uint8_t* d_data_gm = nullptr;
    if (std::getenv("SKINNY_GM")) {
      const size_t gb = pk.data.size() / static_cast<size_t>(pk.row_tiles * pk.k_groups);
      std::vector<uint8_t> gm(pk.data.size());
      for (int64_t rt = 0; rt < pk.row_tiles; ++rt)
        for (int64_t kg = 0; kg < pk.k_groups; ++kg)
          std::copy_n(pk.data.data() + (rt * pk.k_groups + kg) * gb, gb, gm.data() + (kg * pk.row_tiles + rt) * gb);
      CK(cudaMalloc(&d_data_gm, gm.size()));
      CK(cudaMemcpy(d_data_gm, gm.data(), gm.size(), cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&d_off, pk.exc_off.size() * 4 + 4));
    CK(cudaMemcpy(d_off, pk.exc_off.data(), pk.exc_off.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&d_exc, pk.exc.size() * 4 + 4));
    uint32_t* d_zero;
    CK(cudaMalloc(&d_zero, pk.exc_off.size() * 4 + 4));
    CK(cudaMemset(d_zero, 0, pk.exc_off.size() * 4 + 4));
    CK(cudaMemcpy(d_exc, pk.exc.data(), pk.exc.size() * 4, cudaMemcpyHostToDevice));
    uint32_t* d_blk;
    CK(cudaMalloc(&d_blk, pk.exc.size() * 4 + 4));
    CK(cudaMemcpy(d_blk, solgemm::format::exception_blocks(pk).data(), pk.exc.size() * 4, cudaMemcpyHostToDevice));
    // Thinned exception tables (the "-exc1of<s>" rows, perf-notes step 109): only row tiles rt % s == 0 keep their
    // entries (a compacted copy of the entries and its offsets; wrong results in the others): what the exception path
    // costs as fewer warps hold any entry.
    std::vector<std::tuple<int, uint32_t*, uint32_t*, uint32_t*>> d_thin;
    if (!pk.exc_off.empty()) {
      for (int sth : {2, 4, 8, 16}) {
        std::vector<uint32_t> off2(pk.exc_off.size()), exc2, blk2;
        for (int64_t rt = 0; rt < pk.row_tiles; ++rt)
          for (int64_t b = 0; b < pk.k_blocks; ++b) {
            const int64_t i = rt * pk.k_blocks + b;
            off2[static_cast<size_t>(i)] = static_cast<uint32_t>(exc2.size());
            if (rt % sth == 0) {
              exc2.insert(exc2.end(), pk.exc.begin() + pk.exc_off[static_cast<size_t>(i)],
                          pk.exc.begin() + pk.exc_off[static_cast<size_t>(i) + 1]);
              blk2.resize(exc2.size(), static_cast<uint32_t>(i));
            }
          }
        off2.back() = static_cast<uint32_t>(exc2.size());
        uint32_t *d_o, *d_e, *d_b;
        CK(cudaMalloc(&d_o, off2.size() * 4 + 4));
        CK(cudaMemcpy(d_o, off2.data(), off2.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&d_e, exc2.size() * 4 + 4));
        CK(cudaMemcpy(d_e, exc2.data(), exc2.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&d_b, blk2.size() * 4 + 4));
        CK(cudaMemcpy(d_b, blk2.data(), blk2.size() * 4, cudaMemcpyHostToDevice));
        d_thin.emplace_back(sth, d_o, d_e, d_b);
      }
    }
    solgemm::kernels::PackedView v = packed_view(pk, d_data, d_off, d_exc, d_blk);
    v.split = split;
    if (std::getenv("SKINNY_NCU")) {
      // For a profiler (ncu --kernel-name regex:skinny_kernel): the plan layout at the first m of the list, once
      // as the library's kernel, once as its stream alone (-ring-notail), then the next shape. SKINNY_NCU=noexc: the
      // library's kernel with the exception tables emptied instead of the stream alone (perf-notes step 106);
      // SKINNY_NCU=nowait: the compute alone (-nowait, the bench's instantiation; perf-notes step 123).
      const int m = ms[0], nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
      const solgemm::Config c = cfg_of(sh.cands[0], nt);
      const std::string second = std::getenv("SKINNY_NCU");
      solgemm::kernels::PackedView vd = v;
      if (second == "noexc")
        vd.exc_off = d_zero;
      else
        vd.diag = second == "nowait" ? 8192 : 3;
      run_skinny(c, v, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
      run_skinny(c, vd, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
      CK(cudaStreamSynchronize(tm.s));
      std::printf("# %s m=%d %s: the library's kernel, then %s, launched once each\n", sh.name, m,
                  lstr(sh.cands[0]).c_str(),
                  second == "noexc" ? "the same without exceptions" : second == "nowait" ? "its compute alone" : "its stream alone");
      continue;
    }
    // Bytes the call reads for its rows: groups of the computed row tiles + exception tables (approx.).
    const double frac = static_cast<double>((sh.rows + 15) / 16) / static_cast<double>(pk.row_tiles);
    const size_t bytes = static_cast<size_t>(
        (static_cast<double>(pk.data.size()) + 4.0 * (pk.exc_off.size() + pk.exc.size())) * frac);
    const float ceil_us = ceiling(tm, rbuf, bytes / 16 * 16) - fixed;
    if (std::getenv("SKINNY_XRING")) {
      // x through the ring (skinny_family.cuh kXR) against x staged, layout by layout (the library's kernels): the
      // plan's layouts and the no-split layouts the x ring makes possible at m >= 3. Output compared with the first
      // row's (bitwise equal within a K-order class); "-xr" x through the ring, "-xs" x staged, "-auto" the rule;
      // "-S<n>" the ring capped at n stages. (The one-TMA-per-stage weights of perf-notes step 96 were removed after
      // the measurement: commit 99b042a has them.)
      std::vector<Layout> ls;
      const std::string nm = sh.name;
      if (nm == "qkv_gate") ls = {{8, 6, 2, 8}, {8, 9, 2, 8}, {1, 1, 8, 16}, {1, 1, 16, 8}, {1, 2, 8, 16}};
      else if (nm == "o") ls = {{1, 4, 4, 4}, {1, 6, 4, 4}, {1, 8, 2, 8}};
      else if (nm == "pooler") ls = {{8, 16, 1, 16}, {1, 2, 8, 16}, {1, 1, 8, 16}, {1, 2, 4, 32}};
      else if (nm == "unpooler") ls = {{4, 16, 1, 16}, {1, 4, 4, 16}, {1, 2, 4, 16}, {1, 2, 2, 32}};
      std::printf("# %s: %.1f MB read, ceiling %.2f us\n", sh.name, bytes / 1e6, ceil_us);
      for (int m : ms) {
        const int nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
        std::vector<uint16_t> first;
        struct Mode {
          int xr, cap;  // x staged (-1), through the ring (1) or the launcher's rule (0); ring cap (0: the launcher's)
        };
        const Mode modes[] = {{0, 0}, {-1, 0}, {1, 3}, {1, 4}, {1, 5}};
        for (const Layout& l : ls)
          for (const Mode& md : modes) {
            const int xr = md.xr;
            if (l.cs != 1 && xr != 0) continue;
            const solgemm::Config c = cfg_of(l, nt);
            solgemm::kernels::PackedView vx = v;
            vx.xring = xr;
            vx.max_stages = md.cap;
            const std::string tag = lstr(l) + (xr < 0 ? "-xs" : xr > 0 ? "-xr" : "-auto") +
                                    (md.cap ? fmt::format("-S{}", md.cap) : "");
            CK(cudaMemset(out, 0xFF, static_cast<size_t>(m) * sh.rows * 2));
            try {
              run_skinny(c, vx, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
              CK(cudaStreamSynchronize(tm.s));
            } catch (const std::exception& e) {
              std::printf("%-12s %4d %-22s launch failed: %s\n", sh.name, m, tag.c_str(), e.what());
              cudaGetLastError();
              continue;
            }
            std::vector<uint16_t> o(static_cast<size_t>(m) * sh.rows);
            CK(cudaMemcpy(o.data(), out, o.size() * 2, cudaMemcpyDeviceToHost));
            const double rd = first.empty() ? 0.0 : rel_diff(o, first);
            bool same = true;
            if (first.empty()) first = o; else same = o == first;
            const float us = tm.time([&] {
              run_skinny(c, vx, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
            }) - fixed;
            std::printf("%-12s %4d %-22s %9.2f %9.2f %8.3f %8.0f %10.2e%s\n", sh.name, m, tag.c_str(), us, ceil_us,
                        us / ceil_us, bytes / (us * 1e3), rd, same ? " bitwise=first" : "");
            std::fflush(stdout);
            if (m != ms[0] || xr == 0 || (xr > 0 && md.cap != 4)) continue;
            // At the first m: the timeline and the ring trace of the trace-only instantiation (the library's loop
            // plus the stamps).
            const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
            tm.timeline(fmt::format("{} m={} {}", sh.name, m, tag).c_str(), ctas, trace, [&](unsigned long long* tr) {
              solgemm::kernels::PackedView vt = vx;
              vt.trace = tr;
              run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
            });
            if (std::getenv("SKINNY_XRING_NOTRACE")) continue;  // (the timeline only)
            solgemm::kernels::PackedView vt = vx;
            vt.diag = solgemm::kernels::family::kRingTrace;
            vt.trace = big_trace;
            ring_trace(tm, c, vt, x, m, out, sh.rows, ctas, big_trace, fmt::format("{} m={} {}", sh.name, m, tag));
          }
      }
      continue;
    }
    std::printf("# %s: %s, %.1f MB read, plan layout: %s\n", sh.name, pk.describe().c_str(), bytes / 1e6,
                solgemm::select_plan({sh.rows, sh.k, solgemm::Storage::packed12}, 1, solgemm::Kernel::skinny)
                    .str()
                    .c_str());
    for (int m : ms) {
      const int nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
      std::vector<uint16_t> first;
      for (const Layout& l : sh.cands) {
        const solgemm::Config c = cfg_of(l, nt);
        solgemm::kernels::PackedView vl = v;
        vl.max_stages = l.stages;
        vl.no_cluster = l.nc;
        if (l.lt) vl.split.cnt64 = nullptr;
        CK(cudaMemset(out, 0xFF, static_cast<size_t>(m) * sh.rows * 2));
        try {
          run_skinny(c, vl, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
        } catch (const std::exception& e) {
          std::printf("%-12s %4d %-18s launch failed: %s\n", sh.name, m, lstr(l).c_str(), e.what());
          cudaGetLastError();
          continue;
        }
        CK(cudaStreamSynchronize(tm.s));
        std::vector<uint16_t> o(static_cast<size_t>(m) * sh.rows);
        CK(cudaMemcpy(o.data(), out, o.size() * 2, cudaMemcpyDeviceToHost));
        const double rd = first.empty() ? 0.0 : rel_diff(o, first);
        if (first.empty()) first = o;
        const float us = tm.time([&] {
          run_skinny(c, vl, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
        }) - fixed;
        std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10.2e\n", sh.name, m, lstr(l).c_str(), us, ceil_us,
                    us / ceil_us, bytes / (us * 1e3), rd);
        if (m == 1 && &l != &sh.cands[0]) {  // timelines of the other layouts too (m = 1)
          solgemm::kernels::PackedView vt = vl;
          const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
          tm.timeline(fmt::format("{} m={} {}", sh.name, m, lstr(l)).c_str(), ctas, trace, [&](unsigned long long* tr) {
            vt.trace = tr;
            run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
          });
        }
      }
      // One diagnostic row: the plan's layout on `vd`, its label the layout's plus `suffix`.
      const solgemm::Config c0 = cfg_of(sh.cands[0], nt);
      auto diag_row = [&](const solgemm::kernels::PackedView& vd, const std::string& suffix) {
        const float us = tm.time([&] {
          run_skinny(c0, vd, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
        }) - fixed;
        std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10s\n", sh.name, m, (lstr(sh.cands[0]) + suffix).c_str(),
                    us, ceil_us, us / ceil_us, bytes / (us * 1e3), "-");
      };
      // The plan's layout, diagnostic variants: no exceptions (tables emptied), ring only (no decode, no MMA),
      // no reduction, both.
      const std::pair<const char*, int> variants[] = {{"-noexc", 0}, {"-ring", 1}, {"-notail", 2}, {"-ring-notail", 3},
                                                      {"-nodecode", 8}, {"-xfirst", 4}, {"-nocluster", 16},
                                                      {"-xonephase", 64}, {"-benchk", 128}, {"-benchk-noexc", 128 | (1 << 27)}, {"-nowait", 8192},
                                                      {"-iadd", 16384}, {"-nowait-iadd", 8192 | 16384},
                                                      {"-nod0", 32}, {"-lasttail", 1 << 20},
                                                      {"-noxbox", 128 | solgemm::kernels::family::kNoXBox},
                                                      {"-benchk-excnox", 128 | solgemm::kernels::family::kExcNoX}};
      for (const auto& [suffix, dg] : variants) {
        if (quick && dg != 0 && dg != 3 && dg != 8192 && dg != 16384 && dg != (8192 | 16384) && dg != 32 &&
            dg != (1 << 20) && dg != 128 && dg != (128 | (1 << 27)) && dg != (128 | solgemm::kernels::family::kNoXBox) &&
            dg != (128 | solgemm::kernels::family::kExcNoX))
          continue;
        solgemm::kernels::PackedView vd = v;
        if (dg == 0 || (dg & (1 << 27))) vd.exc_off = d_zero;  // (1 << 27: bench-side only, the tables emptied)
        vd.diag = dg & ~(16 | 32 | (1 << 27));
        vd.no_cluster = dg == 16;
        vd.no_direct0 = dg == 32;  // (32: the library kernel with the ring carrying every group, perf-notes step 49)
        if (dg == (1 << 20)) {  // the library kernel with the last-arrival split-K tail (before session 10)
          vd.diag = 0;
          vd.split.cnt64 = nullptr;
        }
        diag_row(vd, suffix);
      }
      const int ctas0 = c0.split_k * static_cast<int>(((sh.rows + 15) / 16 + c0.rt_cta - 1) / c0.rt_cta);
      for (const auto& [sth, d_o, d_e, d_b] : d_thin) {  // thinned exception tables (step 109)
        solgemm::kernels::PackedView vd = v;
        vd.exc_off = d_o;
        vd.exc = d_e;
        vd.exc_blk = d_b;
        diag_row(vd, fmt::format("-exc1of{}", sth));
        if (sth == 16 && std::getenv("TIMELINE_DUMP")) {  // per CTA: do the CTAs with entries end later? (step 109)
          for (int variant = 0; variant < 3; ++variant) {
            solgemm::kernels::PackedView vt = vd;
            if (variant == 1) {
              vt.exc_off = v.exc_off;
              vt.exc = v.exc;
              vt.exc_blk = v.exc_blk;
            }
            if (variant == 2) vt.exc_off = d_zero;
            const char* tag = variant == 0 ? "-exc1of16" : variant == 1 ? "-excall" : "-excnone";
            tm.timeline(fmt::format("{} m={} {}{}", sh.name, m, lstr(sh.cands[0]), tag).c_str(), ctas0, trace,
                        [&](unsigned long long* tr) {
                          vt.trace = tr;
                          run_skinny(c0, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
                        });
          }
        }
      }
      for (int st : {1, 2, 3, 4, 6, 7, 8}) {  // ring depth cap
        if (quick) break;
        solgemm::kernels::PackedView vt = v;
        vt.max_stages = st;
        diag_row(vt, fmt::format("-S{}", st));
        if (m == 1 && (st == 2 || st == 4))
          tm.timeline(fmt::format("{} m={} S{}", sh.name, m, st).c_str(), ctas0, trace, [&](unsigned long long* tr) {
            vt.trace = tr;
            run_skinny(c0, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
          });
      }
      // Timelines of the plan's layout (stamps: x staged, first group, loop done, local, count, out), and of its
      // ring-only variant (no decode, no MMA: the stream and the tail) past m = 8.
      for (const int dg : {0, -3, 1, 3, -1, 256, 8192, 8192 | 16384}) {  // -1: exception tables emptied; 256: "g0" =
        // split-K partial stored; 8192: compute alone (no waits for the stages); 16384: the true-domain decode;
        // 3: the stream alone (g0 = the first stage landed, loop = the last); -3: no `loop` stamp (step 119)
        if ((dg == 1 && m <= 8) || (dg == 3 && m > 1) || (quick && dg != 0 && dg != -3 && dg != 8192 && dg != 3)) continue;
        solgemm::kernels::PackedView vt = v;
        vt.diag = dg == -3 ? solgemm::kernels::family::kNoLoopStamp : dg < 0 ? 0 : dg;
        if (dg == -1) vt.exc_off = d_zero;
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
        tm.timeline(fmt::format("{} m={} {}{}", sh.name, m, lstr(sh.cands[0]), dg == 256 ? "-g0=stored" : dg == 8192 ? "-nowait" : dg == (8192 | 16384) ? "-nowait-iadd" : dg == 3 ? "-ring-notail" : dg > 0 ? "-ring" : dg == -3 ? "-noloopstamp" : dg < 0 ? "-noexc" : "").c_str(), ctas,
                    trace, [&](unsigned long long* tr) {
                      vt.trace = tr;
                      run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
                    });
      }
      if (const char* dir = std::getenv("SKINNY_TAIL")) {  // raw per-warp tail stamps of the plan layout
        namespace fam = solgemm::kernels::family;
        solgemm::kernels::PackedView vt = v;
        vt.diag = fam::kTailTrace;
        vt.trace = big_trace;
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
        const size_t n_tr = fam::kRingTraceOff + static_cast<size_t>(ctas) * 256;
        // "_warm": a launch of the same kernel on the first 16 rows (a cluster's or split group's CTAs, the whole
        // code path, ~0.2 MB of weights) between the flush and the traced launch: the code in L2 (step 120's
        // question: are the tail's instruction fetches slow?)
        auto warm = [&] { run_skinny(c, v, x, m, static_cast<__nv_bfloat16*>(out), 16, tm.s); };
        for (const bool w : {false, true}) {
          const std::string fn = fmt::format("{}/{}_m{}{}.bin", dir, sh.name, m, w ? "_warm" : "");
          std::FILE* f = std::fopen(fn.c_str(), "wb");
          if (ctas <= 512 && f) {
            const int hdr[4] = {ctas, static_cast<int>(c.split_k), static_cast<int>(c.rt_cta * c.wk), 5};
            std::fwrite(hdr, sizeof hdr, 1, f);
            std::vector<unsigned long long> tr(n_tr);
            for (int r = 0; r < 5; ++r) {
              CK(cudaMemset(big_trace, 0, n_tr * 8));
              flush_read<<<tm.sms * 4, 1024, 0, tm.s>>>(tm.flush, tm.flush_n, tm.sink);
              if (w) warm();
              run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
              CK(cudaStreamSynchronize(tm.s));
              CK(cudaMemcpy(tr.data(), big_trace, n_tr * 8, cudaMemcpyDeviceToHost));
              std::fwrite(tr.data(), 8, ctas * 8, f);
              std::fwrite(tr.data() + fam::kRingTraceOff, 8, static_cast<size_t>(ctas) * 256, f);
            }
            std::printf("tail trace %s m=%d %s -> %s\n", sh.name, m, lstr(sh.cands[0]).c_str(), fn.c_str());
          }
          if (f) std::fclose(f);
        }
        const float t_plan = tm.time([&] { run_skinny(c, v, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s); });
        const float t_warm = tm.time(warm);
        const float t_both = tm.time([&] {
          warm();
          run_skinny(c, v, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
        });
        std::printf("warm code %s m=%d %s: plan %.2f us, 16-row launch %.2f, both %.2f: plan after the warm-up %.2f "
                    "(fixed cost not subtracted)\n", sh.name, m, lstr(sh.cands[0]).c_str(), t_plan, t_warm, t_both,
                    t_both - t_warm);
      }
      if (std::getenv("SKINNY_RINGBISECT")) {
        // The stream alone (-ring-notail) of the plan's layout, one difference from bench/stream_study's ring at a
        // time (which streams the same addresses at the ceiling): ring depth 8, no direct first group, no
        // exceptions, no cooperative launch, all four; the bare consumers and producer (perf-notes step 93); the
        // groups in a fresh buffer; and the stream alone of the other layouts.
        namespace fam = solgemm::kernels::family;
        struct Knobs {
          const char* name;
          bool s8, nod0, noexc, nocoop;
          int bare;  // diag bits added
        };
        const Knobs knobs[] = {{"", false, false, false, false, 0},
                               {"-S8", true, false, false, false, 0},
                               {"-nod0", false, true, false, false, 0},
                               {"-noexc", false, false, true, false, 0},
                               {"-nocoop", false, false, false, true, 0},
                               {"-all4", true, true, true, true, 0},
                               {"-bare", false, false, false, false, fam::kBareConsumers},
                               {"-bare-nod0", false, true, false, false, fam::kBareConsumers},
                               {"-bare2", false, false, false, false, fam::kBareConsumers | fam::kBareProducer},
                               {"-bare2-nod0", false, true, false, false, fam::kBareConsumers | fam::kBareProducer}};
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        for (const Knobs& kn : knobs) {
          solgemm::kernels::PackedView vd = v;
          vd.diag = 3 | kn.bare;
          if (kn.s8) vd.max_stages = 8;
          vd.no_direct0 = kn.nod0;
          if (kn.noexc) vd.exc_off = d_zero;
          if (kn.nocoop) vd.split.cnt64 = nullptr;
          const float us = tm.time([&] {
            run_skinny(c, vd, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
          }) - fixed;
          std::printf("%-12s %4d %-18s %9.2f   (stream alone)\n", sh.name, m,
                      (lstr(sh.cands[0]) + "-ring-notail" + kn.name).c_str(), us);
        }
        {  // the groups copied into a fresh 128 MB allocation at offsets 0 and 1 MB: does where they lie matter?
          uint8_t* big;
          CK(cudaMalloc(&big, 128ull << 20));
          std::printf("# groups at %p (%zu mod 2 MB), fresh buffer at %p (%zu mod 2 MB)\n", static_cast<void*>(d_data),
                      reinterpret_cast<uintptr_t>(d_data) % (2u << 20), static_cast<void*>(big),
                      reinterpret_cast<uintptr_t>(big) % (2u << 20));
          for (const size_t off : {size_t{0}, size_t{1} << 20}) {
            CK(cudaMemcpy(big + off, d_data, pk.data.size(), cudaMemcpyDeviceToDevice));
            for (const int dg : {0, 3}) {
              solgemm::kernels::PackedView vd = v;
              vd.data = big + off;
              vd.diag = dg;
              const float us = tm.time([&] {
                run_skinny(c, vd, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
              }) - fixed;
              std::printf("%-12s %4d %-18s %9.2f   (groups in a fresh buffer at +%zu MB)\n", sh.name, m,
                          (lstr(sh.cands[0]) + (dg ? "-ring-notail" : "")).c_str(), us, off >> 20);
            }
          }
          CK(cudaFree(big));
        }
        for (const Layout& l : sh.cands) {
          if (&l == &sh.cands[0]) continue;
          solgemm::kernels::PackedView vd = v;
          vd.diag = 3;
          vd.max_stages = l.stages;
          const solgemm::Config cl = cfg_of(l, nt);
          try {
            const float us = tm.time([&] {
              run_skinny(cl, vd, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
            }) - fixed;
            std::printf("%-12s %4d %-18s %9.2f   (stream alone)\n", sh.name, m, (lstr(l) + "-ring-notail").c_str(), us);
          } catch (const std::exception& e) {
            cudaGetLastError();
          }
        }
      }
      if (std::getenv("SKINNY_RING")) {
        // Ring trace of the plan's layout (perf-notes step 87): per ring iteration, medians over CTAs of the time
        // (us after the CTA's entry) the producer was allowed to refill for it (its empty wait returned), issued
        // its copies, warp 0 and the last compute warp passed its full barrier; the kernel, and the stream alone.
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
        for (const int dg : {0, 3, solgemm::kernels::family::kGroupMajor}) {
          if (dg == solgemm::kernels::family::kGroupMajor && d_data_gm == nullptr) continue;
          solgemm::kernels::PackedView vt = v;
          if (dg == solgemm::kernels::family::kGroupMajor) vt.data = d_data_gm;
          vt.diag = dg | solgemm::kernels::family::kRingTrace;
          vt.trace = trace;
          ring_trace(tm, c, vt, x, m, out, sh.rows, ctas, trace,
                     fmt::format("{} m={} {}{}", sh.name, m, lstr(sh.cands[0]),
                                 dg == 3 ? "-ring-notail" : dg ? "-gm" : ""));
        }
      }
      if (d_data_gm != nullptr) {
        // The group-major copy with one bulk copy per k warp and stage (kGroupMajor, perf-notes step 89) on the
        // library's loop (trace-only instantiation), against the library's kernel, every layout of the list: time,
        // bitwise the same output; then the plan layout's timeline and, with SKINNY_RING, its ring trace.
        for (const Layout& l : sh.cands) {
          const solgemm::Config c = cfg_of(l, nt);
          solgemm::kernels::PackedView vl = v, vg = v;
          vl.max_stages = vg.max_stages = l.stages;
          vg.data = d_data_gm;
          vg.diag = solgemm::kernels::family::kGroupMajor;
          std::vector<uint16_t> o[2];
          float us[2];
          bool ok = true;
          for (int j = 0; j < 2 && ok; ++j) {
            const solgemm::kernels::PackedView& vv = j ? vg : vl;
            try {
              CK(cudaMemset(out, 0xFF, static_cast<size_t>(m) * sh.rows * 2));
              run_skinny(c, vv, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
              CK(cudaStreamSynchronize(tm.s));
            } catch (const std::exception& e) {
              std::printf("%-12s %4d %-18s launch failed: %s\n", sh.name, m, lstr(l).c_str(), e.what());
              cudaGetLastError();
              ok = false;
              break;
            }
            o[j].resize(static_cast<size_t>(m) * sh.rows);
            CK(cudaMemcpy(o[j].data(), out, o[j].size() * 2, cudaMemcpyDeviceToHost));
            us[j] = tm.time([&] { run_skinny(c, vv, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s); }) - fixed;
          }
          if (!ok) continue;
          std::printf("%-12s %4d %-18s library %7.2f us, group-major one copy per k warp %7.2f us (%s)\n", sh.name, m,
                      lstr(l).c_str(), us[0], us[1], o[0] == o[1] ? "same bits" : "OUTPUT DIFFERS");
        }
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        {  // both without exceptions (tables emptied; wrong results): does the exception patch gate the refill?
          solgemm::kernels::PackedView vl = v, vg = v;
          vl.exc_off = vg.exc_off = d_zero;
          vg.data = d_data_gm;
          vg.diag = solgemm::kernels::family::kGroupMajor;
          float us[2];
          for (int j = 0; j < 2; ++j) {
            const solgemm::kernels::PackedView& vv = j ? vg : vl;
            us[j] = tm.time([&] { run_skinny(c, vv, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s); }) - fixed;
          }
          std::printf("%-12s %4d %-18s library-noexc %7.2f us, group-major-noexc %7.2f us\n", sh.name, m,
                      lstr(sh.cands[0]).c_str(), us[0], us[1]);
        }
        const int ctas = c.split_k * static_cast<int>(((sh.rows + 15) / 16 + c.rt_cta - 1) / c.rt_cta);
        span_check(tm, fixed, sh.name, m, ctas, trace, stamps, [&](int j, unsigned long long* tr) {
          solgemm::kernels::PackedView vt = v;
          if (j == 1) {
            vt.data = d_data_gm;
            vt.diag = solgemm::kernels::family::kGroupMajor;
          } else {
            // (the trace-only loop either way: with the trace, diag 0; without, kRingTrace stamps nothing)
            vt.diag = tr ? 0 : solgemm::kernels::family::kRingTrace;
          }
          vt.trace = tr;
          run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
        });
        for (const int g : {0, 1}) {
          solgemm::kernels::PackedView vt = v;
          if (g) {
            vt.data = d_data_gm;
            vt.diag = solgemm::kernels::family::kGroupMajor;
          }
          tm.timeline(fmt::format("{} m={} {}{}", sh.name, m, lstr(sh.cands[0]), g ? "-gm (trace-only)" : " (trace-only)").c_str(),
                      ctas, trace, [&](unsigned long long* tr) {
                        vt.trace = tr;
                        run_skinny(c, vt, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, tm.s);
                      });
        }
      }
      if (std::getenv("SKINNY_WARM") && m == 1) {
        // Does a kernel that follows another one run faster (code, page tables, small buffers warm in L2 and the
        // caches; the weights a second copy, cold)? graph {K(w)} vs {K(w), K(w copy)}, and the read kernel over
        // two buffers as the control.
        uint8_t* d_data2;
        CK(cudaMalloc(&d_data2, pk.data.size()));
        CK(cudaMemcpy(d_data2, d_data, pk.data.size(), cudaMemcpyDeviceToDevice));
        solgemm::kernels::PackedView v2 = v;
        v2.data = d_data2;
        const solgemm::Config c = cfg_of(sh.cands[0], nt);
        auto* o16 = static_cast<__nv_bfloat16*>(out);
        const float k1 = tm.time([&] { run_skinny(c, v, x, m, o16, sh.rows, tm.s); }) - fixed;
        const float k2 = tm.time([&] {
          run_skinny(c, v, x, m, o16, sh.rows, tm.s);
          run_skinny(c, v2, x, m, o16, sh.rows, tm.s);
        }) - fixed;
        const size_t nb = bytes / 16 * 16;
        const float r1 = tm.time([&] { read_stream<<<tm.sms * 2, 512, 0, tm.s>>>(rbuf, nb / 16, tm.sink); }) - fixed;
        const float r2 = tm.time([&] {
          read_stream<<<tm.sms * 2, 512, 0, tm.s>>>(rbuf, nb / 16, tm.sink);
          read_stream<<<tm.sms * 2, 512, 0, tm.s>>>(rbuf2, nb / 16, tm.sink);
        }) - fixed;
        std::printf("warm %s m=%d: plan kernel alone %.2f us, second of two %.2f; read kernel (264x512) alone %.2f, "
                    "second of two %.2f\n", sh.name, m, k1, k2 - k1, r1, r2 - r1);
        CK(cudaFree(d_data2));
      }
      {  // cuBLAS (vendor family) on the raw BF16 weights
        solgemm::kernels::launch_vendor(blas, nullptr, dw, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, sh.k, tm.s);
        CK(cudaStreamSynchronize(tm.s));
        std::vector<uint16_t> o(static_cast<size_t>(m) * sh.rows);
        CK(cudaMemcpy(o.data(), out, o.size() * 2, cudaMemcpyDeviceToHost));
        const double rd = first.empty() ? 0.0 : rel_diff(o, first);
        const float us = tm.time([&] {
          solgemm::kernels::launch_vendor(blas, nullptr, dw, x, m, static_cast<__nv_bfloat16*>(out), sh.rows, sh.k, tm.s);
        }) - fixed;
        std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10.2e\n", sh.name, m, "cublas", us, ceil_us,
                    us / ceil_us, bytes / (us * 1e3), rd);
      }
    }
    std::fflush(stdout);
    CK(cudaFree(d_data));
    if (d_data_gm != nullptr) CK(cudaFree(d_data_gm));
    CK(cudaFree(d_off));
    CK(cudaFree(d_exc));
    CK(cudaFree(d_zero));
    CK(cudaFree(d_blk));
    for (const auto& [sth, d_o, d_e, d_b] : d_thin) {
      CK(cudaFree(d_o));
      CK(cudaFree(d_e));
      CK(cudaFree(d_b));
    }
    CK(cudaFree(dw));
  }

  // Router: 256 x 8192 FP32 as hi + lo.
  if (!only || std::string(only) == "router") {  // (SKINNY_ONLY=router: the router alone)
    const int64_t n = 256, k = 8192;
    float* dw;
    CK(cudaMalloc(&dw, n * k * 4));
    gen_f32<<<1024, 256>>>(dw, n * k, 999, 0.02f);
    std::vector<float> hw(static_cast<size_t>(n * k));
    CK(cudaMemcpy(hw.data(), dw, hw.size() * 4, cudaMemcpyDeviceToHost));
    const solgemm::format::PackedHiLo hl = solgemm::format::encode_hilo(hw.data(), n, k, false);
    uint8_t *d_hi, *d_lo;
    CK(cudaMalloc(&d_hi, hl.hi.size()));
    CK(cudaMalloc(&d_lo, hl.lo.size()));
    CK(cudaMemcpy(d_hi, hl.hi.data(), hl.hi.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_lo, hl.lo.data(), hl.lo.size(), cudaMemcpyHostToDevice));
    void *hl_hi_rm, *hl_lo_rm;  // row-major terms for the vendor path
    {
      std::vector<uint16_t> rh(static_cast<size_t>(n * k)), rl(static_cast<size_t>(n * k));
      solgemm::format::split_rowmajor(hw.data(), n * k, false, rh.data(), rl.data(), nullptr);
      CK(cudaMalloc(&hl_hi_rm, rh.size() * 2));
      CK(cudaMalloc(&hl_lo_rm, rl.size() * 2));
      CK(cudaMemcpy(hl_hi_rm, rh.data(), rh.size() * 2, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(hl_lo_rm, rl.data(), rl.size() * 2, cudaMemcpyHostToDevice));
    }
    solgemm::kernels::HiLoView v;
    v.hi = d_hi;
    v.lo = d_lo;
    v.n = n;
    v.k = k;
    v.row_tiles = hl.row_tiles;
    v.k_groups = hl.k_groups;
    v.split = split;
    const size_t bytes = hl.hi.size() + hl.lo.size();
    const float ceil_us = ceiling(tm, rbuf, bytes) - fixed;
    std::printf("# router: hi+lo, %.1f MB read, plan: %s\n", bytes / 1e6,
                solgemm::select_plan({n, k, solgemm::Storage::hilo}, 1).str().c_str());
    // m > 32 (32-token chunks): layouts with 4 row tiles per CTA re-read the weights from L2 per chunk.
    const std::vector<Layout> cands = {{8, 1, 8, 2}, {8, 1, 16, 1}, {8, 2, 8, 2}};
    // m > 32: 64-token chunks (n_tiles 8, at most 8 compute warps)
    const std::vector<Layout> cands8 = {{8, 2, 4, 4}, {8, 4, 2, 8}, {16, 2, 4, 2}, {16, 4, 2, 4}, {4, 2, 4, 8}, {8, 1, 8, 2}};
    // One router layout at m: launch (or report why not), compare with the first layout's output, time, print.
    auto run_layout = [&](const solgemm::Config& c, int m, const std::string& label, std::vector<float>& first) {
      try {
        run_router(c, v, x, m, static_cast<float*>(out), n, tm.s);
      } catch (const std::exception& e) {
        std::printf("%-12s %4d %-18s launch failed: %s\n", "router", m, label.c_str(), e.what());
        cudaGetLastError();
        return false;
      }
      CK(cudaStreamSynchronize(tm.s));
      std::vector<float> o(static_cast<size_t>(m) * n);
      CK(cudaMemcpy(o.data(), out, o.size() * 4, cudaMemcpyDeviceToHost));
      const double rd = first.empty() ? 0.0 : rel_diff(o, first);
      if (first.empty()) first = o;
      const float us =
          tm.time([&] { run_router(c, v, x, m, static_cast<float*>(out), n, tm.s); }) - fixed;
      std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10.2e\n", "router", m, label.c_str(), us, ceil_us,
                  us / ceil_us, bytes / (us * 1e3), rd);
      return true;
    };
    for (int m : {1, 8, 32, 64, 128, 256}) {
      const int nt = m <= 8 ? 1 : m <= 16 ? 2 : 4;
      if (m > 32) {
        std::vector<float> first;
        for (const Layout& l : cands8) {
          const solgemm::Config c = cfg_of(l, 8);
          if (!run_layout(c, m, lstr(l) + "-nt8", first)) continue;
          if (m == 256 && &l == &cands8[1])
            tm.timeline("router m=256 nt8 cs8/rt4/wk2/g8", 128, trace, [&](unsigned long long* tr) {
              solgemm::kernels::HiLoView vt = v;
              vt.trace = tr;
              run_router(c, vt, x, m, static_cast<float*>(out), n, tm.s);
            });
        }
        // the vendor path of the plan (two BF16 GEMMs, hi then lo 2^-8, into the FP32 output)
        const float us = tm.time([&] {
          solgemm::kernels::launch_vendor_hilo(blas, hl_hi_rm, hl_lo_rm, nullptr, x, m,
                                               static_cast<float*>(out), n, k, tm.s);
        }) - fixed;
        std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10s\n", "router", m, "cublas-hilo", us, ceil_us,
                    us / ceil_us, bytes / (us * 1e3), "-");
      }
      std::vector<float> first;
      for (const Layout& l : cands) {
        if (l.cs * l.wk * l.gpw < hl.k_groups) continue;
        const solgemm::Config c = cfg_of(l, nt);
        if (!run_layout(c, m, lstr(l), first)) continue;
        if (m <= 32 && &l != &cands[0]) {
          solgemm::kernels::HiLoView vn = v;
          vn.no_cluster = true;
          const float un =
              tm.time([&] { run_router(c, vn, x, m, static_cast<float*>(out), n, tm.s); }) - fixed;
          std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10s\n", "router", m,
                      (lstr(l) + "-nocluster").c_str(), un, ceil_us, un / ceil_us, bytes / (un * 1e3), "-");
          const int ctas = l.cs * ((16 + l.rt_cta - 1) / l.rt_cta) * ((m + 8 * nt - 1) / (8 * nt));
          tm.timeline(fmt::format("router m={} {}", m, lstr(l)).c_str(), ctas, trace, [&](unsigned long long* tr) {
            solgemm::kernels::HiLoView vt = v;
            vt.trace = tr;
            run_router(c, vt, x, m, static_cast<float*>(out), n, tm.s);
          });
        }
      }
      if (m <= 32) {
        solgemm::kernels::HiLoView vt = v;
        const solgemm::Config c = cfg_of(cands[0], nt);
        tm.timeline(fmt::format("router m={} {}", m, lstr(cands[0])).c_str(), c.split_k * 16, trace,
                    [&](unsigned long long* tr) {
                      vt.trace = tr;
                      run_router(c, vt, x, m, static_cast<float*>(out), n, tm.s);
                    });
      }
      for (const auto& [suffix, dg] : {std::pair<const char*, int>{"-notail", 2}, {"-nomma", 1}, {"-stream", 3},
                                       {"-nocluster", 16}, {"-nod0", 32}, {"-xonephase", 64}}) {
        solgemm::kernels::HiLoView vd = v;
        vd.diag = dg & ~(16 | 32);
        vd.no_cluster = dg == 16;
        vd.no_direct0 = dg == 32;
        const solgemm::Config c = cfg_of(cands[0], nt);
        const float us =
            tm.time([&] { run_router(c, vd, x, m, static_cast<float*>(out), n, tm.s); }) - fixed;
        std::printf("%-12s %4d %-18s %9.2f %9.2f %8.3f %8.0f %10s\n", "router", m, (lstr(cands[0]) + suffix).c_str(),
                    us, ceil_us, us / ceil_us, bytes / (us * 1e3), "-");
      }
    }
  }
  CK(cudaGetLastError());
  return 0;
}
