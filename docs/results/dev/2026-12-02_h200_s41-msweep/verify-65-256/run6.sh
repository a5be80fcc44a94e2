#!/usr/bin/env bash
# session 41, call 6: the bucket check at multiples of the eighth (438507c): the vendor GPU tests; the pooler at 96..128
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
rm -rf bins && mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-6; mkdir -p $O
timeout 40 ./bins/test_gpu_vendor > $O/test_gpu_vendor.log 2>&1; echo "rc=$?" >> $O/test_gpu_vendor.log
SOLGEMM_TUNE_LOG=1 timeout 60 ./bins/solgemm-judge --layers pooler --loads none --m 96 97 104 105 112 120 128 --inputs 1 \
  --replays 100,200 --ci-target 0.025 --json $O/new8b-pooler.json --md '' --svg '' > $O/new8b-pooler.txt 2> /tmp/tl.txt
echo "rc=$?" >> $O/new8b-pooler.txt
grep -E 'prepare |at m 1[0-2][0-9]|at m 9[0-9]' /tmp/tl.txt | cut -c1-1500 > $O/tunelog-pooler.txt
tail -3 $O/test_gpu_vendor.log; grep -E 'rc=|pooler .* 1[0-2][0-9] ' $O/new8b-pooler.txt | head
