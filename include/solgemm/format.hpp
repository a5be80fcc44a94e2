// Lossless packed weight formats (docs/format.md is the full spec; this header is its executable form).
//
// BF16 weights use few exponents. The 12-bit code keeps sign and 7 mantissa bits and replaces the 8-bit
// exponent e by a 4-bit code c = e - base, base chosen per matrix so that most weights fit (c in 0..15).
// The decode below adds base << 7 and yields the true BF16 bits directly (no accumulator scaling); the
// "coded BF16" variant (exponent field 112 + c = true * 2^(112 - base)) decodes the same bytes.
// Weights whose exponent does not fit (and every zero, subnormal, Inf and NaN) are exceptions: stored
// exactly in a per-block side table and patched into the decoded fragment. A matrix with too many exceptions
// falls back to the 16-bit layout (same fragment order, raw BF16 bits): still exact, chosen automatically.
//
// Layout (both codes): the matrix is cut into groups of 16 rows x 64 k. A group is what one warp loads for
// four mma.m16n8k16 A fragments (k steps s = 0..3); lane L holds, for k step s and register j = 0..3, the
// BF16 pair (half h = 0, 1) at
//     row = 16 * row_tile + (L >> 2) + 8 * (j & 1),   k = 64 * group + 16 * s + 2 * (L & 3) + 8 * (j >> 1) + h.
// Groups are stored row tile major, k group minor: group index = row_tile * k_groups + k_group, so a CTA that
// owns a row tile and a k range reads one contiguous run of bytes. Inside a group the bytes are chunk-major,
// lane-minor, 16 bytes per lane per chunk, so every warp-wide 16-byte load is 512 contiguous bytes:
//   12-bit group (1536 B): chunk 0: low bytes of k steps 0,1   chunk 1: low bytes of k steps 2,3
//                          chunk 2: four 32-bit "high words", one per k step
//   16-bit group (2048 B): chunk s: the four A registers of k step s (raw BF16 pairs)
// Low byte of coded weight = bits 7..0 of coded BF16 = (c & 1) << 7 | mantissa; per k step the lane's 8 low
// bytes are ordered reg 0 h 0, reg 0 h 1, reg 1 h 0, ..., reg 3 h 1.
// High word of a k step: for register j the bits sign << 15 | (c >> 1) << 8 of its two halves (as positioned
// in a BF16 pair: mask 0x87008700), rotated right by 4 * j; the four registers' masks are disjoint after the
// rotation, so a GPU decodes register j of a k step in four integer instructions (SHF, LOP3, PRMT, IADD):
//     pair = prmt(lowbytes, rotl(W, 4j) & 0x87008700, sel_j) + (base << 7) * 0x00010001
// (after the PRMT each half holds sign | c << 7 | mantissa; adding base << 7 makes the exponent base + c <= 254,
// never carrying into the sign or the other half). Equivalently, OR-ing 0x38003800 instead of adding gives the
// "coded BF16" (exponent 112 + c) = true * 2^(112 - base), for kernels that prefer to scale the accumulator.
// Rows past N and k past K are padding: the placeholder kPadCoded (coded 1.0: c = 15, sign 0, mantissa 0;
// it decodes to 2^(base - 112) with the IADD decode; x is zero there, so padding never reaches out).
// Exceptions: per block of 16 rows x 256 k (4 groups), entries exc[off[b] .. off[b + 1]) in ascending
// position, each uint32 = (row_in_tile * 256 + k_in_block) << 16 | true BF16 bits; the packed slot holds the
// placeholder too; the kernel replaces the whole slot with the true bits (IADD decode: as they are; a kernel
// on the coded-domain variant would need true * 2^(112 - base), not always a BF16 value: don't).
// Block b = row_tile * k_blocks + k_block, k_blocks = ceil(k_groups / 4): K is NOT padded to 256, the last
// block of a row tile just has fewer groups. exc_off has row_tiles * k_blocks + 1 entries, exc_off[0] = 0.
// prmt selectors: sel_j = 0x7150 (j even) or 0x7352 (j odd), lowbytes = the lane's low word j >> 1 of step s.
// 16-bit layout: base = 112 (no scaling), no exception tables (exc_off and exc empty).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace solgemm::format {

