// solgemm-inspect's engine: what our lossless formats would make of each tensor of a safetensors checkpoint.
// BF16 tensors go through format::encode_bf16 (viewed as rows x cols: 1-D as 1 x n, > 2-D with rows = the
// product of all but the last dimension); F32 tensors are costed as the router's hi + lo (32 bits per weight
// plus group padding); other dtypes are listed as skipped and count unchanged in the file's totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "solgemm/plan.hpp"

namespace solgemm::inspect {

struct TensorReport {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string skipped;          // non-empty: why the tensor is not packed ("dtype U8", "empty")
  int64_t rows = 0, cols = 0;   // the matrix view
  std::string code;             // "12-bit", "16-bit" (fallback), "hi+lo"
  bool fallback = false;        // BF16 that does not fit the 12-bit code
  int base = 0;                 // BF16: exponent base of the 12-bit window
  int64_t exceptions = 0;       // BF16: weights outside the window (stored as exceptions when 12-bit)
  double exception_rate = 0;
  double bits = 0;              // bits per weight as packed, side tables included
  uint64_t bytes_now = 0;       // as stored in the file
  double bytes_packed = 0;      // as the kernels would read it (skipped: = bytes_now)
  std::string ours;             // 2-D tensors: the token counts of 1..64 that solgemm's own kernels serve (own_kernels)
};

struct FileReport {
  std::string path;
  std::vector<TensorReport> tensors;
  uint64_t bytes_now = 0;       // every tensor
  double bytes_packed = 0;      // every tensor, packed where we pack
  uint64_t packable_now = 0;    // BF16 + F32 tensors only
  double packable_packed = 0;
};

// The plan's kernel families over m = 1..64 for an N x K matrix of this storage (the weights as out = x @ W.T: N = rows,
// K = cols) other than the vendor family (cuBLAS), as runs, e.g. "skinny 1-16" or "simt 1-8, skinny 9-16"; "-" where
// every m goes to cuBLAS. Shapes the plan was not tuned on: the most prepare can serve on the skinny family, e.g. "skinny
// 1-16 at most (timed at prepare)" (prepare serves 1..max_m of it where its timed layout beats cuBLASLt).
std::string own_kernels(int64_t rows, int64_t k, Storage storage, const ExceptionLoad& exc);
// Reads and analyses every tensor; throws solgemm::Error (naming file, tensor, problem) on a broken file.
FileReport inspect_file(const std::string& path);
// Human-readable table plus the totals line.
std::string render(const FileReport& r);

}  // namespace solgemm::inspect
