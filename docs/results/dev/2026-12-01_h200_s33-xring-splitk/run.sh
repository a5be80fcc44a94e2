#!/bin/bash
# step 165: split K with x through the ring as clusters (tune_plan, /xr layouts), two rounds
T=carry/s33/tune_plan; O=$1; mkdir -p $O
for r in 1 2; do
TUNE_LAYOUTS=cs1/rt1/wk8/g16,cs1/rt2/wk8/g16,cs2/rt2/wk4/g16/xr,cs2/rt2/wk2/g32/xr,cs2/rt4/wk2/g32/xr,cs2/rt4/wk4/g16/xr $T 5 40 16,32 pooler > $O/pooler-$r.md 2>&1
TUNE_LAYOUTS=cs1/rt2/wk4/g16,cs2/rt4/wk2/g16/xr,cs2/rt2/wk2/g16/xr,cs2/rt4/wk4/g8/xr $T 5 40 16,32 unpooler > $O/unpooler-$r.md 2>&1
TUNE_LAYOUTS=cs8/rt5/wk2/g8,cs8/rt9/wk2/g8,cs2/rt2/wk4/g16/xr,cs4/rt4/wk2/g16/xr,cs8/rt8/wk1/g16/xr,cs4/rt2/wk4/g8/xr $T 5 40 16,32 qkv_gate > $O/qkv-$r.md 2>&1
done
tar czf $O/all.tgz -C $O pooler-1.md pooler-2.md unpooler-1.md unpooler-2.md qkv-1.md qkv-2.md
