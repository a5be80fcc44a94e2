// safetensors.cpp: strict reader (include/solgemm/safetensors.hpp).
//
// File = 8-byte little-endian header length L, L bytes of JSON header, then the data section. The header maps
// tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data section);
// "__metadata__" (string map) is skipped. Every check fails with a solgemm::Error naming the file, the tensor
// and the problem; nothing is read outside the file, no size computation can overflow.
#include "solgemm/safetensors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "solgemm/solgemm.hpp"

namespace solgemm::safetensors {

namespace {

using json = nlohmann::ordered_json;  // keeps the file's tensor order

constexpr uint64_t kMaxHeader = 100'000'000;  // the format's own limit (100 MB)
constexpr int kMaxDepth = 64;                 // a header is 3 levels deep; refuse pathological nesting
constexpr uint64_t kMaxElements = uint64_t{1} << 56;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(fmt::format("safetensors: {}: {}", path, what));
}
[[noreturn]] void fail_tensor(const std::string& path, const std::string& name, const std::string& what) {
  std::string shown = name.size() > 200 ? name.substr(0, 200) + "..." : name;  // keep the message one line
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  throw Error(fmt::format("safetensors: {}: tensor '{}': {}", path, shown, what));
}

// Bytes per element of the dtypes the format defines; 0 for an unknown one.
uint64_t dtype_size(const std::string& d) {
  static const std::pair<const char*, uint64_t> table[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  for (const auto& [name, size] : table)
    if (d == name) return size;
  return 0;
}

// Nesting depth of JSON text (brackets outside strings), so that a hostile header cannot exhaust the stack.
int json_depth(const std::string& s) {
  int depth = 0, worst = 0;
  bool in_str = false, esc = false;
  for (char c : s) {
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '{' || c == '[') worst = std::max(worst, ++depth);
    else if (c == '}' || c == ']') --depth;
  }
  return worst;
}

uint64_t as_u64(const json& v, const std::string& path, const std::string& name, const char* what) {
  if (!v.is_number_unsigned())  // non-negative integers parse as unsigned; negative, float, other: refused
    fail_tensor(path, name, fmt::format("{} must be non-negative integers, found {}", what, v.dump()));
  return v.get<uint64_t>();
}

TensorInfo parse_tensor(const std::string& name, const json& t, uint64_t data_bytes, const std::string& path) {
  if (!t.is_object()) fail_tensor(path, name, fmt::format("entry is a JSON {}, expected an object", t.type_name()));
  TensorInfo info;
  info.name = name;
  const auto dt = t.find("dtype"), sh = t.find("shape"), of = t.find("data_offsets");
  if (dt == t.end() || sh == t.end() || of == t.end())
    fail_tensor(path, name, "missing \"dtype\", \"shape\" or \"data_offsets\"");
  if (!dt->is_string()) fail_tensor(path, name, fmt::format("dtype is {}, expected a string", dt->dump()));
  info.dtype = dt->get<std::string>();
  const uint64_t esize = dtype_size(info.dtype);
  if (esize == 0) fail_tensor(path, name, fmt::format("unsupported dtype '{}'", info.dtype));
  if (!sh->is_array()) fail_tensor(path, name, fmt::format("shape is {}, expected an array", sh->dump()));
  if (sh->size() > 16) fail_tensor(path, name, fmt::format("shape has {} dimensions (at most 16)", sh->size()));
  uint64_t elements = 1;
  for (const json& d : *sh) {
    const uint64_t v = as_u64(d, path, name, "shape entries");
    if (v > kMaxElements || (v != 0 && elements > kMaxElements / v))
      fail_tensor(path, name, fmt::format("shape {} has too many elements", sh->dump()));
    elements *= v;
    info.shape.push_back(static_cast<int64_t>(v));
  }
  if (!of->is_array() || of->size() != 2)
    fail_tensor(path, name, fmt::format("data_offsets is {}, expected [begin, end]", of->dump()));
  info.begin = as_u64((*of)[0], path, name, "data_offsets");
  info.end = as_u64((*of)[1], path, name, "data_offsets");
  if (info.begin > info.end)
    fail_tensor(path, name, fmt::format("data_offsets [{}, {}]: begin after end", info.begin, info.end));
  if (info.end > data_bytes)
    fail_tensor(path, name, fmt::format("data_offsets [{}, {}] end past the data section ({} bytes): file truncated "
                                        "or offsets wrong", info.begin, info.end, data_bytes));
  if (info.end - info.begin != elements * esize)
    fail_tensor(path, name, fmt::format("data_offsets [{}, {}] hold {} bytes, but shape {} of {} needs {}", info.begin,
                                        info.end, info.end - info.begin, sh->dump(), info.dtype, elements * esize));
  return info;
}

}  // namespace

