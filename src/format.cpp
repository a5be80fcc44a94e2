// format.cpp: encoder and reference decoder of the packed weight formats (include/solgemm/format.hpp is the
// layout, docs/format.md the spec). Plain C++, no GPU. The decoder is the oracle for every GPU decoder: it
// reads the bytes exactly as a warp does (16-byte chunks; rotate, mask, prmt, add base << 7 per register
// pair, as src/kernels/decode.cuh), then patches exceptions with their true bits.
//
// Cost: encode_bf16 is one exponent-histogram pass plus one pass that walks the groups in storage order
// (writes sequential, reads 16 rows x 128 bytes per group); no per-weight allocation.
#include "solgemm/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "solgemm/solgemm.hpp"

namespace solgemm::format {

namespace {

constexpr int kLanes = 32;
constexpr int kSteps = 4;
constexpr int kRegs = 4;
constexpr int kSlots = kLanes * kSteps * kRegs * 2;  // 1024 weights per group
constexpr int kChunk = 512;                          // one warp-wide 16-byte load
constexpr uint32_t kPadC = ((kPadCoded >> 7) & 0xFF) - kCodedExpBase;  // the placeholder's code: 15
static_assert(kPadC == 15 && (kPadCoded & 0x807F) == 0);
static_assert(kSlots == kGroupRows * kGroupK);
static_assert(kBytes12 == 3 * kChunk && kBytes16 == 4 * kChunk);

uint32_t f2u(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float u2f(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t rotl32(uint32_t x, int r) {
  r &= 31;
  return r ? (x << r) | (x >> (32 - r)) : x;
}
uint32_t rotr32(uint32_t x, int r) { return rotl32(x, (32 - (r & 31)) & 31); }

uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
void store_le32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
void store_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// PTX prmt.b32 (default mode): byte i of the result is byte sel[i] of the 8-byte value {b, a} (a = bytes
// 0..3); selector bit 3 replicates that byte's sign bit instead.
uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
  const uint64_t bytes = uint64_t{b} << 32 | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t nib = (sel >> (4 * i)) & 0xF;
    uint32_t byte = static_cast<uint32_t>(bytes >> (8 * (nib & 7))) & 0xFF;
    if (nib & 8) byte = (byte & 0x80) ? 0xFF : 0x00;
    r |= byte << (8 * i);
  }
  return r;
}
// Register j's selector: low bytes 2 (j & 1) and 2 (j & 1) + 1 of low word j >> 1, high bytes 1 and 3 of hi.
constexpr uint32_t prmt_sel(int j) {
  const uint32_t lo = 2u * static_cast<uint32_t>(j & 1);
  return lo | 5u << 4 | (lo + 1) << 8 | 7u << 12;   // 0x7150 (j even), 0x7352 (j odd)
}

// One weight slot of a group, in storage order (lane, k step, register, half).
struct Slot {
  uint8_t row, k;        // inside the group: 0..15, 0..63
  uint8_t step, reg, half;
  uint16_t low_off;      // 12-bit: byte offset of the low byte
  uint16_t off16;        // 16-bit: byte offset of the BF16 value
};

const std::array<Slot, kSlots>& slots() {
  static const std::array<Slot, kSlots> table = [] {
    std::array<Slot, kSlots> t{};
    int i = 0;
    for (int lane = 0; lane < kLanes; ++lane)
      for (int s = 0; s < kSteps; ++s)
        for (int j = 0; j < kRegs; ++j)
          for (int h = 0; h < 2; ++h) {
            const Pos p = frag_pos(lane, s, j, h);
            Slot& sl = t[i++];
            sl.row = static_cast<uint8_t>(p.row);
            sl.k = static_cast<uint8_t>(p.k);
            sl.step = static_cast<uint8_t>(s);
            sl.reg = static_cast<uint8_t>(j);
            sl.half = static_cast<uint8_t>(h);
            sl.low_off = static_cast<uint16_t>((s >> 1) * kChunk + lane * 16 + (s & 1) * 8 + j * 2 + h);
            sl.off16 = static_cast<uint16_t>(s * kChunk + lane * 16 + j * 4 + h * 2);
          }
    return t;
  }();
  return table;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void check_shape(const char* fn, int64_t n, int64_t k) {
  if (n < 1 || k < 1)
    throw Error(fmt::format("solgemm::format::{}: shape {} x {}; expected N >= 1 and K >= 1", fn, n, k));
  if (n > (int64_t{1} << 31) || k > (int64_t{1} << 31) || n * k > (int64_t{1} << 44))
    throw Error(fmt::format("solgemm::format::{}: shape {} x {} is too large (N, K <= 2^31, N*K <= 2^44)", fn,
                            n, k));
}

Packed layout_common(int64_t n, int64_t k) {
  Packed p;
  p.n = n;
  p.k = k;
  p.row_tiles = ceil_div(n, kGroupRows);
  p.k_groups = ceil_div(k, kGroupK);
  p.k_blocks = ceil_div(k, kBlockK);
  return p;
}

Packed encode16(const uint16_t* w, int64_t n, int64_t k, int base) {
  Packed p = layout_common(n, k);
  p.code = Code::bits16;
  p.base = base;
  p.data.resize(static_cast<size_t>(p.row_tiles * p.k_groups) * kBytes16);
  const auto& sl = slots();
  uint8_t* g = p.data.data();
  for (int64_t rt = 0; rt < p.row_tiles; ++rt) {
    const int64_t r0 = rt * kGroupRows;
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, n - r0));
    for (int64_t kg = 0; kg < p.k_groups; ++kg, g += kBytes16) {
      const int64_t k0 = kg * kGroupK;
      const int ks = static_cast<int>(std::min<int64_t>(kGroupK, k - k0));
      const uint16_t* src = w + r0 * k + k0;
      for (const Slot& s : sl) {
        const uint16_t v = (s.row < rows && s.k < ks) ? src[s.row * k + s.k] : kPadCoded;
        store_le16(g + s.off16, v);
      }
    }
  }
  return p;
}

// 12-bit encode with the given base; false only when the exception table would not fit uint32 offsets.
bool encode12(const uint16_t* w, int64_t n, int64_t k, int base, int64_t expected_exc, Packed& out) {
  Packed p = layout_common(n, k);
  p.code = Code::bits12;
  p.base = base;
  p.data.resize(static_cast<size_t>(p.row_tiles * p.k_groups) * kBytes12);
  std::vector<uint64_t> exc;  // block << 32 | position << 16 | true bits
  exc.reserve(static_cast<size_t>(expected_exc));
  const auto& sl = slots();
  uint8_t* g = p.data.data();
  for (int64_t rt = 0; rt < p.row_tiles; ++rt) {
    const int64_t r0 = rt * kGroupRows;
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, n - r0));
    for (int64_t kg = 0; kg < p.k_groups; ++kg, g += kBytes12) {
      const int64_t k0 = kg * kGroupK;
      const int ks = static_cast<int>(std::min<int64_t>(kGroupK, k - k0));
      const uint16_t* src = w + r0 * k + k0;
      const uint64_t block = static_cast<uint64_t>(rt * p.k_blocks + kg / kGroupsPerBlock);
      const uint32_t kin = static_cast<uint32_t>((kg % kGroupsPerBlock) * kGroupK);
      uint32_t hw[kSteps] = {0, 0, 0, 0};
      for (int i = 0; i < kSlots; ++i) {
        const Slot& s = sl[i];
        uint32_t v = kPadCoded, c = kPadC;  // padding and exception slots: the placeholder (c = 15)
        if (s.row < rows && s.k < ks) {
          v = src[s.row * k + s.k];
          c = static_cast<uint32_t>(static_cast<int>((v >> 7) & 0xFF) - base);
          if (c > 15u) {
            const uint32_t pos = static_cast<uint32_t>(s.row) * kBlockK + kin + s.k;
            exc.push_back(block << 32 | pos << 16 | v);
            v = kPadCoded;
            c = kPadC;
          }
        }
        g[s.low_off] = static_cast<uint8_t>((c & 1) << 7 | (v & 0x7F));
        const uint32_t hv = ((v & 0x8000) | (c >> 1) << 8) << (16 * s.half);
        hw[s.step] |= rotr32(hv, 4 * s.reg);
        if ((i & 31) == 31) {  // the lane's 32 slots are done: store its four high words
          const int lane = i >> 5;
          for (int st = 0; st < kSteps; ++st) store_le32(g + 2 * kChunk + lane * 16 + st * 4, hw[st]);
          hw[0] = hw[1] = hw[2] = hw[3] = 0;
        }
      }
    }
  }
  if (exc.size() > std::numeric_limits<uint32_t>::max()) return false;
  std::sort(exc.begin(), exc.end());
  const int64_t blocks = p.row_tiles * p.k_blocks;
  p.exc_off.assign(static_cast<size_t>(blocks) + 1, 0);
  p.exc.resize(exc.size());
  for (size_t i = 0; i < exc.size(); ++i) {
    ++p.exc_off[static_cast<size_t>(exc[i] >> 32) + 1];
    p.exc[i] = static_cast<uint32_t>(exc[i]);
  }
  for (int64_t b = 0; b < blocks; ++b) p.exc_off[b + 1] += p.exc_off[b];
  out = std::move(p);
  return true;
}

}  // namespace

