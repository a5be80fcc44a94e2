// CPU test of the skinny family's register decode (src/kernels/decode.hpp, PRMT emulated on the host):
// reconstruct a packed 12-bit matrix the way a warp does (reg12 per lane / k step / register, exceptions
// placed through exc_slot) and compare with the original bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../src/kernels/decode.hpp"
#include "../src/kernels/kernels.hpp"
#include "solgemm/format.hpp"
#include "testing.hpp"

namespace {

namespace fmt_ = solgemm::format;
namespace dec = solgemm::kernels::decode;

uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Every weight of p decoded the way the warps do: per group, lane and k step `reg(lo0, lo1, hw, r[4])` gives the four
// A registers, the group's exception entries are patched in with `exc_bits(entry bits)`; then `check(weight, got)`
// for every logical (row, k). Returns how many checks failed.
template <class Reg, class ExcBits, class Check>
int64_t decode_all(const fmt_::Packed& p, const std::vector<uint16_t>& w, Reg&& reg, ExcBits&& exc_bits, Check&& check) {
  int64_t bad = 0;
  for (int64_t rt = 0; rt < p.row_tiles; ++rt)
    for (int64_t kg = 0; kg < p.k_groups; ++kg) {
      const uint8_t* g = p.data.data() + (rt * p.k_groups + kg) * fmt_::kBytes12;
      uint32_t r[32][4][4];
      for (int lane = 0; lane < 32; ++lane)
        for (int s = 0; s < 4; ++s)
          reg(le32(g + (s >> 1) * 512 + lane * 16 + (s & 1) * 8), le32(g + (s >> 1) * 512 + lane * 16 + (s & 1) * 8 + 4),
              le32(g + 1024 + lane * 16 + s * 4), r[lane][s]);
      const int64_t b = rt * p.k_blocks + kg / 4;
      for (uint32_t q = p.exc_off[b]; q < p.exc_off[b + 1]; ++q) {
        const dec::ExcSlot sl = dec::exc_slot(p.exc[q]);
        if (sl.group_in_block != kg % 4) continue;
        uint32_t& rg = r[sl.lane][sl.step][sl.reg];
        rg = dec::patch_half(rg, sl.half, exc_bits(p.exc[q] & 0xFFFFu));
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int s = 0; s < 4; ++s)
          for (int j = 0; j < 4; ++j)
            for (int h = 0; h < 2; ++h) {
              const fmt_::Pos pos = fmt_::frag_pos(lane, s, j, h);
              const int64_t row = rt * 16 + pos.row, col = kg * 64 + pos.k;
              if (row >= p.n || col >= p.k) continue;
              bad += !check(w[static_cast<size_t>(row * p.k + col)], static_cast<uint16_t>(r[lane][s][j] >> (16 * h)));
            }
    }
  return bad;
}

TEST(SkinnyDecode, MatchesOriginalBits) {
  const uint64_t seed = solgemm::testing::test_seed(0xDEC0DEu);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 0.02f);
  const int64_t n = 45, k = 700;  // partial row tile, partial group and block
  std::vector<uint16_t> w(static_cast<size_t>(n * k));
  for (auto& v : w) v = fmt_::f32_to_bf16_rn(nd(rng));
  const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x4480, 0xC2F7};
  for (int i = 0; i < 25; ++i) w[rng() % w.size()] = specials[i % 5];
  const fmt_::Packed p = fmt_::encode_bf16(w.data(), n, k);
  ASSERT_EQ(p.code, fmt_::Code::bits12) << "seed " << seed;
  ASSERT_GT(p.exceptions(), 0) << "seed " << seed;
  const uint32_t add = dec::base_add(p.base);
  const int64_t bad = decode_all(
      p, w,
      [&](uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t (&r)[4]) { dec::regs12(lo0, lo1, hw, add, r); },
      [](uint32_t bits) { return bits; }, [](uint16_t want, uint16_t got) { return want == got; });
  EXPECT_EQ(bad, 0) << "decoded weights differ from the original; seed " << seed;
}

