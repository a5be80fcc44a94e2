#!/usr/bin/env bash
# session 46 call 1: the pending skinny test (XRingEqualsStagedXManyExceptions), the simt tests, o on the simt mma
# form with 8 row blocks per CTA (raw BF16, trial), tune_plan simt rows twice; the slice as a control.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
cat b/COMMIT > $OUT/COMMIT
for r in 1 2; do TUNE_SIMT_ONLY=1 timeout 100 ./b/tune_plan 15 60 1,2,4,8,16 o > $OUT/o-simt-$r.md 2>&1; done
TUNE_SIMT_ONLY=1 timeout 60 ./b/tune_plan 15 60 1,8 "unpooler slice" > $OUT/slice-simt.md 2>&1
timeout 90 ./b/test_gpu_wide --gtest_filter='GpuSimt.*' > $OUT/test_gpu_simt.log 2>&1; echo "rc $?" >> $OUT/test_gpu_simt.log
timeout 200 ./b/test_gpu_skinny > $OUT/test_gpu_skinny.log 2>&1; echo "rc $?" >> $OUT/test_gpu_skinny.log
tail -2 $OUT/test_gpu_skinny.log $OUT/test_gpu_simt.log; grep "^| " $OUT/o-simt-1.md | head -20
