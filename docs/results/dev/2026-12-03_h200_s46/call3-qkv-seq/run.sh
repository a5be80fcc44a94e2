#!/usr/bin/env bash
# session 46 call 3 (perf-notes step 201b): qkv_gate at 1..8 tokens on the seq 8 x 16 K order, again: tune_plan on the
# candidates at 1..16 (call 2's table did not come back), and the judge's qkv_gate rows, b327d6d's binary (old) and
# the new plan's (new) alternated twice more. Outputs in one tar.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
R=/tmp/c3; mkdir -p $R
for f in judge-old judge-new tune_plan; do xz -dc $f.xz > $f && chmod +x $f; done
L=cs8/rt5/wk2/g8,cs8/rt6/wk2/g8,cs8/rt5/wk1/g16,cs8/rt6/wk1/g16,cs8/rt10/wk1/g16
for i in 1 2; do
  for v in old new; do
    timeout 60 ./judge-$v --layers qkv_gate --json $R/$v-$i.json --md '' --svg '' > $R/$v-$i.txt 2>&1
  done
done
TUNE_LAYOUTS=$L TUNE_NO_VENDOR=1 TUNE_PAIRS=0 timeout 120 ./tune_plan 15 60 1,2,3,4,5,6,7,8,10,12,16 qkv_gate > $R/qkv-3.md 2>&1
tar czf $OUT/c3.tgz -C /tmp c3
grep "^| [0-9]* | 1 \|^| [0-9]* | 2 " $R/qkv-3.md | cut -c1-220