// The kernels' coded domain (decode.hpp, perf-notes step 42): with A = base rounded up to 16 and d = A - base,
// every decoded slot (coded weights by the OR form, exceptions through coded_exc_bits) is the true weight times
// 2^d exactly, for matrices at many bases (scaled distributions) with zeros, subnormals, Inf and NaN sprinkled.
TEST(SkinnyDecode, CodedDomainIsTrueTimesPowerOfTwo) {
  const uint64_t seed = solgemm::testing::test_seed(0xC0DEDu);
  std::mt19937_64 rng(seed);
  const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x7F80, 0xFF80, 0x7FC1, 0x4480, 0xC2F7};
  int tried = 0;
  for (int sh : {-130, -120, -100, -60, -11, -6, 0, 1, 5, 40, 90, 97, 100, 110}) {
    std::normal_distribution<float> nd(0.f, std::ldexp(0.02f, sh / 2) * std::ldexp(1.f, sh - sh / 2));
    const int64_t n = 77, k = 600;  // partial row tile, group and block; room for the specials (< 1/1024)
    std::vector<uint16_t> w(static_cast<size_t>(n * k));
    for (auto& v : w) v = fmt_::f32_to_bf16_rn(nd(rng));
    for (int i = 0; i < 10; ++i) w[rng() % w.size()] = specials[i];
    const fmt_::Packed p = fmt_::encode_bf16(w.data(), n, k);
    if (p.code != fmt_::Code::bits12) continue;
    const bool ok = dec::coded_ok(p.base, p.exc.data(), p.exc.size());
    EXPECT_EQ(ok, p.base <= dec::kCodedMaxA) << "base " << p.base << "; seed " << seed;
    if (!ok) continue;
    ++tried;
    const int ca = dec::coded_a(p.base), d = ca - p.base;
    ASSERT_EQ(ca % 16, 0);
    ASSERT_TRUE(d >= 0 && d < 16);
    const uint32_t orv = dec::coded_or(ca);
    const float scale = std::ldexp(1.f, d);
    const int64_t bad = decode_all(
        p, w,
        [&](uint32_t lo0, uint32_t lo1, uint32_t hw, uint32_t (&r)[4]) { dec::regs12_coded(lo0, lo1, hw, orv, r); },
        [&](uint32_t bits) { return dec::coded_exc_bits(bits, scale); },
        [&](uint16_t want, uint16_t got) {
          const float gv = fmt_::bf16_to_f32(got) / scale, wv = fmt_::bf16_to_f32(want);
          const bool same = std::isnan(wv) ? std::isnan(gv) : (gv == wv && std::signbit(gv) == std::signbit(wv));
          return same && got == dec::coded_exc_bits(want, scale);
        });
    EXPECT_EQ(bad, 0) << "coded slots differ from true * 2^" << d << " (base " << p.base << "); seed " << seed;
  }
  EXPECT_GE(tried, 8) << "seed " << seed;
  // What coded_ok refuses: a normal weight pushed past exponent 254, or a base above 224.
  EXPECT_TRUE(dec::coded_exc_exact(0x7F00u, 0));    // exponent 254, d = 0
  EXPECT_FALSE(dec::coded_exc_exact(0x7F00u, 1));
  EXPECT_TRUE(dec::coded_exc_exact(0x7800u, 14));   // 240 + 14
  EXPECT_FALSE(dec::coded_exc_exact(0x7800u, 15));
  const uint32_t e1[] = {0x7800u}, e2[] = {0x0001u, 0x7F80u, 0x8000u};
  EXPECT_FALSE(dec::coded_ok(97, e1, 1));  // d = 15
  EXPECT_TRUE(dec::coded_ok(98, e1, 1));   // d = 14
  EXPECT_TRUE(dec::coded_ok(108, e2, 3));
  EXPECT_TRUE(dec::coded_ok(224, nullptr, 0));
  EXPECT_FALSE(dec::coded_ok(225, nullptr, 0));
}

TEST(SkinnyDecode, BytePermMatchesPtxSemantics) {
  EXPECT_EQ(dec::byte_perm(0x33221100u, 0x77665544u, 0x7150u), 0x77115500u);
  EXPECT_EQ(dec::byte_perm(0x33221100u, 0x77665544u, 0x7352u), 0x77335522u);
  EXPECT_EQ(dec::byte_perm(0x33221100u, 0x77665544u, 0x3210u), 0x33221100u);
}

