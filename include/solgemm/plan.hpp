// The plan table: every call is dispatched through select_plan(shape, m) -> (kernel family, configuration).
// One table for all shapes; later kernels replace the reference kernel range by range. docs/kernels.md is the
// human-readable version of this table and says why each entry is what it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace solgemm {

enum class Kernel {
  reference,   // simple tiled CUDA-core kernel, any shape, any m (correct, not fast)
  skinny,      // memory-bound m <= 64: packed weights (12-bit or 16-bit) decoded in registers, mma.sync
  router,      // FP32 weights as BF16 hi + lo (or exact), split over K, FP32 out
  wide,        // verify batches 64 < m <= 256: weights as wgmma's register A (packed BF16, or the router's hi + lo)
  vendor,      // cuBLAS on the raw BF16 weights: math-bound m > 64, until a family of ours beats it there
  stream,      // the raw BF16 weights streamed by TMA into wgmma (128 rows x 8..256 tokens per CTA), K split
  simt,        // the raw weights (FP32 or BF16) on the CUDA cores: a few rows per CTA over the whole K, few tokens
};
const char* to_string(Kernel k);

// How the weights are stored after prepare (docs/format.md).
enum class Storage {
  raw_bf16,    // the original row-major BF16 (reference kernel)
  raw_f32,     // the original row-major FP32 (reference kernel)
  packed12,    // 12-bit code, fragment order, exceptions in a side table
  packed16,    // 16-bit fallback, same fragment order
  hilo,        // router: BF16 hi + lo, fragment order
};
const char* to_string(Storage s);

// Skinny / router layout: CTA = rt_cta row tiles (16 rows) x wk warps along K, each warp gpw groups of 64 k;
// split_k CTAs split K further (reduced through a global workspace in a fixed order, no clusters). Chosen per
// shape, never per m (batch invariance); only n_tiles follows m.
struct Config {
  int split_k = 1;       // CTAs sharing one output tile along K (global FP32 workspace, fixed order; no cluster)
  int n_tiles = 1;       // 8-token MMA column tiles per CTA (m <= 8 * n_tiles, else chunks over the grid)
  int warps = 4;         // warps per CTA (= rt_cta * wk for the skinny and router families)
  int rt_cta = 1;        // row tiles per CTA
  int wk = 1;            // warps along K per CTA
  int gpw = 1;           // 64-k groups per warp
  bool k_seq = false;    // skinny, split_k == 2 run as one cluster: the pair's k warps summed as one sequence, as one
                         // CTA of 2 wk warps would (the same bits); else each CTA's wk warps first
  std::string str() const;
};

// A layout of the skinny / router families (split_k, rt_cta, wk, gpw) at n_tiles, as a Config.
// k_seq: Config::k_seq.
Config layout_config(int split_k, int rt_cta, int wk, int gpw, int n_tiles, bool k_seq = false);

struct Plan {
  Kernel kernel = Kernel::reference;
  Config cfg;
  std::string why;       // one line: why this entry
  std::string str() const;
};

// The shape a plan is chosen for: N (rows actually computed), K, weight storage.
struct Shape {
  int64_t rows;
  int64_t k;
  Storage storage;
};

