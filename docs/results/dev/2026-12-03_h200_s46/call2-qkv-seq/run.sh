#!/usr/bin/env bash
# session 46 call 2 (perf-notes step 201b): qkv_gate at 1..8 tokens on the seq 8 x 16 K order (cs8 / rt5|rt6 / wk1 /
# g16) against the plan's 8 x (2 x 8): tune_plan on the candidates twice, then the judge's qkv_gate rows, HEAD's
# binary (old) and the new plan's (new) alternated three times; o at m = 1..2 on two layouts as a side look.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
for f in judge-old judge-new tune_plan; do xz -dc $f.xz > $f && chmod +x $f; done
L=cs8/rt5/wk2/g8,cs8/rt6/wk2/g8,cs8/rt5/wk1/g16,cs8/rt6/wk1/g16,cs8/rt10/wk1/g16
for r in 1 2; do
  TUNE_LAYOUTS=$L TUNE_NO_VENDOR=1 TUNE_PAIRS=0 timeout 120 ./tune_plan 15 60 1,2,3,4,5,6,7,8,10,12,16 qkv_gate > $OUT/qkv-$r.md 2>&1
done
for i in 1 2 3; do
  for v in old new; do
    timeout 60 ./judge-$v --layers qkv_gate --json $OUT/$v-$i.json --md '' --svg '' > $OUT/$v-$i.txt 2>&1
  done
done
TUNE_LAYOUTS=cs1/rt2/wk2/g8,cs1/rt2/wk4/g4,cs1/rt4/wk4/g4 TUNE_NO_VENDOR=1 TUNE_PAIRS=0 timeout 60 ./tune_plan 15 60 1,2 o > $OUT/o-12.md 2>&1
grep "^| [0-9]" $OUT/qkv-1.md | cut -c1-250
grep -h "qkv_gate" $OUT/old-*.txt $OUT/new-*.txt | head -30
