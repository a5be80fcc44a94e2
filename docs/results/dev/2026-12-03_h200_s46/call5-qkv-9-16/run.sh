#!/usr/bin/env bash
# session 46 call 5: what one K order over qkv_gate's 1..32 would cost at 9..16 (perf-notes step 203): the 17..32
# order's layouts (seq 8 x 16) against the plan's 8 x (2 x 8) at every m of 9..16, tune_plan twice. One tar.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
R=/tmp/c5; mkdir -p $R
L=cs8/rt5/wk2/g8,cs8/rt6/wk2/g8,cs8/rt5/wk1/g16,cs8/rt6/wk1/g16,cs8/rt10/wk1/g16
for r in 1 2; do
  TUNE_LAYOUTS=$L TUNE_NO_VENDOR=1 TUNE_PAIRS=0 timeout 150 ./b/tune_plan 15 60 9,10,11,12,13,14,15,16 qkv_gate > $R/qkv916-$r.md 2>&1
done
tar czf $OUT/c5.tgz -C /tmp c5
grep -h "^| [0-9]* | 2 " $R/*.md | cut -c1-240
