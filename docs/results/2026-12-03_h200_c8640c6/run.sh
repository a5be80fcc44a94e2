#!/usr/bin/env bash
# Session 53, call 1 (binaries built here at c8640c6, carry/s53a/bins.txz): the first GPU run of session 52's review
# (BlasHandle): every GPU test executable, then the judge (default weights).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s53a
W=/tmp/s53c1; mkdir -p $W; tar xJf $C/bins.txz -C $W; cd $W
export SOLGEMM_JUDGE_EXE=$W/bins/solgemm-judge
R=/tmp/res; mkdir -p $R; cp bins/COMMIT $R/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > $R/build.log 2>&1
L=$R/tests-gpu.log
for t in test_gpu_router test_gpu_skinny_decode test_gpu_vendor test_gpu_wide test_gpu_skinny test_gpu_judge; do
  left=$((440 - SECONDS)); [ $left -lt 20 ] && { echo "== $t: not run (time)" >> $L; continue; }
  echo "== $t" >> $L; timeout $left ./bins/$t 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -12 >> $L
done
grep -h "owned" $L
left=$((585 - SECONDS))
timeout $left ./bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
tar czf $OUT/res.tgz -C /tmp res
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==" $L; grep -h "^score" $R/judge.txt
