#!/usr/bin/env bash
# Session 48, call 5 (0ee5c4d: the slice at 9..16 on the skinny family): test_gpu_skinny (every m 1..64 of the slice
# against FP64), memcheck of the slice's rows, tune_plan of the slice at 9..16 with the plan's layout, the judge check.
cd "$(dirname "$0")"
tar xJf bins.txz
export SOLGEMM_JUDGE_EXE=$(pwd)/bins/solgemm-judge
O=/tmp/s48c5; mkdir -p $O
pack() { tar czf $OUT/s48c5.tgz -C /tmp s48c5; }
cp bins/COMMIT $O/
timeout 150 ./bins/test_gpu_skinny > $O/test_gpu_skinny.log 2>&1; echo "test_gpu_skinny rc=$?" >> $O/summary.txt; tail -2 $O/test_gpu_skinny.log >> $O/summary.txt; pack
timeout 90 compute-sanitizer --tool memcheck --kernel-name kns=skinny_kernel ./bins/test_gpu_skinny --gtest_filter='*unpooler_slice*' > $O/memcheck-slice.log 2>&1
echo "memcheck slice rc=$?" >> $O/summary.txt; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck-slice.log >> $O/summary.txt; pack
timeout 120 ./bins/tune_plan 15 60 8,9,12,16,17 'unpooler slice' > $O/tune-slice.md 2> $O/tune-slice.err; echo "tune rc=$?" >> $O/summary.txt; pack
timeout 120 ./bins/solgemm-judge --check-only --json $O/check.json --md '' --svg '' > $O/check.txt 2>&1; echo "judge check rc=$?" >> $O/summary.txt
grep -E "correct" $O/check.txt | tail -2 >> $O/summary.txt; pack
cat $O/summary.txt
