#!/usr/bin/env bash
# Session 43, call 3 (at adf912e): skinny GPU tests, the exception path on llm-like weights (exc.sh), qkv_gate on
# llm-like weights at 8..16 tokens (plan layouts, the guard bypassed), the judge on llm-like weights, then on default.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((570 - ($(date +%s) - T0))); }
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/s43c; mkdir -p $O
cat b/COMMIT > $O/commit.txt
for t in test_gpu_skinny_decode test_gpu_skinny test_gpu_router; do
  echo "== $t" >> $O/tests-gpu.log
  timeout 150 ./b/$t >> $O/tests-gpu.log 2>&1; echo "$t rc=$? $(date +%T)" >> $O/progress.txt
done
grep -E "FAILED|PASSED|tests ran" $O/tests-gpu.log > $O/tests-summary.txt
TUNE_LLM=1 TUNE_NO_VENDOR=1 TUNE_PAIRS=0 TUNE_LAYOUTS=cs8/rt6/wk2/g8 timeout 90 ./b/tune_plan 5 40 8,9,10,12,16 qkv_gate \
  > $O/llm-qkv_gate.md 2> $O/llm-qkv_gate.err
echo "tp rc=$? $(date +%T)" >> $O/progress.txt
bash exc.sh; mv $OUT/exc.tgz $O/ 2>/dev/null
echo "exc $(date +%T)" >> $O/progress.txt
for G in llm-like default; do
  [ $(left) -lt 130 ] && { echo "judge $G skipped" >> $O/progress.txt; continue; }
  timeout $(( $(left) - 5 )) ./b/solgemm-judge --generator $G --json $O/judge-$G.json --md $O/judge-$G.md --svg $O/judge-$G.svg \
    > $O/judge-$G.txt 2> $O/judge-$G.log
  echo "judge $G rc=$? $(date +%T)" >> $O/progress.txt
done
cd $OUT && tar czf s43c.tgz s43c && rm -rf s43c
