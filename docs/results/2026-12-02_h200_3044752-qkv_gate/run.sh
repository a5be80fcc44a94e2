#!/usr/bin/env bash
# Session 43, call 6 (at 3044752): the float4 rounds of the exception warp (x staged): skinny GPU tests, tune_plan on
# llm-like qkv_gate (plan layouts, guard bypassed), the judge's qkv_gate rows on default and llm-like weights.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/s43f; mkdir -p $O
cat b/COMMIT > $O/commit.txt
for t in test_gpu_skinny_decode test_gpu_skinny; do
  echo "== $t" >> $O/tests-gpu.log
  timeout 120 ./b/$t >> $O/tests-gpu.log 2>&1; echo "$t rc=$? $(date +%T)" >> $O/progress.txt
done
grep -E "FAILED|PASSED|tests ran" $O/tests-gpu.log > $O/tests-summary.txt
TUNE_LLM=1 TUNE_NO_VENDOR=1 TUNE_PAIRS=0 TUNE_LAYOUTS=cs8/rt6/wk2/g8 timeout 60 ./b/tune_plan 5 40 8,16,32 qkv_gate \
  > $O/llm-qkv_gate.md 2> $O/llm-qkv_gate.err
echo "tp rc=$? $(date +%T)" >> $O/progress.txt
for G in default llm-like; do
  timeout 70 ./b/solgemm-judge --generator $G --layers qkv_gate --json $O/judge-qkv-$G.json --md $O/judge-qkv-$G.md \
    --svg '' > $O/judge-qkv-$G.txt 2> /dev/null
  echo "judge $G rc=$? $(date +%T)" >> $O/progress.txt
done
cd $OUT && tar czf s43f.tgz s43f && rm -rf s43f
