#!/usr/bin/env bash
# Session 48, call 4: the unpooler's 1024-row slice at 9..32 tokens (unjudged m; the plan runs it on the vendor family
# from 9): the skinny sweep against cuBLAS and the tuned cuBLASLt (perf-notes step 196 saw cs8 / rt5 / wk2 / g4 at
# 5.70 us against the vendor's 6.18 at m = 16 on one sweep). Two runs.
cd "$(dirname "$0")"
[ -d bins ] || tar xJf bins.txz
O=/tmp/s48c4; mkdir -p $O
for r in 1 2; do
  timeout 200 ./bins/tune_plan 15 60 9,12,16,24,32 'unpooler slice' > $O/tune-slice-$r.md 2> $O/tune-slice-$r.err
  echo "run $r rc=$?" >> $O/summary.txt
  tar czf $OUT/s48c4.tgz -C /tmp s48c4
done
cat $O/summary.txt
