// Layer and load tables, name lookup, floors (see shapes.hpp).
#include "shapes.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace solgemm::judge {

const std::array<Layer, kLayerCount>& layers() {
  static const std::array<Layer, kLayerCount> t = {{
      {"qkv_gate", 2304, 8192, false},
      {"o", 8192, 1024, false},
      {"pooler", 4096, 8192, false},
      {"unpooler", 8192, 4096, false},
      {"router", 256, 8192, true},
  }};
  return t;
}

const std::array<Load, kLoadCount>& loads() {
  static const std::array<Load, kLoadCount> t = {{
      {"decode 1", 1}, {"decode 16", 16}, {"decode 32", 32}, {"verify 1", 8}, {"verify 16", 128}, {"verify 32", 256},
  }};
  return t;
}

int64_t out_rows(const Layer& layer, int64_t m) { return (layer.name == "unpooler" && m <= 8) ? 1024 : layer.n; }

namespace {
// Lower case, without spaces, '-' and '_': "Decode_1" -> "decode1".
std::string squash(std::string_view s) {
  std::string r;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_') r += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

int find_layer(std::string_view name) {
  for (size_t i = 0; i < layers().size(); ++i)
    if (layers()[i].name == name) return static_cast<int>(i);
  return -1;
}

int find_load(std::string_view name) {
  const std::string s = squash(name);
  for (size_t i = 0; i < loads().size(); ++i)
    if (squash(loads()[i].name) == s) return static_cast<int>(i);
  return -1;
}

std::string Shape::label() const {
  const std::string_view ld = load >= 0 ? loads()[static_cast<size_t>(load)].name : std::string_view("extra");
  return fmt::format("{} / {} (m={})", ld, info().name, m);
}

Floor floor_of(const Layer& layer, int64_t m, double weight_bits) {
  const double rows = static_cast<double>(out_rows(layer, m));
  const double k = static_cast<double>(layer.k), dm = static_cast<double>(m);
  Floor f;
  f.bytes = rows * k * weight_bits / 8.0 + dm * k * 2.0 + dm * rows * layer.out_bytes();
  f.flops = 2.0 * dm * rows * k;
  const double mem = f.bytes / kHbmBytesPerSecond, math = f.flops / kTensorFlops;
  f.math_bound = math > mem;
  f.us = 1e6 * std::max(mem, math);
  return f;
}

}  // namespace solgemm::judge
