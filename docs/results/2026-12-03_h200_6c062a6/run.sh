#!/usr/bin/env bash
# Session 53, call 4 (binaries built here at 6c062a6, carry/s53d/bins.txz): test_gpu_wide again after the fix that call 3's
# GpuApi.UnalignedXAndOut asked for (a skinny call with x not 16-byte aligned runs on cuBLAS), then the judge in the
# time left (the session's last device minutes).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s53d
W=/tmp/s53c4; mkdir -p $W; tar xJf $C/bins.txz -C $W
R=/tmp/res; mkdir -p $R; cp $W/bins/COMMIT $R/
L=$R/tests-gpu.log
echo "== test_gpu_wide" >> $L; timeout 200 $W/bins/test_gpu_wide 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -14 >> $L
tar czf $OUT/res.tgz -C /tmp res
left=$((300 - SECONDS))
if [ $left -gt 100 ]; then
  timeout $left $W/bins/solgemm-judge --json $R/judge.json --md $R/judge.md > $R/judge.txt 2> $R/judge.log
  echo "judge rc $?" >> $R/judge.txt
  tar czf $OUT/res.tgz -C /tmp res
fi
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==\|Failure\|exception" $L | head -20; grep -h "^score" $R/judge.txt 2>/dev/null
