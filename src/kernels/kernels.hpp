// Internal launch interface of the kernel families (one family per file in src/kernels/). Not installed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "solgemm/format.hpp"
#include "solgemm/plan.hpp"
#include "solgemm/solgemm.hpp"

namespace solgemm::kernels {

// Host queries that enqueue nothing (function attributes, occupancy, device attributes) may run while the caller
// captures a CUDA graph: this switches the thread to relaxed capture mode around them, so that they neither fail
// nor invalidate the caller's capture (the first call of a configuration may well be the captured one).
struct RelaxedCapture {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode); }
  RelaxedCapture(const RelaxedCapture&) = delete;
  RelaxedCapture& operator=(const RelaxedCapture&) = delete;
};

// launch_util.cpp: a TMA map of a row-major BF16 matrix (outer x inner, inner contiguous; inner * 2 bytes a multiple
// of 16, base 16-byte aligned), boxes of box_outer x box_inner (box_inner * 2 = 128: the 128B swizzle), zero fill
// outside the matrix. `who` names the caller in the error.
CUtensorMap bf16_tensor_map(const void* base, int64_t inner, int64_t outer, int box_inner, int box_outer,
                            const char* who);
// launch_util.cpp: the general form: `rank` (1..5) dimensions of BF16, innermost first (dims in elements, strides in
// bytes of dimensions 1.., multiples of 16), the same 128B swizzle and zero fill outside.
CUtensorMap tensor_map(const void* base, int rank, const uint64_t* dims, const uint64_t* strides, const uint32_t* box,
                       const char* who);
// launch_util.cpp: raise a kernel's dynamic shared-memory limit (false on failure); CTAs of a kernel resident at
// once on the current device (0 if the query fails). Both safe inside a stream capture (relaxed mode).
bool set_dynamic_smem(const void* kernel, int bytes);
int64_t resident_ctas(const void* kernel, int threads, int smem_bytes);
// A launch configuration of `grid` CTAs, cooperative (every CTA resident at once: the split-K barriers of the wide,
// stream and skinny families) when asked, in clusters of `cluster_x` CTAs along x when > 1 (the skinny and simt
// families' distributed-shared-memory reductions). Not copyable (lc.attrs points into it).
struct LaunchCfg {
  cudaLaunchConfig_t lc{};
  cudaLaunchAttribute attr[2]{};
  LaunchCfg(int64_t grid, int threads, size_t smem_bytes, cudaStream_t stream, bool cooperative)
      : LaunchCfg(dim3(static_cast<unsigned>(grid), 1, 1), threads, smem_bytes, stream, cooperative) {}
  LaunchCfg(dim3 grid, int threads, size_t smem_bytes, cudaStream_t stream, bool cooperative, int cluster_x = 1) {
    lc.gridDim = grid;
    lc.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
    lc.dynamicSmemBytes = smem_bytes;
    lc.stream = stream;
    lc.attrs = attr;
    if (cooperative) {
      attr[lc.numAttrs].id = cudaLaunchAttributeCooperative;
      attr[lc.numAttrs++].val.cooperative = 1;
    }
    if (cluster_x > 1) {
      attr[lc.numAttrs].id = cudaLaunchAttributeClusterDimension;
      attr[lc.numAttrs].val.clusterDim.x = static_cast<unsigned>(cluster_x);
      attr[lc.numAttrs].val.clusterDim.y = 1;
      attr[lc.numAttrs++].val.clusterDim.z = 1;
    }
  }
  LaunchCfg(const LaunchCfg&) = delete;
  LaunchCfg& operator=(const LaunchCfg&) = delete;
};
// The same, once per kernel (cached): Kernel is a __global__ function, `who` names it in the error.
template <auto Kernel, int kSmem>
void ensure_dynamic_smem(const char* who) {
  static const bool ok = set_dynamic_smem(reinterpret_cast<const void*>(Kernel), kSmem);
  if (!ok) throw Error(std::string("solgemm: ") + who + ": cannot set its shared-memory size");
}
template <auto Kernel, int kThreads, int kSmem>
int64_t resident_ctas_cached() {
  static const int64_t n = resident_ctas(reinterpret_cast<const void*>(Kernel), kThreads, kSmem);
  return n;
}

// reference.cu: any storage that is raw (BF16 or FP32 weights, row-major N x K), any m, any rows.
void launch_reference(DType wt, const void* W, const __nv_bfloat16* x, int64_t m, void* out, int64_t rows,
                      int64_t k, cudaStream_t stream);

