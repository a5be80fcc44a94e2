// fixed_cost_probe: what the judge's fixed cost (the median replay of a graph of one empty kernel) measures, next
// to real calls, under variants of the sequence before each timed replay (perf-notes step 76: the judge's
// empty-kernel graph replays 0.3-0.6 us slower than torch's in scripts/torch_baseline.py, while the raw replay
// times of the same cuBLAS calls agree within a few percent).
// Sequence per replay, as judge/timing.cpp: [regenerate x], flush (a read of >= 4x the L2), [a tiny kernel],
// event, graph, event. Variants: judge (regen, flush), noregen (flush), tiny (regen, flush, tiny kernel: torch's
// flush ends with a one-element copy). Graphs: the empty kernel, and cublasGemmEx (BF16, as the judge's baseline)
// for o and qkv_gate at m = 1. The variants and graphs are interleaved replay by replay, so drift touches all alike.
// Usage: fixed_cost_probe [replays per cell, default 400]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "device.hpp"
#include "kernels.hpp"
#include "timing.hpp"

namespace j = solgemm::judge;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(10, std::atoi(argv[1])) : 400;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, 0);
  const size_t flush_bytes = std::max<size_t>(size_t{512} << 20, 4 * static_cast<size_t>(p.l2CacheSize));
  j::DeviceBuffer flush(flush_bytes, "flush"), sink(1 << 20, "sink"), ws(size_t{32} << 20, "workspace");
  cudaMemsetAsync(flush.get(), 1, flush.bytes(), s);
  struct Gemm {
    const char* name;
    int n, k;
  };
  const Gemm gemms[] = {{"o m=1", 8192, 1024}, {"qkv_gate m=1", 2304, 8192}};
  j::DeviceBuffer W(size_t{2304} * 8192 * 2, "W"), x(size_t{8192} * 2, "x"), out(size_t{8192} * 4, "out"),
      xf(64, "tiny out");
  cudaMemsetAsync(W.get(), 0x3c, W.bytes(), s);
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, s);
  cublasSetWorkspace(h, ws.get(), ws.bytes());
  // Two instantiations of every call (the judge's paired replays alternate two graphs).
  std::vector<j::Graph> graphs, twins;
  std::vector<std::string> names{"empty"};
  for (int copy = 0; copy < 2; ++copy) {
    auto& dst = copy == 0 ? graphs : twins;
    dst.push_back(j::Graph::capture(s, [](cudaStream_t st) { j::kernels::empty_kernel(st); }, "empty"));
    for (const Gemm& g : gemms) {
      dst.push_back(j::Graph::capture(
          s,
          [&](cudaStream_t) {
            const float one = 1.f, zero = 0.f;
            cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, g.n, 1, g.k, &one, W.get(), CUDA_R_16BF, g.k, x.get(),
                         CUDA_R_16BF, g.k, &zero, out.get(), CUDA_R_16BF, g.n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT);
          },
          g.name));
      if (copy == 0) names.push_back(g.name);
    }
  }
  const char* variants[] = {"judge (regen, flush)", "noregen (flush)", "tiny (regen, flush, tiny kernel)"};
  constexpr int kV = 3;
  const int G = static_cast<int>(graphs.size());
  std::vector<double> t[kV][8];
  std::vector<cudaEvent_t> ev(2 * kV * G);
  for (cudaEvent_t& e : ev) cudaEventCreate(&e);
  uint64_t seed = 0;
  for (int r = 0; r < reps + 10; ++r) {
    for (int v = 0; v < kV; ++v)
      for (int g = 0; g < G; ++g) {
        if (v != 1) j::kernels::generate_x(++seed, 1, 8192, static_cast<uint16_t*>(x.get()), s);
        j::kernels::flush_l2(flush.get(), flush.bytes(), static_cast<unsigned*>(sink.get()), p.multiProcessorCount, s);
        if (v == 2) j::kernels::bf16_to_f32(static_cast<const uint16_t*>(x.get()), static_cast<float*>(xf.get()), 1, s);
        const int i = 2 * (v * G + g);
        cudaEventRecord(ev[i], s);
        graphs[g].launch(s);
        cudaEventRecord(ev[i + 1], s);
      }
    cudaStreamSynchronize(s);
    if (r < 10) continue;  // warm-up
    for (int v = 0; v < kV; ++v)
      for (int g = 0; g < G; ++g) {
        float ms = 0;
        cudaEventElapsedTime(&ms, ev[2 * (v * G + g)], ev[2 * (v * G + g) + 1]);
        t[v][g].push_back(1000.0 * ms);
      }
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  fmt::print("{} ({} SMs); {} replays per cell, raw median us (fixed cost not subtracted); flush {} MB\n", p.name,
             p.multiProcessorCount, reps, flush_bytes >> 20);
  fmt::print("{:<34}", "variant");
  for (const std::string& n : names) fmt::print("{:>14}", n);
  for (int g = 1; g < G; ++g) fmt::print("{:>14}", names[g] + " - empty");
  fmt::print("\n");
  for (int v = 0; v < kV; ++v) {
    fmt::print("{:<34}", variants[v]);
    for (int g = 0; g < G; ++g) fmt::print("{:>14.2f}", med(t[v][g]));
    for (int g = 1; g < G; ++g) fmt::print("{:>14.2f}", med(t[v][g]) - med(t[v][0]));
    fmt::print("\n");
  }
  // Replay patterns (judge variant: regen, flush, event, graph, event), as the judge uses them: "blocked" = one graph
  // replayed `reps` times in a row (the judge's fixed cost), "ABBA" = the graph and its twin alternating A B B A
  // (the judge's pairs), "rotating" = the graphs in turn.
  //
  // Runs a sequence of replays as the judge does (batches of 64 between synchronisations); returns their times.
  std::vector<cudaEvent_t> bev(512);
  for (cudaEvent_t& e : bev) cudaEventCreate(&e);
  size_t batch = 64;
  auto run_seq = [&](const std::vector<const j::Graph*>& seq) {
    std::vector<double> us;
    for (size_t b0 = 0; b0 < seq.size(); b0 += batch) {
      const size_t nb = std::min<size_t>(batch, seq.size() - b0);
      for (size_t i = 0; i < nb; ++i) {
        j::kernels::generate_x(++seed, 1, 8192, static_cast<uint16_t*>(x.get()), s);
        j::kernels::flush_l2(flush.get(), flush.bytes(), static_cast<unsigned*>(sink.get()), p.multiProcessorCount, s);
        cudaEventRecord(bev[2 * i], s);
        seq[b0 + i]->launch(s);
        cudaEventRecord(bev[2 * i + 1], s);
      }
      cudaStreamSynchronize(s);
      for (size_t i = 0; i < nb; ++i) {
        float ms = 0;
        cudaEventElapsedTime(&ms, bev[2 * i], bev[2 * i + 1]);
        us.push_back(1000.0 * ms);
      }
    }
    return us;
  };
  const char* pn[] = {"blocked (one graph in a row)", "ABBA (graph and its twin)", "rotating (graphs in turn)"};
  j::Bench bench(s, p.multiProcessorCount, p.l2CacheSize, size_t{512} << 20);
  const j::Bench::Regenerate regen = [&](uint64_t sd, cudaStream_t st) {
    j::kernels::generate_x(sd, 1, 8192, static_cast<uint16_t*>(x.get()), st);
  };
  for (int round = 0; round < 4; ++round) {
    batch = round < 2 ? 64 : 256;
    fmt::print("\nreplay patterns, round {}, batches of {} (raw median us){:<4}", round + 1, batch, "");
    for (const std::string& n : names) fmt::print("{:>14}", n);
    fmt::print("\n");
    std::vector<double> res[3][8];
    for (int g = 0; g < G; ++g) {
      std::vector<const j::Graph*> blocked(reps, &graphs[g]), abba;
      for (int r = 0; r < reps / 4; ++r)
        abba.insert(abba.end(), {&graphs[g], &twins[g], &twins[g], &graphs[g]});
      res[0][g] = run_seq(blocked);
      res[1][g] = run_seq(abba);
    }
    std::vector<const j::Graph*> rot;
    for (int r = 0; r < reps; ++r)
      for (int g = 0; g < G; ++g) rot.push_back(&graphs[g]);
    const std::vector<double> rt = run_seq(rot);
    for (size_t i = 0; i < rt.size(); ++i) res[2][i % G].push_back(rt[i]);
    for (int q = 0; q < 3; ++q) {
      fmt::print("{:<42}", pn[q]);
      for (int g = 0; g < G; ++g) fmt::print("{:>14.2f}", med(res[q][g]));
      fmt::print("\n");
    }
    // The same sequences through the judge's Bench::time.
    std::vector<double> jb[2][8];
    for (int g = 0; g < G; ++g) {
      std::vector<j::Bench::Replay> blocked, abba;
      for (int r = 0; r < reps; ++r) blocked.push_back({&graphs[g], static_cast<uint64_t>(r)});
      for (int r = 0; r < reps / 4; ++r)
        for (const j::Graph* q : {&graphs[g], &twins[g], &twins[g], &graphs[g]})
          abba.push_back({q, static_cast<uint64_t>(r)});
      jb[0][g] = bench.time(blocked, regen);
      jb[1][g] = bench.time(abba, regen);
    }
    for (int q = 0; q < 2; ++q) {
      fmt::print("{:<42}", q == 0 ? "Bench::time blocked" : "Bench::time ABBA");
      for (int g = 0; g < G; ++g) fmt::print("{:>14.2f}", med(jb[q][g]));
      fmt::print("\n");
    }
  }
  for (int r = 0; r < 2; ++r) fmt::print("\nBench::fixed_cost_us(400), as run.cpp: {:.2f} us", bench.fixed_cost_us(400, regen));
  fmt::print("\n");
  cublasDestroy(h);
  return 0;
}
