#!/bin/bash
# step 164: L2 prefetch distance sweep (tune_plan, plan layouts with /pfN), two rounds
T=carry/s33/tune_plan; O=$1; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for r in 1 2; do
TUNE_LAYOUTS=cs1/rt1/wk8/g16,cs1/rt1/wk8/g16/pf2,cs1/rt1/wk8/g16/pf4,cs1/rt1/wk8/g16/pf8,cs1/rt2/wk8/g16,cs1/rt2/wk8/g16/pf2,cs1/rt2/wk8/g16/pf4,cs1/rt2/wk8/g16/pf8 $T 5 40 1,8,16,32 pooler > $O/pooler-$r.md 2>&1
TUNE_LAYOUTS=cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/pf2,cs1/rt2/wk4/g16/pf4,cs1/rt2/wk4/g16/pf8 $T 5 40 8,16,32 unpooler > $O/unpooler-$r.md 2>&1
TUNE_LAYOUTS=cs8/rt5/wk2/g8,cs8/rt5/wk2/g8/pf2,cs8/rt5/wk2/g8/pf4,cs8/rt6/wk2/g8,cs8/rt6/wk2/g8/pf2 $T 5 40 1,8,16 qkv_gate > $O/qkv-$r.md 2>&1
TUNE_LAYOUTS=cs1/rt2/wk2/g8,cs1/rt2/wk2/g8/pf2,cs1/rt2/wk2/g8/pf4 $T 5 40 1,8 o > $O/o-$r.md 2>&1
done
