#!/usr/bin/env bash
# Session 43, call 2: the exception warp with batched entries and x from shared memory (step 189): GPU tests of the
# skinny family, skinny_bench on llm-like and default weights (exc.sh), tune_plan on llm-like weights with the plan's
# layouts (the guard bypassed), then the judge (default weights) as time allows.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((560 - ($(date +%s) - T0))); }
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/s43b; mkdir -p $O
for t in test_gpu_skinny_decode test_gpu_skinny test_gpu_router; do
  echo "== $t" >> $O/tests-gpu.log
  timeout 150 ./b/$t >> $O/tests-gpu.log 2>&1; echo "$t rc=$? $(date +%T)" >> $O/progress.txt
done
grep -E "FAILED|PASSED|tests ran" $O/tests-gpu.log > $O/tests-summary.txt
bash exc.sh; mv $OUT/exc.tgz $O/ 2>/dev/null
echo "exc done $(date +%T)" >> $O/progress.txt
tp() {  # layer ms layout
  [ $(left) -lt 60 ] && { echo "$1 skipped" >> $O/progress.txt; return; }
  TUNE_LLM=1 TUNE_NO_VENDOR=1 TUNE_PAIRS=0 TUNE_LAYOUTS=$3 timeout 60 ./b/tune_plan 5 40 $2 $1 \
    > $O/llm-$1.md 2> $O/llm-$1.err
  echo "tp $1 rc=$? $(date +%T)" >> $O/progress.txt
}
tp qkv_gate 8,16,32 cs8/rt6/wk2/g8
tp unpooler 16,32 cs1/rt2/wk4/g16/xr
tp pooler 16 cs1/rt1/wk8/g16/xr
if [ $(left) -gt 200 ]; then
  timeout $(( $(left) - 10 )) ./b/solgemm-judge --json $O/judge.json --md $O/judge.md --svg '' > $O/judge.txt 2> $O/judge.log
  echo "judge rc=$? $(date +%T)" >> $O/progress.txt
fi
cd $OUT && tar czf s43b.tgz s43b && rm -rf s43b
