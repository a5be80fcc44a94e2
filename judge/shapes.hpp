// The work the judge measures (judge-spec.md "Work" and "Speed of light"): 5 layers, 6 loads (the 30 scored
// shapes), the 35 extra shapes, and each shape's speed-of-light floor, exactly as the seed's lab1_roofline.py
// computes it: floor = max(bytes / 4.8 TB/s, 2 m N K / 989 TFLOP/s), bytes = weights + x (BF16) + out.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace solgemm::judge {

inline constexpr double kHbmBytesPerSecond = 4.8e12;  // H200 HBM3e, the judge's number
inline constexpr double kTensorFlops = 989e12;        // H200 dense BF16 tensor-core peak

struct Layer {
  std::string_view name;
  int64_t n, k;  // W is n x k
  bool fp32;     // FP32 weights and FP32 out (the router); otherwise BF16 and BF16
  int weight_bytes() const { return fp32 ? 4 : 2; }
  int out_bytes() const { return fp32 ? 4 : 2; }
};

struct Load {
  std::string_view name;  // "decode 1"
  int64_t m;
};

inline constexpr int kLayerCount = 5;
inline constexpr int kLoadCount = 6;
const std::array<Layer, kLayerCount>& layers();
const std::array<Load, kLoadCount>& loads();
// m of the extra shapes, checked for correctness on every layer (not scored).
inline constexpr std::array<int64_t, 7> kExtraM = {5, 7, 9, 33, 130, 512, 1000};

// Output rows actually computed: at m <= 8 the unpooler computes only its 1024-row slice.
int64_t out_rows(const Layer& layer, int64_t m);

// Index of a layer / load by name, or -1. Load names match loosely: "decode 1", "decode1", "decode_1".
int find_layer(std::string_view name);
int find_load(std::string_view name);

// One shape the judge runs: a layer at one m. load >= 0 for the 30 scored shapes, -1 for extra shapes.
struct Shape {
  int layer = 0;
  int64_t m = 1;
  int load = -1;
  bool timed = false;
  const Layer& info() const { return layers()[static_cast<size_t>(layer)]; }
  int64_t rows() const { return out_rows(info(), m); }
  std::string label() const;  // "decode 1 / pooler (m=1)" or "extra / pooler (m=5)"
};

// The speed of light of one shape at a given number of bits per stored weight (16 or 32 = as stored).
struct Floor {
  double bytes = 0;   // weights at weight_bits + x (BF16) + out
  double flops = 0;   // 2 m rows k
  double us = 0;      // max(bytes / HBM, flops / peak), microseconds
  bool math_bound = false;
};
Floor floor_of(const Layer& layer, int64_t m, double weight_bits);
// The datasheet floor: weights in their stored dtype (16 bits, router 32).
inline Floor datasheet_floor(const Layer& layer, int64_t m) { return floor_of(layer, m, 8.0 * layer.weight_bytes()); }

}  // namespace solgemm::judge
