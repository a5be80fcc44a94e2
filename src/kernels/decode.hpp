// Register-level decode of the 12-bit code (include/solgemm/format.hpp), shared by the GPU kernels and the
// CPU test that checks it against format::decode_bf16. __host__ __device__: on the GPU byte_perm is PRMT.
//
// One k step of one lane: 8 low bytes (two 32-bit words) + one 32-bit high word -> the four A registers
// (BF16 pairs, true bits) of mma.m16n8k16. Per register: SHF (rotate), LOP3 (mask), PRMT, IADD.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SOLGEMM_HD __host__ __device__ __forceinline__
#else
#define SOLGEMM_HD inline
#endif

namespace solgemm::kernels::decode {

// PRMT in its default mode: byte i of the result is byte (sel >> 4i) & 7 of the 8-byte value {b:a}.
SOLGEMM_HD uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t sel) {
#ifdef __CUDA_ARCH__
  return __byte_perm(a, b, sel);
#else
  const uint64_t v = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>((v >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
#endif
}

SOLGEMM_HD uint32_t rotl(uint32_t w, int s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_l(w, w, s);
#else
  return s == 0 ? w : (w << s) | (w >> (32 - s));
#endif
}

// (base << 7) in both halves: added after the PRMT, it turns the 4-bit code c into the exponent base + c.
SOLGEMM_HD uint32_t base_add(int base) { return (static_cast<uint32_t>(base) << 7) * 0x00010001u; }

// Register j (0..3) of one k step: lo0 = low bytes of registers 0, 1; lo1 = of registers 2, 3; hw = high word.
// The spec's form is prmt(lo, rotl(hw, 4 j) & 0x87008700, sel_j) + add (docs/format.md). Equivalent and cheaper:
// every byte of hw & 0x87878787 is one half's sign | c >> 1 in place (bytes 1, 3: register 0; bytes 0, 2:
// register 2), and likewise every byte of rotl(hw, 4) & 0x87878787 (bytes 1, 3: register 1; 0, 2: register 3),
// so one k step needs one rotate and two masks (shared by the four registers), not three and four
// (perf-notes step 39). The selectors pick those bytes.
template <int J>
SOLGEMM_HD uint32_t reg12(uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t add) {
  const uint32_t lo = J < 2 ? lo0 : lo1;
  const uint32_t h = ((J & 1) ? rotl(hw, 4) : hw) & 0x87878787u;  // the same value for J and J ^ 2
  // byte 0 <- low byte of half 0, byte 1 <- high byte of half 0 (sign, c >> 1), bytes 2, 3 likewise half 1.
  constexpr uint32_t sel = J == 0 ? 0x7150u : J == 1 ? 0x7352u : J == 2 ? 0x6140u : 0x6342u;
  return byte_perm(lo, h, sel) + add;
}
// The spec's form, kept for the bench's comparison (perf-notes step 39) and as the tests' second opinion.
template <int J>
SOLGEMM_HD uint32_t reg12_spec(uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t add) {
  const uint32_t lo = J < 2 ? lo0 : lo1;
  const uint32_t h = rotl(hw, 4 * J) & 0x87008700u;
  constexpr uint32_t sel = (J & 1) ? 0x7352u : 0x7150u;
  return byte_perm(lo, h, sel) + add;
}

// ---- The coded domain (the skinny kernels' decode, perf-notes step 42) ----------------------------------------
// With A = base rounded up to a multiple of 16, the exponent A + c has A's bits 7..4 and c's bits 3..0, so the
// add of the true-domain decode becomes an OR that the mask's LOP3 does for free:
//     h = (hw & 0x87878787) | coded_or(A)    (bytes: sign | A >> 1 | c >> 1, i.e. exponent A + c)
// and a decoded weight is true * 2^d, d = A - base in 0..15. The kernel scales its FP32 sums by 2^-d (exact:
// a power of two), and patches an exception as true * 2^d (exact for every zero, subnormal, Inf and NaN, and
// for normal weights whose exponent + d stays <= 254; coded_ok checks a whole matrix). The padding placeholder
// decodes to 2^(A + 15 - 127), finite for A <= 224.
inline constexpr int kCodedMaxA = 224;
SOLGEMM_HD int coded_a(int base) { return (base + 15) & ~15; }
SOLGEMM_HD uint32_t coded_or(int a) { return (static_cast<uint32_t>(a) >> 1) * 0x01010101u; }
template <int J>
SOLGEMM_HD uint32_t reg12_coded(uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t orv) {
  const uint32_t lo = J < 2 ? lo0 : lo1;
  const uint32_t h = (((J & 1) ? rotl(hw, 4) : hw) & 0x87878787u) | orv;  // one LOP3: (a & imm) | b
  constexpr uint32_t sel = J == 0 ? 0x7150u : J == 1 ? 0x7352u : J == 2 ? 0x6140u : 0x6342u;
  return byte_perm(lo, h, sel);
}
// The four A registers of one k step: the true domain (`add` = base_add) and the coded domain (`orv` = coded_or).
SOLGEMM_HD void regs12(uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t add, uint32_t (&r)[4]) {
  r[0] = reg12<0>(lo0, lo1, hw, add);
  r[1] = reg12<1>(lo0, lo1, hw, add);
  r[2] = reg12<2>(lo0, lo1, hw, add);
  r[3] = reg12<3>(lo0, lo1, hw, add);
}
SOLGEMM_HD void regs12_coded(uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t orv, uint32_t (&r)[4]) {
  r[0] = reg12_coded<0>(lo0, lo1, hw, orv);
  r[1] = reg12_coded<1>(lo0, lo1, hw, orv);
  r[2] = reg12_coded<2>(lo0, lo1, hw, orv);
  r[3] = reg12_coded<3>(lo0, lo1, hw, orv);
}
// An exception's true BF16 bits -> its coded-domain bits (true * 2^d), through FP32 (same exponent range as
// BF16, 16 more mantissa bits: the product is exact, and so is the truncation when the value fits BF16).
SOLGEMM_HD uint32_t coded_exc_bits(uint32_t bits, float scale /* 2^d */) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(__uint_as_float(bits << 16) * scale) >> 16;
#else
  float f;
  const uint32_t u = bits << 16;
  __builtin_memcpy(&f, &u, 4);
  f *= scale;
  uint32_t r;
  __builtin_memcpy(&r, &f, 4);
  return r >> 16;
#endif
}
// Can the coded domain hold this exception exactly? Only a normal weight pushed past exponent 254 cannot.
SOLGEMM_HD bool coded_exc_exact(uint32_t bits, int d) {
  const int e = static_cast<int>((bits >> 7) & 0xFF);
  return e == 0 || e == 255 || e + d <= 254;
}

// A whole matrix: base and exception entries (format.hpp) -> may the coded-domain kernels run it?
inline bool coded_ok(int base, const uint32_t* exc, size_t count) {
  if (base < 1 || coded_a(base) > kCodedMaxA) return false;
  const int d = coded_a(base) - base;
  for (size_t i = 0; i < count; ++i)
    if (!coded_exc_exact(exc[i] & 0xFFFFu, d)) return false;
  return true;
}

// Replace half `h` of an A register by the exception's true BF16 bits.
SOLGEMM_HD uint32_t patch_half(uint32_t r, int h, uint32_t bits) {
  return h ? ((r & 0x0000FFFFu) | (bits << 16)) : ((r & 0xFFFF0000u) | bits);
}

// Exception entry (format.hpp): (row_in_tile * 256 + k_in_block) << 16 | bits -> where it lives in a group.
struct ExcSlot {
  int group_in_block, step, lane, reg, half;
};
SOLGEMM_HD ExcSlot exc_slot(uint32_t e) {
  const uint32_t pos = e >> 16;
  const int row = static_cast<int>(pos >> 8), kb = static_cast<int>(pos & 255);
  const int kk = kb & 63, kq = kk & 15;
  return {kb >> 6, kk >> 4, (row & 7) * 4 + ((kq & 7) >> 1), (row >> 3) | ((kq >> 3) << 1), kq & 1};
}

}  // namespace solgemm::kernels::decode
