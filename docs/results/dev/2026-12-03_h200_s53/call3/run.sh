#!/usr/bin/env bash
# Session 53, call 3 (binaries built here at 5ca3d0d, carry/s53c/bins.txz; meant for two H200s, but only one-GPU machines
# were lent: Vendor.OtherDeviceRefused skips): the vendor tests, test_gpu_wide
# (GpuApi.UnalignedXAndOut: x and out 2-byte aligned through every family), the router and decode tests, then the
# judge on device 0.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s53c
W=/tmp/s53c3; mkdir -p $W; tar xJf $C/bins.txz -C $W
R=/tmp/res; mkdir -p $R; cp $W/bins/COMMIT $R/
export SOLGEMM_JUDGE_EXE=$W/bins/solgemm-judge
nvidia-smi --query-gpu=index,name --format=csv > $R/build.log 2>&1
L=$R/tests-gpu.log
for t in test_gpu_vendor test_gpu_wide test_gpu_router test_gpu_skinny_decode; do
  left=$((330 - SECONDS)); [ $left -lt 20 ] && { echo "== $t: not run (time)" >> $L; continue; }
  echo "== $t" >> $L; timeout $left $W/bins/$t 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -14 >> $L
done
left=$((560 - SECONDS))
CUDA_VISIBLE_DEVICES=0 timeout $left $W/bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
tar czf $OUT/res.tgz -C /tmp res
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|SKIPPED\|==\|Failure\|skipped" $L | head -30; grep -h "^score" $R/judge.txt
