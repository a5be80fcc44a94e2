#!/usr/bin/env bash
# Prepared in session 42 for a later device call (not run): where the skinny exception path's time goes on the judge's
# llm-like weights, before any further change to it (perf-notes step 187). skinny_bench runs each shape's first layout
# (SKINNY_CANDS: the plan's) with and without its exception tables ("-noexc": what the exception path costs) and its
# per-CTA timelines, on the llm-like weights (SKINNY_LLM=1), then on the default weights as the control.
# From a folder with bins.txz (scripts/pack_gpu_bins.sh build bins.txz skinny_bench) beside this script.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
[ -d b ] || { mkdir -p b && tar xJf bins.txz -C b --strip-components=1; }
O=$OUT/exc; mkdir -p $O
run() {  # tag shape layout m
  SKINNY_QUICK=1 SKINNY_ONLY=$2 SKINNY_CANDS=$3 timeout 60 ./b/skinny_bench 30 - $4 > $O/$1-$2-m$4.txt 2>&1
}
for W in llm default; do
  if [ $W = llm ]; then export SKINNY_LLM=1; else unset SKINNY_LLM; fi
  run $W qkv_gate cs8/rt6/wk2/g8 8
  run $W unpooler cs1/rt2/wk4/g16 16
  run $W pooler cs1/rt1/wk8/g16 16
done
cd $OUT && tar czf exc.tgz exc && rm -rf exc
