#!/usr/bin/env bash
# The vendor tuner with its pair checks at 3 places of x and out (perf-notes step 195): the pooler at m = 104 / 128 / 160 /
# 256 in the judge, 3 processes, with the tuner's log; then the vendor GPU tests.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/place; mkdir -p $O
for i in 1 2 3; do
  SOLGEMM_TUNE_LOG=1 timeout 150 ./b/solgemm-judge --layers pooler --loads none --m 104,128,160,256 --inputs 1 \
    --replays 100,200 --ci-target 0.03 --json $O/judge-$i.json --md '' --svg '' > $O/judge-$i.txt 2> $O/tune-$i.log
done
timeout 200 ./b/test_gpu_vendor > $O/test_gpu_vendor.log 2>&1; echo "test_gpu_vendor rc $?" >> $O/test_gpu_vendor.log
cd $OUT && tar czf place.tgz place && rm -rf place