namespace {
// Byte offset of step j's low bytes / high word of lane `lane`, warp wp, inside one pass of a Simt12 block.
size_t simt_low_at(int wp, int j, int lane) {
  const int q = j >> 2, jj = j & 3;
  return (static_cast<size_t>((q * 3 + (jj >> 1)) * kSimtWarps + wp) * kLanes + lane) * 16 + (jj & 1) * 8;
}
size_t simt_high_at(int wp, int j, int lane) {
  const int q = j >> 2, jj = j & 3;
  return (static_cast<size_t>((q * 3 + 2) * kSimtWarps + wp) * kLanes + lane) * 16 + jj * 4;
}
}  // namespace

Simt12 encode_simt12(const uint16_t* w, int64_t n, int64_t k, int64_t rows, int base) {
  if (n < 1 || k < 1 || rows < 1 || rows > n)
    throw Error(fmt::format("solgemm::format::encode_simt12: shape {} x {}, rows {}; expected N, K >= 1 and "
                            "1 <= rows <= N", n, k, rows));
  if (k >= (int64_t{1} << 31))
    throw Error(fmt::format("solgemm::format::encode_simt12: K = {}; expected K < 2^31 (an entry's position)", k));
  if (base < 1 || base > 240)
    throw Error(fmt::format("solgemm::format::encode_simt12: base {}; expected 1..240", base));
  Simt12 p;
  p.rows = rows;
  p.k = k;
  p.base = base;
  p.blocks = (rows + kSimtRows - 1) / kSimtRows;
  p.passes = (k + kSimtPassK - 1) / kSimtPassK;
  p.data.assign(static_cast<size_t>(p.blocks * p.block_bytes()), 0);
  p.exc_off.assign(static_cast<size_t>(p.blocks * kSimtRows) + 1, 0);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> ex(kSimtRows);  // this block's rows' (k, bits)
  for (int64_t b = 0; b < p.blocks; ++b) {
    for (auto& e : ex) e.clear();
    uint8_t* const bb = p.data.data() + static_cast<size_t>(b * p.block_bytes());
    for (int64_t pass = 0; pass < p.passes; ++pass) {
      uint8_t* blk = bb + kSimtSlotBytes + static_cast<size_t>(pass) * kSimtPassBytes;
      for (int wp = 0; wp < kSimtWarps; ++wp)
        for (int j = 0; j < kSimtSteps; ++j)
          for (int lane = 0; lane < kLanes; ++lane) {
            const int64_t row = b * kSimtRows + (lane >> 2);
            const int64_t k0 = pass * kSimtPassK + 32 * (wp + kSimtWarps * j) + 8 * (lane & 3);
            uint8_t* low = blk + simt_low_at(wp, j, lane);
            uint32_t hw = 0;
            for (int e = 0; e < 8; ++e) {
              uint32_t v = kPadCoded, c = kPadC;  // padding and exception slots: the placeholder (c = 15)
              if (row < rows && k0 + e < k) {
                v = w[row * k + k0 + e];
                c = static_cast<uint32_t>(static_cast<int>((v >> 7) & 0xFF) - base);
                if (c > 15u) {
                  ex[static_cast<size_t>(lane >> 2)].emplace_back(static_cast<uint32_t>(k0 + e), v);
                  v = kPadCoded;
                  c = kPadC;
                }
              }
              low[e] = static_cast<uint8_t>((c & 1) << 7 | (v & 0x7F));
              hw |= rotr32(((v & 0x8000) | (c >> 1) << 8) << (16 * (e & 1)), 4 * (e >> 1));
            }
            store_le32(blk + simt_high_at(wp, j, lane), hw);
          }
    }
    for (int r = 0; r < kSimtRows; ++r) {
      auto& re = ex[static_cast<size_t>(r)];
      std::sort(re.begin(), re.end());
      p.entries += static_cast<int64_t>(re.size());
      p.max_row_entries = std::max(p.max_row_entries, static_cast<int>(re.size()));
      for (int q = 0; q < kSimtSlots; ++q) {
        const bool has = q < static_cast<int>(re.size());
        uint8_t* slot = bb + (r * kSimtSlots + q) * 8;
        store_le32(slot, has ? re[static_cast<size_t>(q)].first : ~0u);
        store_le32(slot + 4, has ? re[static_cast<size_t>(q)].second : 0u);
      }
      for (size_t q = kSimtSlots; q < re.size(); ++q) {
        p.exc.push_back(re[q].first);
        p.exc.push_back(re[q].second);
      }
      p.exc_off[static_cast<size_t>(b * kSimtRows + r) + 1] = static_cast<uint32_t>(p.exc.size() / 2);
    }
  }
  return p;
}

