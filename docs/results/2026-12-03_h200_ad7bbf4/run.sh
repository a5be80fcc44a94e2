#!/usr/bin/env bash
# Session 51, call 4 (binaries of this commit, carry/s51d/bins.txz; da474b4's judge as old-judge.txz): step 213 taken
# (the simt mma form's x rows 128-byte aligned): the simt tests and the slice's every-m test; the judge's unpooler rows
# (the slice at decode 1 / verify 1), da474b4's judge and this one alternated twice; then the whole judge, default and
# llm-like weights.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s51d
W=/tmp/s51c4; mkdir -p $W/old; tar xJf $C/bins.txz -C $W; tar xJf $C/old-judge.txz -C $W/old; cd $W
R=/tmp/check; mkdir -p $R; cp bins/COMMIT $R/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > $R/build.log 2>&1
{ echo "== test_gpu_wide GpuSimt.*"; timeout 100 ./bins/test_gpu_wide --gtest_filter='GpuSimt.*' 2>&1 | tail -4
  echo "== test_gpu_skinny EveryMAgainstFp64 (unpooler_slice, unpooler)"; timeout 150 ./bins/test_gpu_skinny --gtest_filter='*EveryMAgainstFp64/unpooler*' 2>&1 | tail -4
  echo "== test_gpu_skinny_decode"; timeout 30 ./bins/test_gpu_skinny_decode 2>&1 | tail -2; } > $R/tests-gpu.log
A=$R/ab; mkdir -p $A
for i in 1 2; do
  for v in old new; do
    J=./bins/solgemm-judge; [ $v = old ] && J=./old/solgemm-judge
    timeout 60 $J --layers unpooler --loads 'decode 1' 'verify 1' --json $A/$v$i.json --md '' --svg '' > $A/$v$i.txt 2>&1
  done
done
timeout 170 ./bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
left=$((560 - SECONDS))
[ $left -gt 60 ] && { timeout $left ./bins/solgemm-judge --generator llm-like --json $R/judge-llm.json --md $R/judge-llm.md --svg '' \
  > $R/judge-llm.txt 2>&1; echo "llm rc $?" >> $R/judge-llm.txt; }
tar czf $OUT/check.tgz -C /tmp check
echo "elapsed $SECONDS"; cat $R/tests-gpu.log; grep -h "unpooler" $A/*.txt | grep -v "^\[" | head -8; grep -h "^score" $R/judge.txt $R/judge-llm.txt
