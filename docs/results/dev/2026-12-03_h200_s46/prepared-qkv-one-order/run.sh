#!/usr/bin/env bash
# session 46 call 6 (perf-notes step 203): qkv_gate on one K order over 1..32: the batch-invariance GPU test, the
# judge's qkv_gate rows new / old (b327d6d) alternated twice, then the whole skinny test if time is left. One tar.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
for f in judge-old judge-new test_gpu_skinny; do xz -dc $f.xz > $f && chmod +x $f; done
R=/tmp/c6; mkdir -p $R
timeout 60 ./test_gpu_skinny --gtest_filter='Skinny.PlanLayoutsBatchInvariant' > $R/test-invariant.log 2>&1; echo "rc $?" >> $R/test-invariant.log
tar czf $OUT/c6.tgz -C /tmp c6
for i in 1 2; do
  for v in new old; do
    timeout 45 ./judge-$v --layers qkv_gate --json $R/$v-$i.json --md '' --svg '' > $R/$v-$i.txt 2>&1
    tar czf $OUT/c6.tgz -C /tmp c6
  done
done
timeout 100 ./test_gpu_skinny > $R/test_gpu_skinny.log 2>&1; echo "rc $?" >> $R/test_gpu_skinny.log
tar czf $OUT/c6.tgz -C /tmp c6
tail -n 3 $R/test-invariant.log $R/test_gpu_skinny.log; grep -h "qkv_gate  *16 \|qkv_gate  *1 \|qkv_gate  *8 " $R/*.txt
