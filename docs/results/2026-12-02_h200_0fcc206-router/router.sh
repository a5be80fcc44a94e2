#!/usr/bin/env bash
# The router's new 7..32 layout (perf-notes step 199): its GPU tests, then the judge's router rows (every load and the
# extra shapes' checks).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
timeout 120 ./b/test_gpu_router > $OUT/test_gpu_router.log 2>&1; echo "rc $?" >> $OUT/test_gpu_router.log
timeout 100 ./b/solgemm-judge --layers router --json $OUT/judge-router.json --md $OUT/judge-router.md --svg '' \
  > $OUT/judge-router.txt 2> $OUT/judge-router.log; echo "rc $?" >> $OUT/judge-router.log
tail -3 $OUT/test_gpu_router.log; grep -i "score\|router" $OUT/judge-router.txt | head -20
