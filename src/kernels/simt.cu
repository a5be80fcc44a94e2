// SIMT family: the raw row-major weights (FP32 or BF16) times a few tokens on the CUDA cores, whole rows per CTA.
//
// Idea: where N is small (the router: 256 rows) the tensor-core families must split K across 8 CTAs per 16-row
// tile to fill the GPU, and the split-K exchange after the stream costs 1.5-2.5 us (perf-notes steps 11-16). With
// FMAs on the CUDA cores a CTA can own just R rows (R = 2 for the router: 128 CTAs) over the whole K, so the only
// reduction is inside the CTA (or a cluster of S CTAs, through distributed shared memory, when S > 1 splits K).
// Each thread issues its RT x U 16-byte weight loads at entry (all of the CTA's bytes in flight at
// once, like the streaming-read ceiling kernel) and multiplies as they land. x comes into shared memory by one
// bulk copy per token (thread 0, an mbarrier) where the CTA's k range is one pass (the plan's shapes): every CTA
// reads the same x, and per-thread copies of those few lines queued for ~2 us (perf-notes step 67); otherwise each
// thread copies the columns it reads with cp.async (no barrier: only it reads them).
//
// Measured (H200, judge at 3969130): the router at m = 1 4.0-4.1 us (the tensor-core router family 5.1), the unpooler
// slice 4.4 (the skinny family 5.2); past 6 (router) or 2 (slice) tokens the tensor-core families win again.
//
//   CTA = RG row groups of TPR threads; thread i of a group: units (16 bytes: 4 FP32 or 8 BF16 k) u = i + TPR j
//   (j < U) of the CTA's k range, for each of its group's RT rows; acc[r][tok] in FP32, k ascending within the
//   thread; then a fixed tree per output: a butterfly over the 32 lanes of each warp, the group's warps in order,
//   and the S cluster ranks in order. Nothing depends on m (only whether a token exists): bitwise deterministic
//   and batch invariant over every m of one variant and split.
//
// Roofline: the router (8.4 MB of FP32) at the streaming ceiling is ~2.8-3.0 us. The FMAs cost RT x m per weight
// unit per thread; at m = 8 on the router that is ~400 instructions per thread after the loads land (~0.5-1 us),
// and every CTA reads all of x through L2, so the family serves few tokens only (plan table). FP32 weights are used
// as they are (no hi + lo split): products and sums in FP32.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>

#include "async_copy.cuh"
#include "decode.cuh"
#include "kernels.hpp"

