// Data helpers shared by the layout benches (skinny_bench, tune_plan): deterministic Gaussian weights and
// inputs generated on the GPU, and the relative L2 difference of two outputs.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_util.cuh"
#include "kernels/kernels.hpp"
#include "solgemm/format.hpp"

namespace bench {

__device__ inline uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
__device__ inline float gauss(uint64_t i, float sigma) {
  const uint64_t h = mix(i * 0x632BE59BD9B4E019ull);
  const float u1 = (static_cast<float>(h >> 40) + 0.5f) * (1.0f / 16777216.0f);
  const float u2 = static_cast<float>((h >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
  return sigma * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}
__global__ void gen_bf16(__nv_bfloat16* p, int64_t n, uint64_t off, float sigma) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(gauss(off + static_cast<uint64_t>(i), sigma));
}
__global__ void gen_f32(float* p, int64_t n, uint64_t off, float sigma) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] = gauss(off + static_cast<uint64_t>(i), sigma);
}

// ||a - b|| / ||b|| over two outputs (BF16 bits or FP32).
template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double x, y;
    if constexpr (std::is_same_v<T, float>) {
      x = a[i];
      y = b[i];
    } else {
      x = solgemm::format::bf16_to_f32(a[i]);
      y = solgemm::format::bf16_to_f32(b[i]);
    }
    num += (x - y) * (x - y);
    den += y * y;
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// "1,8,16" -> {1, 8, 16} (a command line's list of m values).
inline std::vector<int> int_list(const char* p) {
  std::vector<int> v;
  while (*p) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

// A skinny / router layout named on the command line: "csA/rtB/wkC/gD", optionally "/nc" (never a cluster: split K
// through the workspace), "/lt" (that tail summed by each tile's last arrival), "/xr" or "/xs" (skinny: x through the
// ring wherever it applies, or always staged; PackedView::xring), "/sN" (the ring capped at N stages), "/nd" (no first
// group by plain loads), "/b4" "/be" "/b2" (the x ring's boxes: PackedView::xbox), "/sq" (Config::k_seq). It may cover more k groups than K has (the last k slices then hold fewer).
struct NamedLayout {
  int cs = 1, rt = 1, wk = 1, gpw = 1;
  bool nc = false, lt = false;
  int xring = 0;
  int max_stages = 0;  // "/sN": the ring capped at N stages (0: the launcher's choice)
  bool no_direct0 = false;  // "/nd": every group through the ring (PackedView::no_direct0)
  int xbox = 0;  // "/b4", "/be", "/b2": the x ring's boxes (PackedView::xbox 1, 2, 3)
  bool k_seq = false;  // "/sq": the split CTAs' k warps summed as one sequence (Config::k_seq)
};
// The comma-separated layouts in environment variable `var` (empty when unset); a malformed one ends the program
// with a message naming `who` and `var`.
inline std::vector<NamedLayout> env_layouts(const char* var, const char* who) {
  std::vector<NamedLayout> v;
  const char* e = std::getenv(var);
  if (e == nullptr) return v;
  const std::string s = e;
  for (size_t p = 0; p < s.size();) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    const std::string t = s.substr(p, q - p);
    NamedLayout l;
    if (std::sscanf(t.c_str(), "cs%d/rt%d/wk%d/g%d", &l.cs, &l.rt, &l.wk, &l.gpw) != 4) {
      std::fprintf(stderr, "%s: %s: '%s' is not csA/rtB/wkC/gD[/nc][/lt][/xr|/xs][/sN][/nd][/b4|/be|/b2][/sq]\n", who, var, t.c_str());
      std::exit(2);
    }
    l.nc = t.find("/nc") != std::string::npos;
    l.lt = t.find("/lt") != std::string::npos;
    l.xring = t.find("/xr") != std::string::npos ? 1 : t.find("/xs") != std::string::npos ? -1 : 0;
    if (const size_t sp = t.find("/s"); sp != std::string::npos) l.max_stages = std::atoi(t.c_str() + sp + 2);
    l.no_direct0 = t.find("/nd") != std::string::npos;
    l.k_seq = t.find("/sq") != std::string::npos;
    l.xbox = t.find("/b4") != std::string::npos ? 1 : t.find("/be") != std::string::npos ? 2 : t.find("/b2") != std::string::npos ? 3 : 0;
    v.push_back(l);
    p = q + 1;
  }
  return v;
}

// A split-K workspace of `floats` floats and 65536 zeroed counters, as src/api.cu allocates it (generous: every
// layout a bench runs fits).
inline solgemm::kernels::SplitWs split_workspace(size_t floats) {
  solgemm::kernels::SplitWs split;
  split.ws_floats = floats;
  split.counters = size_t{1} << 16;
  CK(cudaMalloc(&split.ws, split.ws_floats * 4));
  CK(cudaMalloc(&split.cnt, split.counters * 4));
  CK(cudaMemset(split.cnt, 0, split.counters * 4));
  split.tiles64 = split.counters;  // the skinny family's shared tail: 15 sets of 64-bit counters
  CK(cudaMalloc(&split.cnt64, 15 * split.tiles64 * 8));
  CK(cudaMemset(split.cnt64, 0, 15 * split.tiles64 * 8));
  return split;
}

using solgemm::kernels::packed_view;  // (kernels.hpp: the view of a host-encoded matrix on the device)

// A cuBLAS handle with a fixed 32 MiB workspace, as prepare makes it (the vendor family's launch arguments).
inline solgemm::kernels::Blas blas_with_workspace() {
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cublasCreate failed\n");
    std::exit(1);
  }
  void* ws;
  const size_t bytes = size_t{32} << 20;
  CK(cudaMalloc(&ws, bytes));
  cublasSetWorkspace(handle, ws, bytes);
  return {handle, ws, bytes};
}

// The judge's baseline (cublasGemmEx as torch's F.linear calls it) on d_w (n x k) and d_x (m x k): its time (cold graph
// replays, the fixed cost subtracted) and its output, copied back as the reference the benches compare with.
struct Baseline {
  float us;
  std::vector<uint16_t> ref;  // m x n BF16 bits
};
inline Baseline time_baseline(Timer& tm, float fixed, const solgemm::kernels::Blas& blas, const void* d_w,
                              const void* d_x, int64_t m, void* d_ref, int64_t n, int64_t k) {
  auto call = [&] {
    solgemm::kernels::launch_vendor(blas, nullptr, d_w, static_cast<const __nv_bfloat16*>(d_x), m,
                                    static_cast<__nv_bfloat16*>(d_ref), n, k, tm.s);
  };
  call();
  CK(cudaStreamSynchronize(tm.s));
  Baseline b{tm.time(call) - fixed, std::vector<uint16_t>(static_cast<size_t>(m * n))};
  CK(cudaMemcpy(b.ref.data(), d_ref, b.ref.size() * 2, cudaMemcpyDeviceToHost));
  return b;
}

}  // namespace bench
