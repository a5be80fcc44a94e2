#!/usr/bin/env bash
# session 49 call 1: the synccheck probe (step 206) and tune_plan on other models' shapes (step 207)
set -u
cd "$(dirname "$0")"
tar xJf bins.txz
R=/tmp/s49c1; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
{
  echo "# sync_probe SASS (barrier instructions per kernel)"
  cuobjdump -sass bins/sync_probe | grep -E "Function :|BAR|WARPSYNC|BSYNC|BSSY" 
} > $R/sync_sass.txt 2>&1
for v in same split loop full aligned_all barrier_loop; do
  echo "== $v (bare)"; ./bins/sync_probe $v 8
  echo "== $v (synccheck)"; timeout 60 compute-sanitizer --tool synccheck ./bins/sync_probe $v 8 2>&1 | grep -v "^=========     " | head -20
done > $R/sync_probe.txt 2>&1
tar czf $OUT/c1.tgz -C /tmp s49c1
export TUNE_SHAPES="llama8b_qkv=6144x4096,llama8b_o=4096x4096,l70b_tp8_gateup=7168x8192,l70b_tp8_qkv=1280x8192,qwen7b_qkv=4608x3584,qwen7b_o=3584x3584,l70b_tp8_down=8192x3584,llama8b_down=4096x14336,llama8b_gateup=28672x4096"
timeout 440 ./bins/tune_plan 15 60 1,8,16,32 > $R/tune_shapes.md 2> $R/tune_shapes.err
echo "rc $?" >> $R/tune_shapes.err
tar czf $OUT/c1.tgz -C /tmp s49c1