// vendor.cu: cuBLAS (cublasGemmEx, BF16 in/out, FP32 compute) on raw row-major BF16 weights, on a handle and a
// workspace made at prepare (set again after every cublasSetStream, which resets it: graph-capturable).
struct Blas {
  void* handle = nullptr;     // cublasHandle_t
  void* workspace = nullptr;
  size_t bytes = 0;
};
// cuBLASLt algorithms chosen at prepare by timing the heuristic's candidates (cold L2) for one BF16 matrix
// (all N rows) at m = 1, 2, 4, ..., 32, 48, 64, 96, 128, 192, 256 (tune_choice.hpp); a call uses its m's bucket (the
// next of those tops) when the algorithm serves that m, else plain cublasGemmEx. Only algorithms without reduction or with an FP32 workspace reduction
// (deterministic, no BF16 partials) are considered.
// tune_file (PrepareOptions::tune_file): read first (an entry for this GPU, cuBLASLt version, N, K and workspace is
// used instead of timing), appended to after a new tuning; "" = none.
struct VendorTable;
// The GPU part of a tune file's key (name without spaces, SM count, cuBLASLt version), shared by the tuners.
std::string tune_gpu_key(int dev);
std::shared_ptr<VendorTable> tune_vendor(const Blas& blas, const void* W, int64_t n, int64_t k, cudaStream_t stream,
                                         const std::string& tune_file);
std::string describe(const VendorTable& t);
void launch_vendor(const Blas& blas, const VendorTable* table, const void* W, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, int64_t k, cudaStream_t stream);

// vendor.cu: x for the prepare-time tuners: N(0, 1)-like BF16 values (a hash of the index), as real activations.
void fill_tuning_x(__nv_bfloat16* x, size_t count, cudaStream_t stream);

// vendor.cu, FP32 weights stored as row-major BF16 hi, lo (and lo2 when exact, else nullptr): cuBLAS GEMMs
// with FP32 output, out = x hi^T + 2^-8 x lo^T (+ 2^-16 x lo2^T), accumulated in out (beta = 1).
void launch_vendor_hilo(const Blas& blas, const void* hi, const void* lo, const void* lo2, const __nv_bfloat16* x,
                        int64_t m, float* out, int64_t rows, int64_t k, cudaStream_t stream);

// Split-K workspace of the skinny and router families (allocated once at prepare, src/api.cu): FP32
// partial tiles and one arrival counter per output tile. Counters are 0 at rest: each launch's last-arriving
// CTA resets its tile's counter, so CUDA-graph replays need no host-side reset. One call at a time per
// Weights (two concurrent calls on different streams would share it).
struct SplitWs {
  float* ws = nullptr;
  unsigned* cnt = nullptr;
  size_t ws_floats = 0, counters = 0;
  // The skinny family's shared split-K tail (one cooperative launch, every CTA adds 1/cs of its tile): 64-bit
  // arrival counters that only grow, slot (cs - 2) * tiles64 + tile (one set per split, cs = 2..16), zeroed once.
  unsigned long long* cnt64 = nullptr;
  size_t tiles64 = 0;
};
// Capacity (floats, counters) that calls with m <= max_m and rows <= n need under the plan table, for the
// skinny family (packed storage; m capped at 64) or the router family (hilo storage). `forced`: PrepareOptions::kernel's
// family, whose own layouts are then sized instead of the plan's (nullopt: the plan's layouts only, so that a Weights
// does not hold workspace for layouts only a forced family runs: the router's 75 MB for forced router calls of 4096
// tokens, perf-notes step 215). `row_counts`: PrepareOptions::row_counts (empty: every row count 1..n; else only
// those calls, and the untuned layouts timed for them).
SplitWs split_ws_need(Storage storage, int64_t n, int64_t k, int64_t max_m, std::optional<Kernel> forced = std::nullopt,
                      const std::vector<int64_t>& row_counts = {});

// How a skinny launch reduced split K (launch_skinny's `path`; tests and the bench): no split, through a cluster's
// distributed shared memory, through the workspace in one cooperative launch, or by the last arrival.
enum LaunchPath : int { kPathNone = 0, kPathPlain = 1, kPathCluster = 2, kPathCooperative = 3, kPathLastArrival = 4 };

