#!/usr/bin/env bash
# session 41, call 2: every m in 1..64 on every layer, timed against cuBLAS (issue 4: "no shape slower than cuBLAS")
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-2; mkdir -p $O
MS=$(seq -s ' ' 1 64)
for L in qkv_gate o pooler unpooler router; do
  timeout 150 ./bins/solgemm-judge --layers $L --loads none --m $MS --inputs 1 --replays 100,400 --ci-target 0.02 \
    --tune-file tune.txt --json $O/sweep-$L.json --md '' --svg '' > /tmp/sweep-$L.txt 2>&1
  echo "== $L rc=$?" >> $O/sweep.log
  grep -E 'score|correct|fixed cost|commit' /tmp/sweep-$L.txt | head -5 >> $O/sweep.log
done
cat $O/sweep.log