namespace solgemm::kernels {
namespace {

template <class WT>
struct Unit;
template <>
struct Unit<float> {
  static constexpr int kE = 4;  // weights per 16-byte unit
  // w's element e (FP32 bits)
  __device__ static float w(const uint4& v, int e) {
    return __uint_as_float(e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w);
  }
};
template <>
struct Unit<__nv_bfloat16> {
  static constexpr int kE = 8;
  __device__ static float w(const uint4& v, int e) {
    const uint32_t r = (e >> 1) == 0 ? v.x : (e >> 1) == 1 ? v.y : (e >> 1) == 2 ? v.z : v.w;
    return __uint_as_float((e & 1) ? (r & 0xFFFF0000u) : (r << 16));
  }
};

// x of a unit (kE BF16 values) in shared memory: 8 or 16 bytes.
template <int E>
struct XSlot;
template <>
struct XSlot<4> {
  using T = uint2;
  __device__ static float x(const uint2& v, int e) {
    const uint32_t r = (e >> 1) ? v.y : v.x;
    return __uint_as_float((e & 1) ? (r & 0xFFFF0000u) : (r << 16));
  }
};
template <>
struct XSlot<8> {
  using T = uint4;
  __device__ static float x(const uint4& v, int e) {
    const uint32_t r = (e >> 1) == 0 ? v.x : (e >> 1) == 1 ? v.y : (e >> 1) == 2 ? v.z : v.w;
    return __uint_as_float((e & 1) ? (r & 0xFFFF0000u) : (r << 16));
  }
};

struct Args {
  const void* w = nullptr;           // N x K row-major
  const __nv_bfloat16* x = nullptr;  // m x K
  void* out = nullptr;               // m x rows (FP32 for FP32 weights, else BF16)
  int m = 0, rows = 0, k = 0;
  int split = 1;                     // cluster size along x: the CTAs sharing one row block's K
  int bar_off = 0;                   // shared-memory offset of the x copy's mbarrier (8 bytes)
  int bulk_x = 0;                    // x by one bulk copy per token (one full pass, 16-byte aligned rows): set by launch
  unsigned long long* trace = nullptr;  // bench only: %globaltimer stamps per CTA (8 slots; null in the library)
  int no_bulk_x = 0;                 // bench only: x by per-thread cp.async even where bulk copies apply
};

// Bench timeline (Args::trace): 0 entry, 1 thread 0's x landed, 2 thread 0's first row landed, 3 the CTA barrier after
// the FMAs (the compiler may sink FMAs and their load waits past it: perf-notes step 63), 4 the CTA's tree done, 5 the
// cluster's partials visible, 6 output written.
__device__ __forceinline__ void stamp(unsigned long long* trace, int i) {
  unsigned long long v;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(v));
  trace[(static_cast<size_t>(blockIdx.y) * gridDim.x + blockIdx.x) * 8 + i] = v;
}

__device__ __forceinline__ void cp_async(uint32_t dst, const void* src, int bytes, int src_bytes) {
  if (bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void store_out(float* o, int64_t i, float v) { o[i] = v; }
__device__ __forceinline__ void store_out(__nv_bfloat16* o, int64_t i, float v) { o[i] = __float2bfloat16_rn(v); }

// CTA = RG row groups of TPR = NTH / RG threads; thread i of group g owns rows r0 + g RT + [0, RT) (R = RT RG rows per
// CTA) and units i + TPR j (j < U) of each pass over the CTA's k range; MT tokens per CTA (grid y walks chunks).
template <class WT, int RT, int U, int MT, int RG, int NTH>
__global__ void __launch_bounds__(NTH, 1) simt_kernel(const Args a) {
  constexpr int E = Unit<WT>::kE;
  constexpr int R = RT * RG, V = R * MT, TPR = NTH / RG, WPG = TPR / 32;  // outputs; warps per row group
  static_assert(V <= NTH && TPR % 32 == 0 && NTH % RG == 0, "simt: one thread per output in the tree, whole warps per group");
  using XT = typename XSlot<E>::T;
  using Out = std::conditional_t<std::is_same_v<WT, float>, float, __nv_bfloat16>;
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = threadIdx.x, g = tid / TPR, i = tid % TPR;
  const int rank = a.split > 1 ? static_cast<int>(blockIdx.x) % a.split : 0;
  const int rblock = static_cast<int>(blockIdx.x) / a.split;
  const int r0 = rblock * R, rg0 = r0 + g * RT, tok0 = static_cast<int>(blockIdx.y) * MT;
  const int mt = min(MT, a.m - tok0);
  // The CTA's k range in units (K % E == 0: the launcher checks), balanced over the split.
  const int nu_all = a.k / E;
  const int u_lo = static_cast<int>(static_cast<int64_t>(nu_all) * rank / a.split);
  const int u_hi = static_cast<int>(static_cast<int64_t>(nu_all) * (rank + 1) / a.split);
  const WT* w = static_cast<const WT*>(a.w);
  float acc[RT][MT];
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int t = 0; t < MT; ++t) acc[r][t] = 0.f;
  const uint32_t xs = family::smem_u32(smem);
  unsigned long long* const trace = tid == 0 ? a.trace : nullptr;
  if (trace) stamp(trace, 0);
  // x by bulk copies (Args::bulk_x: the CTA's k range is exactly one pass): thread 0 copies each token's row segment,
  // which lands in the slot layout below ((t U + j) TPR + i = the natural order of the pass's units), counted on one
  // mbarrier: 1-2 requests per token and CTA instead of one per thread and unit (all CTAs read the same x).
  const uint32_t xbar = xs + static_cast<uint32_t>(a.bar_off);
  if (a.bulk_x) {
    if (tid == 0) {
      family::mbar_init(xbar, 1);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
      const uint32_t bytes = static_cast<uint32_t>(TPR * U * E * 2);
      family::mbar_arrive_expect_tx(xbar, bytes * static_cast<uint32_t>(mt));
      for (int t = 0; t < mt; ++t)
        family::bulk_g2s(xs + static_cast<uint32_t>(t) * bytes,
                         a.x + static_cast<int64_t>(tok0 + t) * a.k + static_cast<int64_t>(u_lo) * E, bytes, xbar);
    }
    __syncthreads();  // (the mbarrier initialised before anyone waits on it)
  }
  for (int p0 = u_lo; p0 < u_hi; p0 += TPR * U) {  // passes (one for the planned shapes)
    if (p0 != u_lo) __syncthreads();  // the previous pass's x slots are read
    // x of the pass: token t, unit p0 + i + TPR j at slot (t U + j) TPR + i (conflict-free reads); with one row
    // group each thread copies exactly the slots it reads (no barrier needed), else the CTA shares them.
    for (int sl = tid; !a.bulk_x && sl < mt * U * TPR; sl += NTH) {
      const int ii = sl % TPR, tj = sl / TPR, t = tj / U, j = tj % U;
      const int u = p0 + ii + TPR * j;
      const bool ok = u < u_hi;
      const __nv_bfloat16* src = ok ? a.x + static_cast<int64_t>(tok0 + t) * a.k + static_cast<int64_t>(u) * E : a.x;
      cp_async(xs + static_cast<uint32_t>(sl * sizeof(XT)), src, static_cast<int>(sizeof(XT)),
               ok ? static_cast<int>(sizeof(XT)) : 0);
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    uint4 wv[RT][U];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int u = p0 + i + TPR * j;
        wv[r][j] = (u < u_hi && rg0 + r < a.rows)
                       ? ld_stream16(w + static_cast<int64_t>(rg0 + r) * a.k + static_cast<int64_t>(u) * E)
                       : make_uint4(0, 0, 0, 0);
      }
    if (a.bulk_x) {
      family::mbar_wait(xbar, 0);
    } else {
      asm volatile("cp.async.wait_all;\n" ::: "memory");
      if (RG > 1) __syncthreads();
    }
    if (trace && p0 == u_lo) stamp(trace, 1);
    const XT* xv = reinterpret_cast<const XT*>(smem);
#pragma unroll
    for (int t = 0; t < MT; ++t) {
      if (t < mt) {
#pragma unroll
        for (int j = 0; j < U; ++j) {
          const XT xu = xv[(t * U + j) * TPR + i];
#pragma unroll
          for (int e = 0; e < E; ++e) {
            const float xe = XSlot<E>::x(xu, e);
#pragma unroll
            for (int r = 0; r < RT; ++r) acc[r][t] = fmaf(Unit<WT>::w(wv[r][j], e), xe, acc[r][t]);
          }
        }
      }
    }
  }
  // The CTA's tree, per output (row, t) of a token that exists: a butterfly over the 32 lanes of each warp (xor 16,
  // 8, 4, 2, 1: every lane ends with the same sum), then the row group's warps in order by one thread. Only the mt
  // real tokens are reduced (the tree of each output is the same whatever mt: batch invariant).
  if (trace) stamp(trace, acc[0][0] == 12345.f ? 1 : 2);
  __syncthreads();  // x slots free
  if (trace) stamp(trace, 3);
  float* wsum = reinterpret_cast<float*>(smem);  // [warp][r][t]
  const int lane = tid & 31, warp = tid >> 5;
#pragma unroll
  for (int t = 0; t < MT; ++t) {
    if (t < mt) {
#pragma unroll
      for (int r = 0; r < RT; ++r) {
        float v = acc[r][t];
#pragma unroll
        for (int off = 16; off >= 1; off /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
        if (lane == 0) wsum[(warp * RT + r) * MT + t] = v;
      }
    }
  }
  __syncthreads();
  // output v = row-in-CTA * MT + t, summed by thread v: row group vg, its row vr, over the group's warps in order
  const int v = tid, vrow = v / MT, t = v % MT, vg = vrow / RT, vr = vrow % RT;
  float s = 0.f;
  if (v < V && t < mt) {
    s = wsum[((vg * WPG) * RT + vr) * MT + t];
#pragma unroll
    for (int w2 = 1; w2 < WPG; ++w2) s += wsum[((vg * WPG + w2) * RT + vr) * MT + t];
  }
  Out* out = static_cast<Out*>(a.out);
  if (trace) stamp(trace, 4);
  if (a.split == 1) {
    if (v < V && t < mt && r0 + vrow < a.rows) store_out(out, static_cast<int64_t>(tok0 + t) * a.rows + r0 + vrow, s);
    if (trace) stamp(trace, 6);
    return;
  }
  // Split K over a cluster: CTA `rank` sums outputs [V rank / S, V (rank + 1) / S) over the ranks in order.
  float* red = wsum + (NTH / 32) * RT * MT;
  if (v < V) red[v] = s;
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  cl.sync();
  if (trace) stamp(trace, 5);
  const int v0 = V * rank / a.split, v1 = V * (rank + 1) / a.split;
  if (tid < v1 - v0) {
    const int vo = v0 + tid, ro = vo / MT, to = vo % MT;
    float sum = 0.f;
    for (int q = 0; q < a.split; ++q) {
      const float pv = *cl.map_shared_rank(red + vo, q);
      sum = q == 0 ? pv : sum + pv;
    }
    if (to < mt && r0 + ro < a.rows) store_out(out, static_cast<int64_t>(tok0 + to) * a.rows + r0 + ro, sum);
  }
  if (trace) stamp(trace, 6);
  cl.sync();  // peers read this CTA's red until here
}

template <class WT, int RT, int U, int MT, int RG, int NTH>
void launch_variant(const Args& a, cudaStream_t stream) {
  constexpr auto kern = simt_kernel<WT, RT, U, MT, RG, NTH>;
  constexpr int E = Unit<WT>::kE, R = RT * RG, V = R * MT;
  const size_t xbytes = static_cast<size_t>(std::min(MT, a.m)) * U * (NTH / RG) * E * 2;
  const size_t pbytes = (static_cast<size_t>(NTH / 32) * RT * MT + V) * 4;  // the warps' sums, the cluster's shares
  const size_t region = (std::max(xbytes, pbytes) + 15) / 16 * 16;
  const size_t smem = region + 16;  // + the x copy's mbarrier
  Args b = a;
  b.bar_off = static_cast<int>(region);
  // Bulk copies of x: the CTA's k range is one full pass (K / E units over the split, exactly TPR U), 16-byte rows
  // (x aligned, K % 8 == 0) and no cluster split (one rank's k range starts at 0).
  const int64_t units = a.k / E;
  b.bulk_x = (a.split == 1 && units == static_cast<int64_t>(NTH / RG) * U && a.k % 8 == 0 &&
              reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && !a.no_bulk_x)
                 ? 1
                 : 0;
  ensure_dynamic_smem<kern, 227 * 1024>("simt kernel");
  const int rblocks = (a.rows + R - 1) / R;
  const LaunchCfg cfg(dim3(static_cast<unsigned>(rblocks * a.split), static_cast<unsigned>((a.m + MT - 1) / MT), 1), NTH,
                      smem, stream, false, a.split);
  const cudaError_t e = cudaLaunchKernelEx(&cfg.lc, kern, b);
  if (e != cudaSuccess) throw Error(fmt::format("solgemm: simt launch: CUDA error: {}", cudaGetErrorString(e)));
}

}  // namespace

bool simt_supports(DType wt, int64_t k, const void* x) {
  const int e = wt == DType::f32 ? 4 : 8;
  return k % e == 0 && reinterpret_cast<uintptr_t>(x) % (2 * e) == 0;
}

// Config: split_k = S (cluster size), rt_cta = R (rows per CTA), wk = RG (row groups), gpw = U (units per row per
// thread), n_tiles = tokens per CTA, warps = threads / 32. Compiled: the plan's two variants (perf-notes step 63: 1024
// threads per CTA and the o layer's 64 rows per CTA were slower).
void launch_simt(const Config& cfg, DType wt, const void* W, const __nv_bfloat16* x, int64_t m, void* out,
                 int64_t rows, int64_t k, cudaStream_t stream, unsigned long long* trace, bool no_bulk_x) {
  if (!simt_supports(wt, k, x))
    throw Error(fmt::format("solgemm: simt: K = {} must be a multiple of {} and x aligned to {} bytes", k,
                            wt == DType::f32 ? 4 : 8, wt == DType::f32 ? 8 : 16));
  if (cfg.split_k < 1 || cfg.split_k > 8 || m > (int64_t{1} << 30) || rows > (int64_t{1} << 30) || k > (int64_t{1} << 30))
    throw Error(fmt::format("solgemm: simt: split {} (expected 1..8), m = {}, rows = {}, K = {}", cfg.split_k, m, rows, k));
  Args a;
  a.w = W;
  a.x = x;
  a.out = out;
  a.m = static_cast<int>(m);
  a.rows = static_cast<int>(rows);
  a.k = static_cast<int>(k);
  a.split = cfg.split_k;
  a.trace = trace;
  a.no_bulk_x = no_bulk_x ? 1 : 0;
  const int mt = cfg.n_tiles, nth = 32 * cfg.warps, rg = cfg.wk;
  auto is = [&](int r, int u, int t, int g, int n) {
    return cfg.rt_cta == r && cfg.gpw == u && mt == t && rg == g && nth == n;
  };
  if (wt == DType::f32) {
    if (is(2, 4, 8, 1, 512)) return launch_variant<float, 2, 4, 8, 1, 512>(a, stream);
  } else {
    if (is(8, 1, 4, 1, 512)) return launch_variant<__nv_bfloat16, 8, 1, 4, 1, 512>(a, stream);
  }
  throw Error(fmt::format("solgemm: simt: no compiled variant for {} weights, {} rows in {} groups x {} units per "
                          "thread x {} tokens per CTA, {} threads", to_string(wt), cfg.rt_cta, rg, cfg.gpw, mt, nth));
}

}  // namespace solgemm::kernels