std::vector<uint16_t> decode_simt12(const Simt12& p) {
  if (p.data.size() != static_cast<size_t>(p.blocks * p.block_bytes()) ||
      p.exc_off.size() != static_cast<size_t>(p.blocks * kSimtRows) + 1 || p.exc.size() != 2 * size_t{p.exc_off.back()})
    throw Error(fmt::format("solgemm::format::decode_simt12: {} bytes, {} offsets, {} entry words; expected {} x {} "
                            "bytes, {} offsets and twice the last offset's words", p.data.size(), p.exc_off.size(),
                            p.exc.size(), p.blocks, p.block_bytes(), p.blocks * kSimtRows + 1));
  std::vector<uint16_t> w(static_cast<size_t>(p.rows * p.k));
  auto put = [&](int64_t row, uint32_t kk, uint32_t bits, const char* where) {
    if (row >= p.rows || kk >= static_cast<uint64_t>(p.k))
      throw Error(fmt::format("solgemm::format::decode_simt12: an entry ({}) at row {}, k {}: outside the {} x {} rows",
                              where, row, kk, p.rows, p.k));
    w[static_cast<size_t>(row * p.k + kk)] = static_cast<uint16_t>(bits);
  };
  for (int64_t b = 0; b < p.blocks; ++b) {
    const uint8_t* const bb = p.data.data() + static_cast<size_t>(b * p.block_bytes());
    for (int64_t pass = 0; pass < p.passes; ++pass) {
      const uint8_t* blk = bb + kSimtSlotBytes + static_cast<size_t>(pass) * kSimtPassBytes;
      for (int wp = 0; wp < kSimtWarps; ++wp)
        for (int j = 0; j < kSimtSteps; ++j)
          for (int lane = 0; lane < kLanes; ++lane) {
            const int64_t row = b * kSimtRows + (lane >> 2);
            const int64_t k0 = pass * kSimtPassK + 32 * (wp + kSimtWarps * j) + 8 * (lane & 3);
            const uint8_t* low = blk + simt_low_at(wp, j, lane);
            const uint32_t hw = load_le32(blk + simt_high_at(wp, j, lane));
            for (int e = 0; e < 8; ++e) {
              if (row >= p.rows || k0 + e >= p.k) continue;
              const uint32_t h = rotl32(hw, 4 * (e >> 1)) >> (16 * (e & 1));
              const uint32_t c = ((h >> 8) & 7) << 1 | (low[e] >> 7);
              w[static_cast<size_t>(row * p.k + k0 + e)] =
                  static_cast<uint16_t>((h & 0x8000) | (static_cast<uint32_t>(p.base) + c) << 7 | (low[e] & 0x7F));
            }
          }
    }
    for (int r = 0; r < kSimtRows; ++r) {
      const int64_t row = b * kSimtRows + r;
      for (int q = 0; q < kSimtSlots; ++q) {
        const uint8_t* slot = bb + (r * kSimtSlots + q) * 8;
        if (load_le32(slot) != ~0u) put(row, load_le32(slot), load_le32(slot + 4), "slot");
      }
      for (uint32_t i = p.exc_off[static_cast<size_t>(row)]; i < p.exc_off[static_cast<size_t>(row) + 1]; ++i)
        put(row, p.exc[2 * i], p.exc[2 * i + 1], "side table");
    }
  }
  return w;
}

