#!/usr/bin/env bash
# Session 52, call 3 (binaries built here at the commit of step 216, carry/s52c: bins.txz and python.txz, the Python module for
# the GPU machine's Python 3.12): the vendor and router GPU tests (Vendor.SharedWorkspace, Router.DeviceMemory), the
# Python bindings' tests (shared_workspace, device_bytes), the skinny decode tests, then the judge.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s52c
REPO=$(pwd)
W=/tmp/s52c3; mkdir -p $W; tar xJf $C/bins.txz -C $W
R=/tmp/res; mkdir -p $R; cp $W/bins/COMMIT $R/
L=$R/tests-gpu.log
for t in test_gpu_vendor test_gpu_router test_gpu_skinny_decode; do
  echo "== $t" >> $L; timeout 200 $W/bins/$t 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -12 >> $L
done
echo "== python ($(python3 --version))" >> $L
mkdir -p $W/py && tar xJf $C/python.txz -C $W/py
PYTHONPATH=$W/py/python timeout 200 python3 -m unittest -v $REPO/python/tests/test_solgemm.py >> $L 2>&1; echo "python rc $?" >> $L
left=$((560 - SECONDS))
timeout $left $W/bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
tar czf $OUT/res.tgz -C /tmp res
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==\|^OK\|python rc\|Ran " $L; grep -h "^score" $R/judge.txt
