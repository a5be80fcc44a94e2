#!/usr/bin/env bash
# Session 48, call 2: every m in 1..64 on qkv_gate and the router against cuBLAS (issue 4 / 5: no shape slower than
# cuBLAS; both plans moved since session 41's sweep: qkv_gate's K order over 1..32, the router's 7..32 layout).
set -u
cd "$(dirname "$0")"
[ -d bins ] || tar xJf bins.txz
O=/tmp/s48c2; mkdir -p $O
MS=$(seq -s ' ' 1 64)
for L in qkv_gate router; do
  timeout 170 ./bins/solgemm-judge --layers $L --loads none --m $MS --inputs 1 --replays 100,400 --ci-target 0.02 \
    --tune-file /tmp/tune.txt --json $O/sweep-$L.json --md '' --svg '' > $O/sweep-$L.txt 2>&1
  echo "== $L rc=$?" >> $O/sweep.log
  grep -E 'score|correct|fixed cost|commit' $O/sweep-$L.txt | head -5 >> $O/sweep.log
  tar czf $OUT/s48c2.tgz -C /tmp s48c2
done
cat $O/sweep.log