// The library's kernels have no diagnostics compiled in (family_dispatch.cuh, kBench): a view that asks for one
// gets an error before anything is launched, not a silently ignored knob.
TEST(SkinnyLaunch, LibraryKernelsRejectBenchKnobs) {
  // The error must be the knob's own (a CUDA error from a launch attempt would be the wrong reason).
  auto rejects = [](auto&& call) {
    try {
      call();
    } catch (const solgemm::Error& e) {
      return std::string(e.what()).find("diagnostic knobs") != std::string::npos;
    }
    return false;
  };
  const solgemm::Config cfg = solgemm::layout_config(1, 1, 1, 1, 1);
  solgemm::kernels::PackedView v;
  v.n = 16;
  v.k = 64;
  v.row_tiles = 1;
  v.k_groups = 1;
  v.k_blocks = 1;
  v.diag = 1;
  EXPECT_TRUE(rejects([&] { solgemm::kernels::launch_skinny(cfg, v, nullptr, 1, nullptr, 16, nullptr); }));
  v.diag = 0;
  unsigned long long stamps[8] = {};
  v.trace = stamps;
  EXPECT_TRUE(rejects([&] { solgemm::kernels::launch_skinny(cfg, v, nullptr, 1, nullptr, 16, nullptr); }));
  solgemm::kernels::HiLoView h;
  h.n = 16;
  h.k = 64;
  h.row_tiles = 1;
  h.k_groups = 1;
  h.diag = 8;
  EXPECT_TRUE(rejects([&] { solgemm::kernels::launch_router(cfg, h, nullptr, 1, nullptr, 16, nullptr); }));
}

// The kernels' decode (one rotate and two masks per k step, shared by the four registers) equals the spec's
// per-register form (docs/format.md: rotl(W, 4 j) & 0x87008700) on random words and every base.
TEST(SkinnyDecode, SharedMasksEqualTheSpecForm) {
  const uint64_t seed = solgemm::testing::test_seed(0x5AB3Du);
  std::mt19937_64 rng(seed);
  int64_t bad = 0;
  for (int base = 1; base + 15 <= 254; ++base) {
    const uint32_t add = dec::base_add(base);
    for (int i = 0; i < 4096; ++i) {
      const uint32_t lo0 = static_cast<uint32_t>(rng()), lo1 = static_cast<uint32_t>(rng());
      const uint32_t hw = static_cast<uint32_t>(rng());
      bad += dec::reg12<0>(lo0, lo1, hw, add) != dec::reg12_spec<0>(lo0, lo1, hw, add);
      bad += dec::reg12<1>(lo0, lo1, hw, add) != dec::reg12_spec<1>(lo0, lo1, hw, add);
      bad += dec::reg12<2>(lo0, lo1, hw, add) != dec::reg12_spec<2>(lo0, lo1, hw, add);
      bad += dec::reg12<3>(lo0, lo1, hw, add) != dec::reg12_spec<3>(lo0, lo1, hw, add);
    }
  }
  EXPECT_EQ(bad, 0) << "seed " << seed;
}