uint16_t f32_to_bf16_rn(float f) {
  const uint32_t u = f2u(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x0040);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_f32(uint16_t b) { return u2f(static_cast<uint32_t>(b) << 16); }

BaseChoice choose_base(const uint16_t* w, int64_t count) {
  int64_t hist[256] = {};
  for (int64_t i = 0; i < count; ++i) ++hist[(w[i] >> 7) & 0xFF];
  hist[0] = hist[255] = 0;  // zeros, subnormals, Inf, NaN are always exceptions
  int64_t in = 0;
  for (int e = 1; e <= 16; ++e) in += hist[e];
  int best = 1;
  int64_t best_in = in;
  // Windows [base, base + 15] inside [1, 254]. Ties: the base closest to 112 (coded == true value), then the
  // smaller one; deterministic.
  for (int base = 2; base + 15 <= 254; ++base) {
    in += hist[base + 15] - hist[base - 1];
    const bool better = in > best_in ||
                        (in == best_in && std::abs(base - kCodedExpBase) < std::abs(best - kCodedExpBase));
    if (better) {
      best = base;
      best_in = in;
    }
  }
  return {best, count - best_in};
}

Packed encode_bf16(const uint16_t* w, int64_t n, int64_t k, const EncodeOptions& opt) {
  check_shape("encode_bf16", n, k);
  if (w == nullptr) throw Error("solgemm::format::encode_bf16: w is a null pointer");
  if (opt.allow12) {
    const BaseChoice bc = choose_base(w, n * k);
    if (static_cast<double>(bc.outside) <= kMaxExceptionRate * static_cast<double>(n * k)) {
      Packed p;
      if (encode12(w, n, k, bc.base, bc.outside, p)) return p;
    }
  }
  return encode16(w, n, k, kCodedExpBase);
}

std::vector<uint16_t> decode_bf16(const Packed& p) {
  check_shape("decode_bf16", p.n, p.k);
  const int64_t n = p.n, k = p.k;
  const Packed ref = layout_common(n, k);
  const bool b12 = p.code == Code::bits12;
  const size_t group_bytes = b12 ? kBytes12 : kBytes16;
  if (p.row_tiles != ref.row_tiles || p.k_groups != ref.k_groups || p.k_blocks != ref.k_blocks ||
      p.data.size() != static_cast<size_t>(ref.row_tiles * ref.k_groups) * group_bytes)
    throw Error(fmt::format("solgemm::format::decode_bf16: {} x {}: tile counts or data size do not match the "
                            "layout", n, k));
  if (b12 && (p.base < 1 || p.base + 15 > 254))
    throw Error(fmt::format("solgemm::format::decode_bf16: base {} outside [1, 239]", p.base));
  std::vector<uint16_t> out(static_cast<size_t>(n * k));
  const uint8_t* g = p.data.data();
  for (int64_t rt = 0; rt < p.row_tiles; ++rt) {
    const int64_t r0 = rt * kGroupRows;
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, n - r0));
    for (int64_t kg = 0; kg < p.k_groups; ++kg, g += group_bytes) {
      const int64_t k0 = kg * kGroupK;
      const int ks = static_cast<int>(std::min<int64_t>(kGroupK, k - k0));
      uint16_t* dst = out.data() + r0 * k + k0;
      // Decode the way a warp does: per lane and k step, one register pair per (j), halves h = 0, 1.
      for (int lane = 0; lane < kLanes; ++lane)
        for (int s = 0; s < kSteps; ++s)
          for (int j = 0; j < kRegs; ++j) {
            uint32_t pair;
            if (b12) {
              const uint32_t low = load_le32(g + (s >> 1) * kChunk + lane * 16 + (s & 1) * 8 + (j >> 1) * 4);
              const uint32_t W = load_le32(g + 2 * kChunk + lane * 16 + s * 4);
              // SHF, LOP3, PRMT, IADD: each half becomes sign | (base + c) << 7 | mantissa, the true BF16.
              pair = prmt(low, rotl32(W, 4 * j) & kHiMask, prmt_sel(j)) + static_cast<uint32_t>(p.base) * 0x00800080u;
            } else {
              pair = load_le32(g + s * kChunk + lane * 16 + j * 4);
            }
            for (int h = 0; h < 2; ++h) {
              const Pos q = frag_pos(lane, s, j, h);
              if (q.row >= rows || q.k >= ks) continue;  // padding
              dst[q.row * k + q.k] = static_cast<uint16_t>(pair >> (16 * h));
            }
          }
    }
  }
  if (!b12) {
    if (!p.exc.empty() || !p.exc_off.empty())
      throw Error("solgemm::format::decode_bf16: 16-bit layout with exception tables");
    return out;
  }
  const int64_t blocks = p.row_tiles * p.k_blocks;
  if (p.exc_off.size() != static_cast<size_t>(blocks) + 1 || p.exc_off[0] != 0 ||
      p.exc_off.back() != p.exc.size())
    throw Error("solgemm::format::decode_bf16: exception offsets do not match the block count or the table");
  const uint16_t placeholder = static_cast<uint16_t>((kPadCoded & 0x807F) | (p.base + 15) << 7);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t rt = b / p.k_blocks, kb = b % p.k_blocks;
    if (p.exc_off[b + 1] < p.exc_off[b])
      throw Error(fmt::format("solgemm::format::decode_bf16: exception offsets decrease at block {}", b));
    int64_t prev = -1;
    for (uint32_t i = p.exc_off[b]; i < p.exc_off[b + 1]; ++i) {
      const uint32_t e = p.exc[i];
      const int64_t pos = e >> 16;
      const int64_t row = rt * kGroupRows + pos / kBlockK, col = kb * kBlockK + pos % kBlockK;
      if (pos <= prev || row >= n || col >= k)
        throw Error(fmt::format("solgemm::format::decode_bf16: exception {} of block {} (position {}) is out of "
                                "order or outside the matrix", i, b, pos));
      prev = pos;
      uint16_t& slot = out[static_cast<size_t>(row * k + col)];
      if (slot != placeholder)
        throw Error(fmt::format("solgemm::format::decode_bf16: exception {} at ({}, {}): the packed slot does "
                                "not hold the placeholder", i, row, col));
      slot = static_cast<uint16_t>(e & 0xFFFF);
    }
  }
  return out;
}

