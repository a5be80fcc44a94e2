#!/usr/bin/env bash
# The pooler at m = 104 in the judge (perf-notes step 195): slow (0.85-0.91x) in 3 processes with --m 104,128,160,256,
# fast (1.17x) in one with --m 104,112,120,128. Does it follow the m list (the judge's buffers are sized by the largest m)?
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/m104; mkdir -p $O
i=0
for ms in 104,128,160,256 104,112,120,128 104,256 104 104,128,160,256 104,112,120,128 104,256 104; do
  i=$((i+1))
  SOLGEMM_TUNE_LOG=1 timeout 100 ./b/solgemm-judge --layers pooler --loads none --m $ms --inputs 1 \
    --replays 100,200 --ci-target 0.03 --json $O/j$i.json --md '' --svg '' > $O/j$i.txt 2> $O/t$i.log
  echo "$i $ms rc $?" >> $O/runs.txt
done
cd $OUT && tar czf m104.tgz m104 && rm -rf m104
