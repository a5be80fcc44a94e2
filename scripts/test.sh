#!/usr/bin/env bash
# Build everything and run the tests (CPU tests everywhere; GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
# SOLGEMM_CMAKE_ARGS: extra configure options (CI: -DSOLGEMM_PYTHON=ON, the Python bindings required).
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ${SOLGEMM_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test.sh: no CUDA GPU here: the GPU tests (label gpu) will report Skipped (\"no CUDA GPU: GPU test skipped\")"
fi
ctest --test-dir "$BUILD" --output-on-failure "$@"
