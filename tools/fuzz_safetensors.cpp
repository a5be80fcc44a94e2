// libFuzzer target for the safetensors header parser (built only with a compiler that has -fsanitize=fuzzer;
// see tools/CMakeLists.txt). Input: 8 bytes of data-section size, then the header text. The parser must accept
// or throw solgemm::Error; any other exception, crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "solgemm/safetensors.hpp"
#include "solgemm/solgemm.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint64_t data_bytes = 0;
  for (int i = 7; i >= 0; --i) data_bytes = data_bytes << 8 | data[i];
  const std::string text(reinterpret_cast<const char*>(data + 8), size - 8);
  try {
    const auto tensors = solgemm::safetensors::parse_header(text, data_bytes, "fuzz");
    for (const auto& t : tensors)
      if (t.begin > t.end || t.end > data_bytes) std::abort();  // accepted offsets must be inside the data
  } catch (const solgemm::Error&) {
  }
  return 0;
}
