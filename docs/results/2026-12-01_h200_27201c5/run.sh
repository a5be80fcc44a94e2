#!/bin/bash
# final (device budget short): the skinny GPU tests (the pair's kernels), then the full judge at the final commit
(cd carry/s33 && tar xzf f.tgz)
B=$PWD/carry/s33/f; O=$1; mkdir -p $O/f
(cd $B/tests && ./test_gpu_skinny --gtest_brief=1) > $O/f/tests-gpu-skinny.log 2>&1
echo "test_gpu_skinny rc=$?" >> $O/sum.txt
SOLGEMM_TUNE_LOG=1 $B/new --json $O/f/judge.json --md $O/f/judge.md --svg $O/f/judge.svg > $O/f/judge.txt 2> $O/f/judge.log
echo "judge rc=$?" >> $O/sum.txt
grep -E "^score" $O/f/judge.txt >> $O/sum.txt
tar czf $O/all.tgz -C $O f && rm -rf $O/f
