// solgemm: the linear projections of LLM inference, out = x @ W^T, at serving batch sizes, on Hopper.
//
// Framework-free public API: raw device pointers, sizes, a cudaStream_t. No PyTorch.
//
//   auto w = solgemm::Weights::prepare(d_W, solgemm::DType::bf16, N, K, stream);   // once, untimed
//   w.run(d_x, m, d_out, rows, stream);                                              // graph-safe
//
// prepare() may pack, compress (losslessly) and repack W; description() says what it chose.
// run() computes out[i, n] = sum_k x[i, k] * W[n, k] for i < m, n < rows (rows <= N: the first `rows` output
// features, e.g. a tensor-parallel slice), writes out as m x rows row-major, and is CUDA-graph safe: no host
// synchronisation, no allocation, no branching on data; any state the kernels use is reset by the kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace solgemm {

// Every error the library reports: one line saying what is wrong, where, and what was expected.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class DType { bf16, f32 };
const char* to_string(DType t);

// The router's FP32 weights: hi + lo split (two BF16 terms, relative error ~2^-17 per weight) or exact.
enum class RouterMode { hi_lo, exact };

struct PrepareOptions {
  bool compress = true;                     // allow the lossless 12-bit code for BF16 weights
  RouterMode router_mode = RouterMode::hi_lo;
  bool tune_vendor = true;                  // BF16: time cuBLASLt's candidates at prepare (1-12 s on an H200 for
                                            // a new shape; later matrices of that shape in the process reuse it), and
                                            // for a 12-bit shape the plan table was not tuned on (and the leading N/2,
                                            // N/4, N/8 rows where they form one: untuned_row_sets), our skinny layouts
                                            // against them (~0.2 s each; served only where faster: docs/kernels.md)
  // BF16 with tune_vendor: a file of tuned choices kept across processes. An entry for this GPU, cuBLASLt version,
  // N and K is used instead of timing; a new tuning is appended. "" = none. Errors (a line that is not an entry,
  // a file that cannot be written) throw solgemm::Error naming the file.
  std::string tune_file;
  int max_m = 4096;                         // largest m run() will be called with (sizes any workspace)
  // The `rows` values run() will be called with (each 1..N), as max_m declares m. Empty (the default): any rows of
  // 1..N. Declared: run(), plan_for() and weight_bits() reject any other row count (solgemm::Error), the split-K
  // workspace is sized for these row counts only, and prepare times untuned skinny layouts (tune_vendor) for each of
  // them that forms an untuned 12-bit shape instead of for N, N/2, N/4, N/8. A row count the plan serves with its own
  // copy of the leading rows (the simt family's 12-bit layout of the first 1024 rows where K = 4096: 6.3 MB) gets that
  // copy only when declared; undeclared, such calls read the raw BF16 rows (docs/kernels.md, "Memory").
  std::vector<int64_t> row_counts;
  // Share one cuBLAS handle and its 32 MiB workspace with every other Weights prepared with this option on the same
  // device, instead of owning them (a model of 200 projections then holds 32 MiB of it, not 6.4 GB). The Weights
  // sharing it then form one ordering domain: none of their calls may run at the same time as another's on the GPU
  // (issue them all on one stream, or order them with events) nor from two host threads at once.
  bool shared_workspace = false;
  // "" = the plan table chooses the kernel family per call; a family's name ("reference", "skinny", "wide",
  // "vendor", "router", "stream") forces it for every call it can serve (tests, experiments, the judge's reference run).
  std::string kernel;
};

class Weights {
 public:
  // W: device pointer to N x K row-major weights of dtype `wt` (bf16 -> out bf16; f32 -> out f32).
  // Runs on `stream` and synchronises it (prepare is untimed and may use the host). The Weights lives on the current
  // CUDA device; its calls must run there.
  static Weights prepare(const void* d_W, DType wt, int64_t n, int64_t k, cudaStream_t stream,
                         const PrepareOptions& opt = {});

  // x: device, m x K BF16 row-major. out: device, m x rows (BF16, or FP32 for FP32 weights). The current device must
  // be the one prepare ran on (x, out and stream on it too).
  // Throws solgemm::Error on bad arguments before touching the GPU; never synchronises.
  // Ordering: a Weights owns scratch memory its kernels share between calls (split-K partials and barrier counters,
  // cuBLAS's workspace and handle), so its calls must not run at the same time on the GPU, as for a cuBLAS handle
  // with a workspace: issue them on one stream (or order calls on different streams with events), from one host
  // thread at a time. Overlapping calls may give wrong results or hang; prepare one Weights per concurrent stream.
  // With PrepareOptions::shared_workspace the rule covers every Weights sharing the workspace on this device.
  void run(const void* d_x, int64_t m, void* d_out, int64_t rows, cudaStream_t stream) const;

  // The kernel and configuration a call of this size would use, as one line.
  std::string plan_for(int64_t m, int64_t rows) const;
  // What prepare chose: storage format, bits per weight, exceptions.
  std::string description() const;
  // Device memory this Weights owns, in bytes: its copy of W (the vendor family's and the reference kernel's operand),
  // the packed code and its tables, the split-K workspaces and counters, and the cuBLAS workspace (32 MiB; not counted
  // with PrepareOptions::shared_workspace: shared). W itself may be freed after prepare. (docs/kernels.md, "Memory")
  size_t device_bytes() const;
  // Bits per weight a call of this size reads (the packed code's size with its side tables for our families,
  // 16 or 32 for cuBLAS and the reference kernel on the raw copy): for floors at the bytes really read.
  double weight_bits(int64_t m, int64_t rows) const;

  int64_t n() const;
  int64_t k() const;
  DType dtype() const;
  DType out_dtype() const;

  Weights(Weights&&) noexcept;
  Weights& operator=(Weights&&) noexcept;
  ~Weights();

  struct Impl;

 private:
  explicit Weights(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace solgemm
