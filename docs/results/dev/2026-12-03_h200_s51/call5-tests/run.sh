#!/usr/bin/env bash
# Session 51, call 5 (the binaries of call 4, carry/s51d/bins.txz: this commit's library): every GPU test executable.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s51d
W=/tmp/s51c5; mkdir -p $W; tar xJf $C/bins.txz -C $W; cd $W
export SOLGEMM_JUDGE_EXE=$W/bins/solgemm-judge
L=/tmp/tests-gpu.log; cp bins/COMMIT /tmp/COMMIT
for t in test_gpu_router test_gpu_skinny_decode test_gpu_vendor test_gpu_wide test_gpu_skinny test_gpu_judge; do
  left=$((450 - SECONDS)); [ $left -lt 20 ] && { echo "== $t: not run (time)" >> $L; continue; }
  echo "== $t" >> $L; timeout $left ./bins/$t 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | tail -8 >> $L
done
cp $L $OUT/; cp /tmp/COMMIT $OUT/
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==" $L