inline constexpr int kGroupRows = 16;
inline constexpr int kGroupK = 64;
inline constexpr int kBlockK = 256;                 // exception block: 16 rows x 256 k
inline constexpr int kGroupsPerBlock = kBlockK / kGroupK;
inline constexpr int kBytes12 = 1536;               // bytes of one 12-bit group
inline constexpr int kBytes16 = 2048;               // bytes of one 16-bit group
inline constexpr int kCodedExpBase = 112;           // coded BF16 exponent field = 112 + c
inline constexpr uint32_t kHiMask = 0x87008700u;
inline constexpr uint32_t kHiConst = 0x38003800u;
inline constexpr uint16_t kPadCoded = 0x3F80;       // coded 1.0 (c = 15): fills padding and exception slots
// A matrix falls back to 16 bits when more than this fraction of its weights are exceptions.
inline constexpr double kMaxExceptionRate = 1.0 / 1024.0;

enum class Code : uint8_t { bits12, bits16 };

// Fragment position -> matrix coordinate (inside a group): lane, k step, register, half -> (row, k).
struct Pos { int row, k; };
constexpr Pos frag_pos(int lane, int step, int reg, int half) {
  return {(lane >> 2) + 8 * (reg & 1), 16 * step + 2 * (lane & 3) + 8 * (reg >> 1) + half};
}

struct Packed {
  Code code = Code::bits16;
  int64_t n = 0, k = 0;              // logical shape
  int64_t row_tiles = 0, k_groups = 0, k_blocks = 0;
  int base = 0;                      // exponent base (12-bit code): true = coded * 2^(base - 112)
  std::vector<uint8_t> data;         // groups, row tile major (kBytes12 or kBytes16 each)
  std::vector<uint32_t> exc_off;     // row_tiles * k_blocks + 1 offsets (12-bit code only)
  std::vector<uint32_t> exc;         // exception entries
  int64_t exceptions() const { return static_cast<int64_t>(exc.size()); }
  int64_t block_max_exceptions() const;  // the most exceptions in one block (16 rows x 256 k); 0 without exceptions
  // Every byte the kernels read for the weights, side tables included, per weight of the logical matrix.
  double bits_per_weight() const;
  std::string describe() const;
};

struct EncodeOptions {
  bool allow12 = true;               // false: always the 16-bit layout
};

// Exponent histogram -> the base that keeps the most weights in the 16-exponent window [base, base + 15]
// (exponents 0 and 255 never count). Returns also the number of weights outside.
struct BaseChoice { int base; int64_t outside; };
BaseChoice choose_base(const uint16_t* w, int64_t count);

// Encode N x K row-major BF16 bits. Lossless: decode(encode(w)) == w bit for bit.
Packed encode_bf16(const uint16_t* w, int64_t n, int64_t k, const EncodeOptions& opt = {});
// The reference decoder (the oracle for every GPU decoder): back to N x K row-major BF16 bits.
std::vector<uint16_t> decode_bf16(const Packed& p);
// Derived from the exception tables (not stored, not part of the format): entry i's block index b, i.e.
// exc_off[b] <= i < exc_off[b + 1]; the skinny kernels read it with each entry to find its row tile and k.
std::vector<uint32_t> exception_blocks(const Packed& p);