// The simt family's 12-bit layout (format.hpp Simt12, kernels/simt.cu): lossless (decode_simt12), and decoded the way a
// lane of the kernel does it (per pass, quad and step: the low words and the high word of its 16-byte chunks into
// regs12_coded's four registers, exceptions' slots then corrected) every slot is the coded weight: the true weight
// times 2^d for every code, the placeholder's coded value for every exception and padding slot. Shapes with a partial
// row block, K past one pass and not a multiple of 8, rows a prefix of N; zeros, subnormals, Inf, NaN, far exponents.
TEST(SimtDecode, LayoutIsLosslessAndDecodesAsTheKernel) {
  const uint64_t seed = solgemm::testing::test_seed(0x512Du);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 0.02f);
  const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC1, 0x4480, 0xC2F7, 0x3F80};
  struct S { int64_t n, k, rows; };
  for (const S sh : {S{24, 4096, 24}, S{40, 5003, 29}, S{1030, 4096, 1024}, S{8, 100, 8}}) {
    SCOPED_TRACE(std::to_string(sh.n) + " x " + std::to_string(sh.k) + " rows " + std::to_string(sh.rows) + " seed " +
                 std::to_string(seed));
    std::vector<uint16_t> w(static_cast<size_t>(sh.n * sh.k));
    for (auto& v : w) v = fmt_::f32_to_bf16_rn(nd(rng));
    for (int i = 0; i < 40; ++i) w[rng() % static_cast<size_t>(sh.rows * sh.k)] = specials[i % 10];
    for (int i = 0; i < 11; ++i) w[static_cast<size_t>(3 * sh.k + rng() % sh.k)] = specials[i % 10];  // a crowded row
    const int base = fmt_::choose_base(w.data(), sh.n * sh.k).base;
    const fmt_::Simt12 p = fmt_::encode_simt12(w.data(), sh.n, sh.k, sh.rows, base);
    ASSERT_GE(p.exceptions(), 20);
    ASSERT_EQ(p.data.size(), static_cast<size_t>(p.blocks * (fmt_::kSimtSlotBytes + p.passes * fmt_::kSimtPassBytes)));
    ASSERT_EQ(p.exc_off.size(), static_cast<size_t>(p.blocks * 8 + 1));
    // every row's entries: its slots (ascending k, then (~0, 0)), then its side-table run only if the slots are full
    std::vector<char> is_exc(static_cast<size_t>(sh.rows * sh.k), 0);
    int64_t listed = 0, crowded = 0;
    for (int64_t r = 0; r < p.blocks * 8; ++r) {
      const uint8_t* slots = p.data.data() + (r / 8) * p.block_bytes() + (r % 8) * fmt_::kSimtSlots * 8;
      std::vector<uint32_t> ks;
      for (int q = 0; q < fmt_::kSimtSlots; ++q)
        if (le32(slots + 8 * q) != ~0u) {
          ASSERT_EQ(static_cast<int>(ks.size()), q) << "row " << r << ": an empty slot before a full one";
          ks.push_back(le32(slots + 8 * q));
        } else {
          EXPECT_EQ(le32(slots + 8 * q + 4), 0u) << "row " << r << " slot " << q;
        }
      if (p.exc_off[r + 1] > p.exc_off[r]) {
        EXPECT_EQ(ks.size(), static_cast<size_t>(fmt_::kSimtSlots)) << "row " << r << ": side entries, slots not full";
        ++crowded;
      }
      for (uint32_t i = p.exc_off[r]; i < p.exc_off[r + 1]; ++i) ks.push_back(p.exc[2 * i]);
      EXPECT_TRUE(std::is_sorted(ks.begin(), ks.end())) << "row " << r << ": entries not in ascending k";
      for (uint32_t kk : ks) {
        ASSERT_LT(r, sh.rows);
        ASSERT_LT(kk, static_cast<uint32_t>(sh.k));
        is_exc[static_cast<size_t>(r * sh.k + kk)] = 1;
      }
      listed += static_cast<int64_t>(ks.size());
    }
    EXPECT_EQ(listed, p.exceptions());
    EXPECT_GE(crowded, 1) << "the crowded row should reach the side table";
    const std::vector<uint16_t> back = fmt_::decode_simt12(p);
    EXPECT_TRUE(std::equal(back.begin(), back.end(), w.begin())) << "decode_simt12 differs from the rows encoded";
    // the kernel's view
    const int ca = dec::coded_a(base), d = ca - base;
    const uint32_t orv = dec::coded_or(ca);
    const float scale = std::ldexp(1.f, d);
    const uint16_t pad = static_cast<uint16_t>((ca + 15) << 7);  // the placeholder (c = 15) in the coded domain
    int64_t bad = 0, checked = 0;
    for (int64_t b = 0; b < p.blocks; ++b)
      for (int64_t pass = 0; pass < p.passes; ++pass) {
        const uint8_t* blk = p.data.data() + b * p.block_bytes() + fmt_::kSimtSlotBytes + pass * fmt_::kSimtPassBytes;
        for (int wp = 0; wp < 16; ++wp)
          for (int lane = 0; lane < 32; ++lane)
            for (int q = 0; q < 2; ++q) {
              const uint8_t* c0 = blk + ((q * 3 + 0) * 16 + wp) * 512 + lane * 16;
              const uint8_t* c1 = blk + ((q * 3 + 1) * 16 + wp) * 512 + lane * 16;
              const uint8_t* c2 = blk + ((q * 3 + 2) * 16 + wp) * 512 + lane * 16;
              for (int jj = 0; jj < 4; ++jj) {
                const uint8_t* lo = (jj < 2 ? c0 : c1) + (jj & 1) * 8;
                uint32_t r[4];
                dec::regs12_coded(le32(lo), le32(lo + 4), le32(c2 + 4 * jj), orv, r);
                const int j = 4 * q + jj;
                const int64_t row = b * 8 + (lane >> 2), k0 = pass * 4096 + 32 * (wp + 16 * j) + 8 * (lane & 3);
                for (int e = 0; e < 8; ++e) {
                  const uint16_t got = static_cast<uint16_t>(r[e >> 1] >> (16 * (e & 1)));
                  const bool inside = row < sh.rows && k0 + e < sh.k;
                  const bool exc = inside && is_exc[static_cast<size_t>(row * sh.k + k0 + e)];
                  const uint16_t want = inside && !exc
                                            ? static_cast<uint16_t>(dec::coded_exc_bits(w[static_cast<size_t>(row * sh.k + k0 + e)], scale))
                                            : pad;
                  bad += got != want;
                  ++checked;
                }
              }
            }
      }
    EXPECT_EQ(bad, 0) << "of " << checked << " slots decoded as the kernel does";
  }
}

}  // namespace
