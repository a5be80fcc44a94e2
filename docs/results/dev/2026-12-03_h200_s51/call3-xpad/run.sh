#!/usr/bin/env bash
# Session 51, call 3 (binaries of this commit's tree, carry/s51c/bins.txz): perf-notes step 213, the simt 12-bit slice
# with x's rows padded by 0 or 128 bytes (each token's bulk copy 128-byte aligned: /xp0, /xp128) beside /xf1, /xf2 and
# the plan's form at 1 / 2 / 4 / 8 tokens; three runs, the second with timelines (TUNE_TRACE).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=$(pwd)/carry/s51c/bins.txz
W=/tmp/s51c3; mkdir -p $W; tar xJf $B -C $W; cd $W
O=/tmp/xp; mkdir -p $O; cp bins/COMMIT $O/
TUNE_SIMT_ONLY=1 timeout 150 ./bins/tune_plan 15 60 1,2,4,8 'unpooler slice' > $O/run1.md 2>&1; echo "rc $?" >> $O/run1.md
TUNE_SIMT_ONLY=1 TUNE_TRACE=1 timeout 200 ./bins/tune_plan 15 60 1,2,4,8 'unpooler slice' > $O/run2-trace.md 2>&1; echo "rc $?" >> $O/run2-trace.md
TUNE_SIMT_ONLY=1 timeout 150 ./bins/tune_plan 15 60 8,4,2,1 'unpooler slice' > $O/run3.md 2>&1; echo "rc $?" >> $O/run3.md
tar czf $OUT/xp.tgz -C /tmp xp
echo "elapsed $SECONDS"; grep -h "c12" $O/run1.md $O/run3.md | cut -c1-400
