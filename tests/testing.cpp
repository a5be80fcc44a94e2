#include "testing.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace solgemm::testing {

bool have_gpu() {
  static const bool ok = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return n > 0;
  }();
  return ok;
}

uint64_t test_seed(uint64_t fallback) {
  if (const char* s = std::getenv("SOLGEMM_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return fallback;
}

std::string project_exe(const char* env_var, const char* rel_path, const char* fallback) {
  if (const char* e = std::getenv(env_var)) return e;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto rel = self.parent_path().parent_path() / rel_path;
    if (std::filesystem::exists(rel, ec)) return rel.string();
  }
  return fallback;
}

}  // namespace solgemm::testing
