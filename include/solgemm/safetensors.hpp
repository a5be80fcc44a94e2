// Minimal, strict safetensors reader (header parsed with nlohmann::json). Used by the judge (weights from a
// checkpoint) and by solgemm-inspect. Every problem -> solgemm::Error naming the file, the tensor and what is
// wrong (missing file, truncated header or data, offsets outside the data or overlapping, shape/size
// mismatch, unsupported dtype). Never reads out of bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace solgemm::safetensors {

struct TensorInfo {
  std::string name;
  std::string dtype;              // as in the file: "BF16", "F32", "F16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;    // byte offsets inside the data section
  int64_t elements() const;
};

class File {
 public:
  // Reads and validates the header (and checks the file is long enough for every tensor).
  static File open(const std::string& path);
  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find(const std::string& name) const;
  // Raw bytes of one tensor (validated size).
  std::vector<uint8_t> read(const TensorInfo& t) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::vector<TensorInfo> tensors_;
};

// Parse a header buffer (the JSON text) against a data section of `data_bytes` bytes; exposed for fuzzing.
std::vector<TensorInfo> parse_header(const std::string& json_text, uint64_t data_bytes,
                                     const std::string& path_for_errors);

}  // namespace solgemm::safetensors
