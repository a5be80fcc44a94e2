// Shared test helpers: GPU detection with a clear skip message, reproducible seeds.
#pragma once

#include <cstdint>
#include <string>

namespace solgemm::testing {

// True when a CUDA device is usable. GPU tests start with SOLGEMM_REQUIRE_GPU().
bool have_gpu();

// The seed a test uses: SOLGEMM_TEST_SEED from the environment, else `fallback`. Printed on failure.
uint64_t test_seed(uint64_t fallback);

// A project executable a test runs: $env_var if set, else build_dir/rel_path where build_dir is the folder
// above this test's own folder (so a build folder copied to another machine still works), else `fallback`
// (the path CMake recorded).
std::string project_exe(const char* env_var, const char* rel_path, const char* fallback);

}  // namespace solgemm::testing

#define SOLGEMM_REQUIRE_GPU()                                                         \
  do {                                                                                \
    if (!::solgemm::testing::have_gpu()) GTEST_SKIP() << "no CUDA GPU: GPU test skipped"; \
  } while (0)