std::vector<uint32_t> exception_blocks(const Packed& p) {
  std::vector<uint32_t> blk(p.exc.size());
  for (size_t b = 0; b + 1 < p.exc_off.size(); ++b)
    for (uint32_t i = p.exc_off[b]; i < p.exc_off[b + 1]; ++i) blk[i] = static_cast<uint32_t>(b);
  return blk;
}

int64_t Packed::block_max_exceptions() const {
  int64_t most = 0;
  for (size_t b = 0; b + 1 < exc_off.size(); ++b) most = std::max<int64_t>(most, exc_off[b + 1] - exc_off[b]);
  return most;
}

double Packed::bits_per_weight() const {
  const double bytes = static_cast<double>(data.size()) + 4.0 * static_cast<double>(exc_off.size()) +
                       4.0 * static_cast<double>(exc.size());
  return 8.0 * bytes / (static_cast<double>(n) * static_cast<double>(k));
}

std::string Packed::describe() const {
  const double rate = static_cast<double>(exceptions()) / (static_cast<double>(n) * static_cast<double>(k));
  if (code == Code::bits12)
    return fmt::format("bf16 {}x{} 12-bit code, base {}, {} exceptions (rate {:.3g}), {:.4f} bits/weight", n, k,
                       base, exceptions(), rate, bits_per_weight());
  return fmt::format("bf16 {}x{} 16-bit layout (12-bit off, or exception rate > {:.3g}), {:.4f} bits/weight", n,
                     k, kMaxExceptionRate, bits_per_weight());
}

