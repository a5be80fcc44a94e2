#include "testing.hpp"

#include <cuda_runtime.h>

#include <cstdlib>

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

}  // namespace solgemm::testing
