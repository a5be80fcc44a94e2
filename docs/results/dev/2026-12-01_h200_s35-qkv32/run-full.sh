#!/bin/bash
# session 35, last call: the full judge at 77de067 (binaries built here, carried as carry/s35h/b.txz), then every
# GPU test (the judge's end-to-end test pointed at the carried judge). Usage: bash run-full.sh OUTDIR
set -u
T0=$(date +%s); O=$1; mkdir -p $O/f
(cd carry/s35h && tar xJf b.txz); B=$PWD/carry/s35h/b
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
SOLGEMM_TUNE_LOG=1 timeout 200 $B/solgemm-judge --json $O/f/judge.json --md $O/f/judge.md --svg $O/f/judge.svg > $O/f/judge.txt 2> $O/f/judge.log
echo "judge rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt; grep -E "^score" $O/f/judge.txt >> $O/sum.txt
for t in $B/test_gpu_*; do
  n=$(basename $t); left=$(( 560 - ( $(date +%s) - T0 ) )); [ $left -gt 20 ] || { echo "$n not run (time)" >> $O/sum.txt; continue; }
  echo "== $n" >> $O/f/tests-gpu.log
  (cd $B && SOLGEMM_JUDGE_EXE=$B/solgemm-judge timeout $left ./$n --gtest_brief=1) >> $O/f/tests-gpu.log 2>&1
  echo "$n rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
done
tar czf $O/all.tgz -C $O f && rm -rf $O/f
cat $O/sum.txt