// ---- Router: hi + lo (+ lo2) ----------------------------------------------------------------------------

namespace {

// Round to nearest even, but a finite input that would round to Inf saturates to the largest finite BF16.
uint16_t bf16_rn_sat(float f) {
  const uint16_t b = f32_to_bf16_rn(f);
  if ((b & 0x7FFF) == 0x7F80 && std::isfinite(f)) return static_cast<uint16_t>((b & 0x8000) | 0x7F7F);
  return b;
}

struct Split3 { uint16_t hi, lo, lo2; };

// hi = bf16(w), lo = bf16((w - hi) * 2^8), lo2 = bf16((w - hi - lo 2^-8) * 2^16). The differences and scalings
// are exact in FP32 (docs/format.md proves it); done in double anyway, converted once.
Split3 split3(float w) {
  if (!std::isfinite(w)) return {f32_to_bf16_rn(w), 0, 0};
  const uint16_t hi = bf16_rn_sat(w);
  // A zero residual keeps w's sign, so that -0 splits into -0 + -0 (+ -0) and comes back as -0.
  double r = static_cast<double>(w) - static_cast<double>(bf16_to_f32(hi));
  if (r == 0) r = std::copysign(0.0, w);
  const uint16_t lo = bf16_rn_sat(static_cast<float>(std::ldexp(r, kLoShift)));
  double r2 = r - std::ldexp(static_cast<double>(bf16_to_f32(lo)), -kLoShift);
  if (r2 == 0) r2 = std::copysign(0.0, w);
  const uint16_t lo2 = bf16_rn_sat(static_cast<float>(std::ldexp(r2, 2 * kLoShift)));
  return {hi, lo, lo2};
}

}  // namespace

