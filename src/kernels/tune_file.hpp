// The vendor tuner's tune file (PrepareOptions::tune_file), host code: one line per tuned shape,
// "TAG KEY HEX", KEY naming what the stored bytes depend on (no spaces), HEX the bytes in lowercase hex. vendor.cu
// stores its VendorChoice this way; tests/test_tune_file.cpp checks the format on the CPU.
#pragma once

#include <cstddef>
#include <string>

namespace solgemm::kernels::tune_file {

// The last entry for `key` in `path` into `bytes` (size `size`); false when the file does not exist or has none.
// Throws solgemm::Error naming the file and line for a line that is not "TAG KEY HEX" with 2 `size` hex digits (and
// saying so where TAG is another version "NAME-vN" of the same tag: a file an earlier solgemm wrote).
bool read(const std::string& path, const std::string& tag, const std::string& key, void* bytes, size_t size);
// Appends "TAG KEY HEX" for `bytes`; throws solgemm::Error naming the file if it cannot be written.
void append(const std::string& path, const std::string& tag, const std::string& key, const void* bytes, size_t size);

}  // namespace solgemm::kernels::tune_file
