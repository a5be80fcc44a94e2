// The tune file's format (tune_file.hpp).
#include "tune_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "solgemm/solgemm.hpp"

namespace solgemm::kernels::tune_file {

bool read(const std::string& path, const std::string& tag, const std::string& key, void* bytes, size_t size) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  bool found = false;
  for (int no = 1; std::getline(in, line); ++no) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string t, k, hex;
    ls >> t >> k >> hex;
    // an entry of another version of the same tuner ("NAME-vN"): its bytes mean something else
    const size_t v = tag.rfind("-v"), tv = t.rfind("-v");
    if (t != tag && v != std::string::npos && tv != std::string::npos && t.compare(0, tv, tag, 0, v) == 0)
      throw Error(fmt::format("solgemm: prepare: tune file {} line {}: an entry of {}, written by another version of "
                              "solgemm (this one reads and writes {}): remove the file or name another one, and "
                              "prepare tunes again and writes it anew",
                              path, no, t, tag));
    if (t != tag || k.empty() || hex.size() != 2 * size || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Error(fmt::format("solgemm: prepare: tune file {} line {}: expected \"{} KEY HEX\" with {} hex digits "
                              "(a file this version of solgemm wrote)",
                              path, no, tag, 2 * size));
    if (k != key) continue;
    auto* b = static_cast<unsigned char*>(bytes);
    for (size_t i = 0; i < size; ++i) b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    found = true;  // (the last entry for a key wins)
  }
  return found;
}

void append(const std::string& path, const std::string& tag, const std::string& key, const void* bytes, size_t size) {
  std::string hex;
  hex.reserve(2 * size);
  const auto* b = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) hex += fmt::format("{:02x}", b[i]);
  std::ofstream out(path, std::ios::app);
  out << tag << ' ' << key << ' ' << hex << '\n';
  out.flush();
  if (!out)
    throw Error(fmt::format("solgemm: prepare: cannot append to the tune file {}: {}", path, std::strerror(errno)));
}

}  // namespace solgemm::kernels::tune_file