HiLo split_hilo(float w) {
  const Split3 s = split3(w);
  return {s.hi, s.lo};
}

void split_rowmajor(const float* w, int64_t count, bool exact, uint16_t* hi, uint16_t* lo, uint16_t* lo2) {
  for (int64_t i = 0; i < count; ++i) {
    const Split3 s = split3(w[i]);
    hi[i] = s.hi;
    lo[i] = s.lo;
    if (exact) lo2[i] = s.lo2;
  }
}

float join_hilo(HiLo h) { return bf16_to_f32(h.hi) + bf16_to_f32(h.lo) * (1.0f / 256.0f); }

PackedHiLo encode_hilo(const float* w, int64_t n, int64_t k, bool exact) {
  check_shape("encode_hilo", n, k);
  if (w == nullptr) throw Error("solgemm::format::encode_hilo: w is a null pointer");
  PackedHiLo p;
  p.n = n;
  p.k = k;
  p.row_tiles = ceil_div(n, kGroupRows);
  p.k_groups = ceil_div(k, kGroupK);
  p.exact = exact;
  const size_t bytes = static_cast<size_t>(p.row_tiles * p.k_groups) * kBytes16;
  p.hi.resize(bytes);
  p.lo.resize(bytes);
  if (exact) p.lo2.resize(bytes);
  const auto& sl = slots();
  size_t off = 0;
  for (int64_t rt = 0; rt < p.row_tiles; ++rt) {
    const int64_t r0 = rt * kGroupRows;
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, n - r0));
    for (int64_t kg = 0; kg < p.k_groups; ++kg, off += kBytes16) {
      const int64_t k0 = kg * kGroupK;
      const int ks = static_cast<int>(std::min<int64_t>(kGroupK, k - k0));
      const float* src = w + r0 * k + k0;
      for (const Slot& s : sl) {
        Split3 t{kPadCoded, 0, 0};  // padding: exactly 1.0
        if (s.row < rows && s.k < ks) t = split3(src[s.row * k + s.k]);
        store_le16(p.hi.data() + off + s.off16, t.hi);
        store_le16(p.lo.data() + off + s.off16, t.lo);
        if (exact) store_le16(p.lo2.data() + off + s.off16, t.lo2);
      }
    }
  }
  return p;
}

