#!/usr/bin/env bash
# session 45 call 2: the x ring's exception gather buffer (perf-notes step 200): GPU skinny tests, then skinny_bench
# A/B (the plan's layout with the buffer, -noxg without) on llm-like and default weights
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/r; mkdir -p $O
timeout 150 ./b/test_gpu_skinny > $O/test_gpu_skinny.log 2>&1; echo "tests rc $?" >> $O/test_gpu_skinny.log
run() {  # tag shape layout m
  SKINNY_QUICK=1 SKINNY_ONLY=$2 SKINNY_CANDS=$3 timeout 50 ./b/skinny_bench 30 - $4 > $O/$1-$2-m$4.txt 2>&1
}
for W in llm default; do
  if [ $W = llm ]; then export SKINNY_LLM=1; else unset SKINNY_LLM; fi
  run $W pooler cs1/rt1/wk8/g16 8
  run $W pooler cs1/rt1/wk8/g16 16
  run $W unpooler cs1/rt2/wk4/g16 8
  run $W unpooler cs1/rt2/wk4/g16 16
done
cd $OUT && tar czf r.tgz r && rm -rf r
