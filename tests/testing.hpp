// Shared test helpers: GPU detection with a clear skip message, reproducible seeds.
#pragma once

#include <cstdint>
#include <string>

namespace solgemm::testing {

// True when a CUDA device is usable. GPU tests start with SOLGEMM_REQUIRE_GPU().
bool have_gpu();

// The seed a test uses: SOLGEMM_TEST_SEED from the environment, else `fallback`. Printed on failure.
uint64_t test_seed(uint64_t fallback);

}  // namespace solgemm::testing

#define SOLGEMM_REQUIRE_GPU()                                                         \
  do {                                                                                \
    if (!::solgemm::testing::have_gpu()) GTEST_SKIP() << "no CUDA GPU: GPU test skipped"; \
  } while (0)
