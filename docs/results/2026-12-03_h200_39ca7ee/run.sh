#!/usr/bin/env bash
# Session 53, call 2 (binaries built here at 39ca7ee, carry/s53b: bins.txz and python.txz, the Python module for the GPU
# machine's Python 3.12): step 218 (PrepareOptions::row_counts). test_gpu_wide (GpuSimt.RowCountsDeclared, and every
# check_shape now declaring its row count), the Python bindings' tests (row_counts), the judge (it declares its calls'
# rows), then test_gpu_judge in the time left.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s53b
REPO=$(pwd)
W=/tmp/s53c2; mkdir -p $W; tar xJf $C/bins.txz -C $W
R=/tmp/res; mkdir -p $R; cp $W/bins/COMMIT $R/
export SOLGEMM_JUDGE_EXE=$W/bins/solgemm-judge
L=$R/tests-gpu.log
echo "== test_gpu_wide" >> $L; timeout 240 $W/bins/test_gpu_wide 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -14 >> $L
echo "== python ($(python3 --version))" >> $L
mkdir -p $W/py && tar xJf $C/python.txz -C $W/py
PYTHONPATH=$W/py/python timeout 200 python3 -m unittest -v $REPO/python/tests/test_solgemm.py >> $L 2>&1; echo "python rc $?" >> $L
timeout 300 $W/bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
left=$((570 - SECONDS))
echo "== test_gpu_judge (${left} s left)" >> $L
[ $left -gt 30 ] && timeout $left $W/bins/test_gpu_judge 2>&1 | grep -v "^\[ RUN\|^\[       OK\|^$" | grep -v "^Running main\|^Note: \|^\[---\|^\[===" | tail -12 >> $L
tar czf $OUT/res.tgz -C /tmp res
echo "elapsed $SECONDS"; grep -h "PASSED\|FAILED\|==\|^OK\|python rc\|Ran \|RowCounts" $L; grep -h "^score" $R/judge.txt