// Device view of a packed matrix (format.hpp).
struct PackedView {
  const uint8_t* data = nullptr;     // groups
  const uint32_t* exc_off = nullptr; // row_tiles * k_blocks + 1
  const uint32_t* exc = nullptr;
  const uint32_t* exc_blk = nullptr; // derived (exception_blocks): the block index of every entry (skinny family)
  bool bits12 = true;
  int base = 112;
  int64_t n = 0, k = 0, row_tiles = 0, k_groups = 0, k_blocks = 0;
  SplitWs split;                     // skinny family: split-K workspace (needed when the plan's split_k > 1)
  int diag = 0;                      // bench only (skinny_family.cuh Args::diag); 0 everywhere else
  unsigned long long* trace = nullptr;  // bench only (skinny_family.cuh Args::trace); null everywhere else
  int max_stages = 0;                // bench only: ring depth cap if > 0
  bool no_cluster = false;           // bench only: never reduce split K through a cluster
  bool no_direct0 = false;           // bench only: the ring carries every group (skinny_family.cuh Args::direct0)
  int xring = 0;                     // x through the ring (skinny_family.cuh use_xring): 0 = the launcher's rule,
                                     // 1 = wherever it applies, -1 = never (bench A/B)
  int xbox = 0;                      // the x ring's boxes (family_dispatch.cuh; bench A/B): 0 = the launcher's rule,
                                     // 1 = one 4-D box of 8 n_tiles rows per stage where runs are whole, 2 = one 2-D box
                                     // of min(m, 8 n_tiles) rows per k warp, 3 = one 2-D box of 8 n_tiles rows per k warp
};

// The view of a host-encoded matrix (format::encode_bf16) whose groups and exception tables were copied to the device
// (the bench's and the tests' launches of the family itself; the library builds its views from its own metadata).
inline PackedView packed_view(const format::Packed& pk, const uint8_t* data, const uint32_t* exc_off,
                              const uint32_t* exc, const uint32_t* exc_blk) {
  PackedView v;
  v.data = data;
  v.exc_off = exc_off;
  v.exc = exc;
  v.exc_blk = exc_blk;
  v.bits12 = pk.code == format::Code::bits12;
  v.base = pk.base;
  v.n = pk.n;
  v.k = pk.k;
  v.row_tiles = pk.row_tiles;
  v.k_groups = pk.k_groups;
  v.k_blocks = pk.k_blocks;
  return v;
}

// skinny.cu: m <= 64, packed12 / packed16. `path` (tests, bench): set to how the launch reduced split K (LaunchPath).
void launch_skinny(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m,
                   __nv_bfloat16* out, int64_t rows, cudaStream_t stream, int* path = nullptr);

// tune_untuned.cpp: a 12-bit BF16 shape the plan table was not tuned on (select_plan's untuned rule applies), timed at
// prepare (perf-notes step 211): the rule's candidate layouts (untuned_skinny_candidates) at 1 and 8 tokens against
// the vendor family as `table` tuned it, the fastest kept, then served at 1..max_m where it beat the vendor family by
// 2% or more in interleaved pairs at every m of 1, 2, 4, 8, 16 up to there. tune_file as tune_vendor's (its own tag); later matrices
// of the shape in the process reuse the choice. desc: what was chosen and measured, for Weights::description.
struct UntunedTuning {
  UntunedChoice choice;
  std::string desc;
};
// `rows`: the row count timed (one of untuned_row_sets(w.n, w.k): calls of the matrix's first `rows` rows).
UntunedTuning tune_untuned(const Blas& blas, const VendorTable* table, const void* W, const PackedView& w, int64_t rows,
                           const ExceptionLoad& exc, int64_t max_m, cudaStream_t stream, const std::string& tune_file);

// wide.cu: 64 < m (tuned for m <= 256), packed12 / packed16: decoded weights as wgmma's register A operand.
void launch_wide(const Config& cfg, const PackedView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                 int64_t rows, cudaStream_t stream);

// Device view of the router's hi + lo matrices (16-bit group layout each, see format.hpp / docs/format.md).
struct HiLoView {
  const uint8_t* hi = nullptr;       // packed16 groups of bf16(W)
  const uint8_t* lo = nullptr;       // packed16 groups of bf16((W - hi) * 2^8)
  const uint8_t* lo2 = nullptr;      // exact mode only: third term, nullptr otherwise
  int64_t n = 0, k = 0, row_tiles = 0, k_groups = 0;
  SplitWs split;                     // split-K workspace (needed when the plan's split_k > 1)
  int diag = 0;                      // bench only (skinny_family.cuh Args::diag); 0 everywhere else
  unsigned long long* trace = nullptr;  // bench only (skinny_family.cuh Args::trace); null everywhere else
  int max_stages = 0;                // bench only: ring depth cap if > 0
  bool no_cluster = false;           // bench only: never reduce split K through a cluster
  bool no_direct0 = false;           // bench only: the ring carries every group (skinny_family.cuh Args::direct0)
};

