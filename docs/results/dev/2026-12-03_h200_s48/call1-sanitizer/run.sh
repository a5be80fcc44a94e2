#!/usr/bin/env bash
# Session 48, call 1: compute-sanitizer on the plan's skinny layouts (every layer, 1..32 tokens) and the router.
cd "$(dirname "$0")"
O=/tmp/s48c1; mkdir -p $O
tar xJf bins.txz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
compute-sanitizer --version > $O/sanitizer-version.txt 2>&1
pack() { tar czf $OUT/s48c1.tgz -C /tmp s48c1; }
export SOLGEMM_JUDGE_EXE=$(pwd)/bins/solgemm-judge
step() {  # name timeout tool filter-args -- cmd
  local name=$1 to=$2; shift 2
  local t0=$(date +%s.%N)
  timeout $to "$@" > $O/$name.log 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(echo "$(date +%s.%N) - $t0" | bc)" | tee -a $O/summary.txt
  tail -3 $O/$name.log | tee -a $O/summary.txt
  pack
}
step memcheck-skinny-plan 190 compute-sanitizer --tool memcheck --kernel-name kns=skinny_kernel ./bins/test_gpu_skinny --gtest_filter=Skinny.PlanLayoutsBatchInvariant
step memcheck-router 150 compute-sanitizer --tool memcheck --kernel-name-exclude kns=ref_fp64 ./bins/test_gpu_router --gtest_filter=Router.HiLoEveryM:Router.RowSliceAndOddShape
step racecheck-skinny-plan 110 compute-sanitizer --tool racecheck --kernel-name kns=skinny_kernel ./bins/test_gpu_skinny --gtest_filter=Skinny.PlanLayoutsBatchInvariant
step synccheck-skinny-plan 60 compute-sanitizer --tool synccheck --kernel-name kns=skinny_kernel ./bins/test_gpu_skinny --gtest_filter=Skinny.PlanLayoutsBatchInvariant