std::vector<float> decode_hilo(const PackedHiLo& p) {
  check_shape("decode_hilo", p.n, p.k);
  const size_t bytes = static_cast<size_t>(ceil_div(p.n, kGroupRows) * ceil_div(p.k, kGroupK)) * kBytes16;
  if (p.hi.size() != bytes || p.lo.size() != bytes || (p.exact && p.lo2.size() != bytes))
    throw Error(fmt::format("solgemm::format::decode_hilo: {} x {}: term sizes do not match the layout", p.n, p.k));
  std::vector<float> out(static_cast<size_t>(p.n * p.k));
  const auto& sl = slots();
  size_t off = 0;
  for (int64_t rt = 0; rt < p.row_tiles; ++rt) {
    const int64_t r0 = rt * kGroupRows;
    const int rows = static_cast<int>(std::min<int64_t>(kGroupRows, p.n - r0));
    for (int64_t kg = 0; kg < p.k_groups; ++kg, off += kBytes16) {
      const int64_t k0 = kg * kGroupK;
      const int ks = static_cast<int>(std::min<int64_t>(kGroupK, p.k - k0));
      float* dst = out.data() + r0 * p.k + k0;
      for (const Slot& s : sl) {
        if (s.row >= rows || s.k >= ks) continue;
        auto at = [&](const std::vector<uint8_t>& v) {
          return static_cast<uint16_t>(v[off + s.off16] | v[off + s.off16 + 1] << 8);
        };
        const uint16_t hi = at(p.hi), lo = at(p.lo);
        float f;
        if (p.exact) {  // hi + lo 2^-8 + lo2 2^-16 is exact in double; one rounding to float (exact: it is w)
          const double d = static_cast<double>(bf16_to_f32(hi)) +
                           std::ldexp(static_cast<double>(bf16_to_f32(lo)), -kLoShift) +
                           std::ldexp(static_cast<double>(bf16_to_f32(at(p.lo2))), -2 * kLoShift);
          f = static_cast<float>(d);
        } else {
          f = join_hilo({hi, lo});
        }
        dst[s.row * p.k + s.k] = f;
      }
    }
  }
  return out;
}

double PackedHiLo::bits_per_weight() const {
  const double bytes = static_cast<double>(hi.size() + lo.size() + lo2.size());
  return 8.0 * bytes / (static_cast<double>(n) * static_cast<double>(k));
}

}  // namespace solgemm::format