// wide.cu, the hi + lo source: the router's terms into wgmma (64 rows per CTA, K split across the GPU and reduced
// through the workspace in a fixed order, one cooperative launch per 32 / 64 / 128 / 256-token chunk as the config's
// n_tiles says), FP32 out, any m (tuned for 32 < m <= 256). Falls back to the router family where x cannot be read
// by TMA (K % 8 != 0 or x not 16-byte aligned).
struct WideWsNeed {
  size_t floats = 0, counters = 0;
};
WideWsNeed wide_hilo_ws_need(const Config& cfg, int64_t m, int64_t rows);
void launch_wide_hilo(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                      int64_t rows, cudaStream_t stream);

// stream.cu: the raw row-major BF16 weights streamed by TMA into wgmma (CTAs of 128 rows x 8..256 tokens, one
// launch per 256-token chunk), K split across the GPU and reduced through its workspace in a fixed order. Needs
// K % 8 == 0 and 16-byte aligned x and W (TMA).
constexpr int kStreamMaxSplit = 16;
struct StreamWs {
  float* ws = nullptr;               // partials
  unsigned long long* cnt = nullptr; // (split - 2, row block) -> 64-bit arrival counter (never reset)
  size_t ws_floats = 0, counters = 0;
  int64_t row_blocks = 0;            // of all N rows
};
struct StreamView {
  const __nv_bfloat16* w = nullptr;  // the raw copy, N x K row-major
  int64_t n = 0, k = 0;
  StreamWs ws;
  unsigned long long* trace = nullptr;  // bench only: per-CTA timeline stamps; null in the library
};
int stream_tokens(int64_t m);                       // tokens per CTA for m (8, 16, ..., 256)
StreamWs stream_ws_need(int64_t n, int64_t max_m);  // sizes (no pointers) for any split and m <= max_m
void launch_stream(const Config& cfg, const StreamView& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream);

// simt.cu: the raw row-major weights (FP32 -> FP32 out, BF16 -> BF16 out) on the CUDA cores, R rows per CTA over the
// whole K, any m (tuned for a few tokens). Config: rt_cta = rows per CTA, gpw = 16-byte units per row per thread,
// n_tiles = tokens per CTA, split_k = wk = 1, warps = 16. Needs K % 4 == 0 (FP32) or K % 8 == 0 (BF16) and x aligned
// to 8 (16) bytes: simt_supports; launch_simt throws otherwise.
bool simt_supports(DType wt, int64_t k, const void* x);
void launch_simt(const Config& cfg, DType wt, const void* W, const __nv_bfloat16* x, int64_t m, void* out,
                 int64_t rows, int64_t k, cudaStream_t stream, unsigned long long* trace = nullptr,
                 bool no_bulk_x = false);  // (trace, no_bulk_x: bench only)
// The same tensor-core form on the simt 12-bit layout (format.hpp Simt12: the first w.rows rows of a BF16 matrix):
// rows <= w.rows, K == w.k, the layouts gpw 8 / n_tiles 8 or 16 of launch_simt's BF16 rows; decoded in the coded
// domain, exceptions corrected per output after the MMAs (as the skinny family: (P + dp) + dw).
struct Simt12View {
  const uint8_t* data = nullptr;     // blocks, each its rows' first entries then its weights
  const uint32_t* exc_off = nullptr;  // the rows' further entries (side table)
  const uint32_t* exc = nullptr;
  int64_t rows = 0, k = 0, passes = 0;
  int base = 0;
  int no_exc = 0;  // bench only: 1 skips the exception corrections, 2 loads the entries and applies none
};
void launch_simt12(const Config& cfg, const Simt12View& w, const __nv_bfloat16* x, int64_t m, __nv_bfloat16* out,
                   int64_t rows, cudaStream_t stream, unsigned long long* trace = nullptr);

// router.cu: FP32 weights as hi + lo, FP32 out, any m.
void launch_router(const Config& cfg, const HiLoView& w, const __nv_bfloat16* x, int64_t m, float* out,
                   int64_t rows, cudaStream_t stream);

}  // namespace solgemm::kernels