int64_t TensorInfo::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || static_cast<uint64_t>(d) > kMaxElements || (d != 0 && n > kMaxElements / static_cast<uint64_t>(d)))
      throw Error(fmt::format("safetensors: tensor '{}': bad shape", name));
    n *= static_cast<uint64_t>(d);
  }
  return static_cast<int64_t>(n);
}

std::vector<TensorInfo> parse_header(const std::string& json_text, uint64_t data_bytes,
                                     const std::string& path_for_errors) {
  const std::string& path = path_for_errors;
  if (json_depth(json_text) > kMaxDepth) fail(path, fmt::format("header nests deeper than {} levels", kMaxDepth));
  json h;
  try {
    h = json::parse(json_text);
  } catch (const json::exception& e) {
    fail(path, fmt::format("header is not valid JSON ({})", e.what()));
  }
  if (!h.is_object()) fail(path, fmt::format("header is a JSON {}, expected an object", h.type_name()));
  std::vector<TensorInfo> out;
  try {
    for (auto it = h.begin(); it != h.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (!it.value().is_object() && !it.value().is_null()) fail(path, "__metadata__ is not an object");
        continue;
      }
      out.push_back(parse_tensor(it.key(), it.value(), data_bytes, path));
    }
  } catch (const json::exception& e) {  // defensive: every access above is type-checked first
    fail(path, fmt::format("malformed header ({})", e.what()));
  }
  // No two tensors may share bytes (empty tensors take none).
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : out)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      fail_tensor(path, by_offset[i]->name,
                  fmt::format("data_offsets [{}, {}] overlap tensor '{}' [{}, {}]", by_offset[i]->begin,
                              by_offset[i]->end, by_offset[i - 1]->name, by_offset[i - 1]->begin,
                              by_offset[i - 1]->end));
  return out;
}

File File::open(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, "cannot open the file");
  f.seekg(0, std::ios::end);
  const std::streamoff size_off = f.tellg();
  if (size_off < 0) fail(path, "cannot determine the file size");
  const uint64_t size = static_cast<uint64_t>(size_off);
  if (size < 8) fail(path, fmt::format("file is {} bytes, shorter than the 8-byte header length", size));
  f.seekg(0);
  unsigned char len[8];
  if (!f.read(reinterpret_cast<char*>(len), 8)) fail(path, "cannot read the header length");
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = hlen << 8 | len[i];
  if (hlen < 2) fail(path, fmt::format("header length {} is too small for a JSON object", hlen));
  if (hlen > kMaxHeader) fail(path, fmt::format("header length {} exceeds the format's limit of {}", hlen, kMaxHeader));
  if (hlen > size - 8)
    fail(path, fmt::format("header length {} runs past the end of the file ({} bytes): truncated or corrupt", hlen,
                           size));
  std::string text(static_cast<size_t>(hlen), '\0');
  if (!f.read(text.data(), static_cast<std::streamsize>(hlen))) fail(path, "cannot read the header");
  File file;
  file.path_ = path;
  file.data_start_ = 8 + hlen;
  file.tensors_ = parse_header(text, size - 8 - hlen, path);
  return file;
}

const TensorInfo* File::find(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<uint8_t> File::read(const TensorInfo& t) const {
  const uint64_t esize = dtype_size(t.dtype);
  if (esize == 0) fail_tensor(path_, t.name, fmt::format("unsupported dtype '{}'", t.dtype));
  if (t.begin > t.end || t.end - t.begin != static_cast<uint64_t>(t.elements()) * esize)
    fail_tensor(path_, t.name, "offsets do not match the shape");
  std::ifstream f(path_, std::ios::binary);
  if (!f) fail_tensor(path_, t.name, "cannot reopen the file");
  std::vector<uint8_t> bytes(static_cast<size_t>(t.end - t.begin));
  f.seekg(static_cast<std::streamoff>(data_start_ + t.begin));
  if (!f || !f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    fail_tensor(path_, t.name, fmt::format("data [{}, {}) could not be read: file truncated (changed since open?)",
                                           t.begin, t.end));
  return bytes;
}

}  // namespace solgemm::safetensors
