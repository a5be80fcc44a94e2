#!/bin/bash
# session 35, call 1 (binaries built here at aa4881c, carried as carry/s35/b.txz):
# every GPU test (first run of Cluster16EqualsWorkspace and PairSequenceEqualsOneCta's fallback check),
# step 167 (qkv_gate and the unpooler slice as clusters of 16), step 168 (o at 8..32 tokens on pairs), then the judge
# if the time allows. Usage: bash run.sh OUTDIR
set -u
T0=$(date +%s); O=$1; mkdir -p $O/f
(cd carry/s35 && tar xJf b.txz)
B=$PWD/carry/s35/b
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $O/f/gpu.txt 2>&1
for t in $B/test_gpu_*; do
  n=$(basename $t); echo "== $n" >> $O/f/tests-gpu.log
  (cd $B && timeout 240 ./$n --gtest_brief=1) >> $O/f/tests-gpu.log 2>&1
  echo "$n rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
done
grep -h "Cluster16\|FAILED" $O/f/tests-gpu.log >> $O/sum.txt
TUNE_LAYOUTS=cs16/rt9/wk1/g8,cs16/rt9/wk1/g8/nc,cs8/rt5/wk2/g8,cs8/rt6/wk2/g8 timeout 120 $B/tune_plan 15 60 1,8,16 qkv_gate > $O/f/tune-qkv.md 2>&1
echo "tune qkv rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
timeout 100 $B/tune_plan 15 60 1,8,16,32 o > $O/f/tune-o.md 2>&1
echo "tune o rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
timeout 100 $B/tune_plan 15 60 1,2,4,8 'unpooler slice' > $O/f/tune-slice.md 2>&1
echo "tune slice rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
left=$(( 585 - ( $(date +%s) - T0 ) ))
if [ $left -gt 120 ]; then
  SOLGEMM_TUNE_LOG=1 timeout $left $B/solgemm-judge --json $O/f/judge.json --md $O/f/judge.md --svg $O/f/judge.svg > $O/f/judge.txt 2> $O/f/judge.log
  echo "judge rc=$? t=$(( $(date +%s) - T0 ))" >> $O/sum.txt
  grep -E "^score" $O/f/judge.txt >> $O/sum.txt
else
  echo "judge skipped: $left s left" >> $O/sum.txt
fi
tar czf $O/all.tgz -C $O f && rm -rf $O/f