// The simt family's 12-bit layout (kernels/simt.cu, the tensor-core form: a CTA owns 8 rows x the whole K and every
// lane issues its loads at entry; the weights are the B fragments of mma.m16n8k16, 8 rows as its N). The same code as
// above (the matrix's base, c = e - base, the placeholder kPadCoded for padding and exceptions, one "k step" = 8 low
// bytes + one high word, decoded into four BF16 pair registers by the same instructions), in another order: for row
// block b (rows 8b .. 8b + 7), pass p (k from p kSimtPassK), warp w (0..15), step j (0..7) and lane L, one k step holds
// the 8 weights of row 8b + (L >> 2) at k = p kSimtPassK + 32 (w + 16 j) + 8 (L & 3) + e, e = 0..7 (register e >> 1,
// half e & 1: the raw form's 16-byte load). Bytes: block-major, then pass, then quad q = j >> 2, then chunk (0: the
// low bytes of steps 4q and 4q + 1, 8 each; 1: of steps 4q + 2, 4q + 3; 2: the four steps' high words), then warp,
// then lane, 16 bytes each: every warp-wide 16-byte load is 512 contiguous bytes. K is padded to kSimtPassK and the
// rows to 8 with the placeholder (the kernel's x is zero past K; rows past N are not stored). Exceptions (weights
// whose exponent the code does not hold): per row in ascending k, pairs (k, true BF16 bits); a row's first kSimtSlots
// entries sit in its block's own bytes, ahead of the block's weights (slot region: row-major, kSimtSlots pairs of
// little-endian uint32 per row, (~0, 0) past the row's count), so that a CTA reads them in the same stream as its
// weights (no side table, no dependent load: perf-notes step 180); the rest of a row's entries (rare) in a side table,
// exc[2 i], exc[2 i + 1] for exc_off[r] <= i < exc_off[r + 1] (r the row; blocks x 8 + 1 offsets).
// Block b's bytes: data[b x block_bytes ..], block_bytes = kSimtSlotBytes + passes x kSimtPassBytes.
inline constexpr int kSimtRows = 8;
inline constexpr int kSimtWarps = 16;
inline constexpr int kSimtSteps = 8;                          // steps per lane and pass
inline constexpr int kSimtPassK = 32 * kSimtWarps * kSimtSteps;  // 4096
inline constexpr int kSimtPassBytes = kSimtRows * kSimtPassK * 3 / 2;  // 48 KB per block and pass
inline constexpr int kSimtSlots = 4;                          // entries per row in the block's own bytes
inline constexpr int kSimtSlotBytes = kSimtRows * kSimtSlots * 8;  // 256 per block
struct Simt12 {
  int64_t rows = 0, k = 0;           // rows encoded (a prefix of the matrix), K
  int64_t blocks = 0, passes = 0;    // ceil(rows / 8), ceil(K / kSimtPassK)
  int base = 0;
  int64_t entries = 0;               // exceptions (slots and side table)
  int max_row_entries = 0;           // the most entries of one row
  std::vector<uint8_t> data;         // blocks x block_bytes()
  std::vector<uint32_t> exc_off;     // blocks x 8 + 1 offsets of the rows' entries past their slots
  std::vector<uint32_t> exc;         // those entries, pairs (k, bits)
  int64_t block_bytes() const { return kSimtSlotBytes + passes * kSimtPassBytes; }
  int64_t exceptions() const { return entries; }
};
// The first `rows` rows of N x K row-major BF16 bits at exponent base `base` (1..240: the 12-bit code's, e.g.
// Packed::base). Lossless: decode_simt12(encode_simt12(w, ...)) == those rows, bit for bit.
Simt12 encode_simt12(const uint16_t* w, int64_t n, int64_t k, int64_t rows, int base);
std::vector<uint16_t> decode_simt12(const Simt12& p);  // rows x K row-major BF16 bits

// Router: FP32 -> BF16 hi + lo with lo = bf16((w - hi) * 2^kLoShift), so w ~= hi + lo * 2^-kLoShift.
// |w - (hi + lo 2^-8)| <= 2^-17 |w| for 2^-125 <= |w| < 0x7F7F8000 (~3.3961e38); <= 2^-142 absolute below;
// <= 2^-16 |w| at the top, where hi = bf16(w) would overflow and saturates to the largest finite BF16 (so do
// lo and lo2). Exact mode: hi + lo 2^-8 + lo2 2^-16 == w for every finite w. Inf/NaN: hi carries them, lo = 0.
// Padding (rows past N, k past K): hi = 1.0, lo = lo2 = 0.
inline constexpr int kLoShift = 8;
struct HiLo { uint16_t hi, lo; };
HiLo split_hilo(float w);
float join_hilo(HiLo h);             // hi + lo * 2^-8 in FP32 (the value the router kernel multiplies by)

// The router's stored form: hi and lo (and, in exact mode, lo2 = bf16((w - hi - lo * 2^-8) * 2^16)) as
// three N x K BF16 matrices, each in the 16-bit group layout above (kBytes16 per group, same group order).
struct PackedHiLo {
  int64_t n = 0, k = 0, row_tiles = 0, k_groups = 0;
  bool exact = false;
  std::vector<uint8_t> hi, lo, lo2;  // lo2 empty unless exact
  double bits_per_weight() const;
};
PackedHiLo encode_hilo(const float* w, int64_t n, int64_t k, bool exact);
// The same terms as plain row-major BF16 matrices (for library GEMMs): hi[i], lo[i], and lo2[i] when exact
// (lo2 may be nullptr otherwise), for i < count.
void split_rowmajor(const float* w, int64_t count, bool exact, uint16_t* hi, uint16_t* lo, uint16_t* lo2);
// w reconstructed from the stored terms (FP32 when hi_lo, which is what the bound in docs/format.md is about).
std::vector<float> decode_hilo(const PackedHiLo& p);

// Helpers shared by tests and tools.
uint16_t f32_to_bf16_rn(float f);    // round to nearest even, NaN kept quiet
float bf16_to_f32(uint16_t b);

}  // namespace solgemm::format