Plan select_plan(const Shape& s, int64_t m);
// The 12-bit code's exceptions of a matrix (prepare measures them): exceptions per weight, and the most in one exception
// block (16 rows x 256 k). The skinny family corrects every exception once per token, so its cost grows with tokens x
// exceptions: where tokens x rate > kExcRateTokens (kExcRateTokensStagedX for layouts that stage x) or tokens x
// block_max > kExcBlockTokens the plan sends the call to the vendor family instead (perf-notes step 182: on the judge's
// llm-like weights, rate ~6-8e-4, the skinny family fell to 0.36-0.82x cuBLAS at 16-32 tokens; on its adversarial
// weights, a block of ~3900, to 0.01-0.05x at every m). The
// judge's default weights (rate <= 8e-5, blocks <= 5) stay under both bounds at every m <= 64.
struct ExceptionLoad {
  double rate = 0;         // exceptions / (N x K)
  int64_t block_max = 0;   // the most exceptions in one block
};
inline constexpr double kExcRateTokens = 5.5e-3;
// The bound of the layouts whose CTAs stage x of their k range in shared memory (split K, not a pair): their exception
// warp reads x there, where the others read it from global memory behind the weight stream (perf-notes step 189: the
// llm-like qkv_gate, rate 7.7e-4, at 8 tokens 11.94 us against cuBLAS 14.05; from 9 tokens (its 2-tile layout) 14.27
// against 13.82).
inline constexpr double kExcRateTokensStagedX = 6.5e-3;
inline constexpr int64_t kExcBlockTokens = 1024;
Plan select_plan(const Shape& s, int64_t m, const ExceptionLoad& exc);
// The plan of one given family for this call (its configuration from the same table), or an Error if the family
// cannot serve it (e.g. skinny past m = 64, router on BF16 storage).
Plan select_plan(const Shape& s, int64_t m, Kernel family);
// The most rows (<= n) of a BF16 matrix with K = k that some plan row sends to the simt family, 0 if none: prepare
// stores that prefix in the simt family's 12-bit layout (format.hpp Simt12) beside the skinny layout.
int64_t simt_rows_bf16(int64_t n, int64_t k);
// BF16 shapes the plan table was not tuned on (12-bit storage, K a multiple of 64, at least kUntunedSkinnyMinWeights
// rows x K): the skinny family with one layout per shape chosen by a rule (plan.cpp, perf-notes step 207) at m <=
// untuned_skinny_max_m (8, 16 or 4: below), the vendor family above (and where no layout fits or the exceptions pass
// the bounds above). One layout for every m it serves: rows batch invariant over that range. With the vendor tuning at
// prepare (the default), prepare times the candidates instead and the plan follows what it measured (UntunedChoice).
struct UntunedLayout {
  int cs, rt_cta, wk, gpw;
};
std::optional<UntunedLayout> untuned_skinny_layout(int64_t rows, int64_t k);
inline constexpr int64_t kUntunedSkinnyMaxM = 8;
inline constexpr int64_t kUntunedSkinnyMinWeights = int64_t{1} << 23;  // smaller: launch-bound, not measured
// 9..16 tokens too where the layout has no split and the matrix holds at least this many weights (tune_plan: 7 of 7
// such shapes 6-22% ahead of the tuned cuBLASLt at 16 tokens; the split layouts and the smaller matrices 2-18% behind);
// layouts with a split only up to kUntunedSkinnySplitMaxM (at 8 tokens one of two split shapes ran 1.8% behind cuBLAS)
inline constexpr int64_t kUntunedSkinnyMaxM16 = 16;
inline constexpr int64_t kUntunedSkinny16MinWeights = int64_t{1} << 24;
inline constexpr int64_t kUntunedSkinnySplitMaxM = 4;
// The most tokens the plan serves an untuned 12-bit shape with on the skinny family (0: none), by the rule alone.
int64_t untuned_skinny_max_m(int64_t rows, int64_t k);
// Whether the plan treats a 12-bit (rows, k) as an untuned shape: no plan row for it, K a multiple of 64 and at least
// kUntunedSkinnyMinWeights weights (prepare then times its layouts: kernels::tune_untuned).
bool untuned_skinny_shape(int64_t rows, int64_t k);
// The row counts prepare times an untuned layout for (kernels::tune_untuned) on a 12-bit N x K matrix: all N rows and
// the leading N/2, N/4, N/8 (the row sets the vendor tuner tunes: a call may compute only the first rows of W, like the
// judge's unpooler slice), each a multiple of 16 that untuned_skinny_shape accepts; so the N rows of a tuned shape are
// not in the list, its leading halves may be. Calls of other row counts take the rule untimed.
std::vector<int64_t> untuned_row_sets(int64_t n, int64_t k);
// With the row counts a user declared (PrepareOptions::row_counts; empty: the list above): each declared count that is
// N or a multiple of 16 and that untuned_skinny_shape accepts, largest first, once each.
std::vector<int64_t> untuned_row_sets(int64_t n, int64_t k, const std::vector<int64_t>& declared);
// The layouts prepare times for an untuned shape (kernels::tune_untuned): the rule's own, then the cheapest of a wider
// set by the rule's cost (clusters up to 16, up to 4 CTAs per SM), at most `count`, distinct.
std::vector<UntunedLayout> untuned_skinny_candidates(int64_t rows, int64_t k, size_t count);
inline constexpr size_t kUntunedCandidates = 12;  // how many prepare times
// What prepare measured for an untuned 12-bit shape (PrepareOptions::tune_vendor; perf-notes step 211): the candidate
// that ran fastest, served at 1..max_m (0: none) where it beat the tuned cuBLASLt by 2% at every m timed up to max_m. It
// replaces the rule for calls of exactly `rows` rows (one of untuned_row_sets); calls of other row counts take the rule.
struct UntunedChoice {
  int64_t rows = 0;
  UntunedLayout layout{};
  int64_t max_m = 0;
};
Plan select_plan(const Shape& s, int64_t m, const ExceptionLoad& exc, const UntunedChoice* measured);
// "reference" -> Kernel::reference, ...; an Error naming the choices for an unknown name.
Kernel kernel_from_string(const std::string& name);

}  // namespace solgemm
