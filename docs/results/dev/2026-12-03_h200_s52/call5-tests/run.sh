#!/usr/bin/env bash
# Session 52, call 5 (the binaries of call 4, carry/s52d/bins.txz: the library of 5861c2b, as at HEAD): the GPU test
# executables call 3 did not run (wide, judge, skinny), within the session's last device minutes.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s52d
W=/tmp/s52c5; mkdir -p $W; tar xJf $C/bins.txz -C $W; cd $W
export SOLGEMM_JUDGE_EXE=$W/bins/solgemm-judge
L=/tmp/tests-gpu.log; cp bins/COMMIT /tmp/COMMIT
for t in test_gpu_wide test_gpu_judge test_gpu_skinny; do
  left=$((200 - SECONDS)); [ $left -lt 20 ] && { echo "== $t: not run (time)" >> $L; continue; }
  echo "== $t" >> $L; timeout $left ./bins/$t 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -10 >> $L
done
cp $L /tmp/COMMIT $OUT/
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==" $L
