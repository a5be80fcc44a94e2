#!/usr/bin/env bash
# Session 50, call 1: step 208's prepared change (the 4-D x box at one token tile) checked; the x boxes at n_tiles 2
# (9..15 tokens) measured (step 210); clusters of 16 for small-N untuned shapes screened (step 211).
# Binaries: carry/c1/bins.txz (this tree with prepared-xbox-ntiles1.patch applied).
set -u
B=${1:-carry/c1/bins.txz}
W=/tmp/s50c1; mkdir -p $W; tar xJf $B -C $W; cd $W
O=$OUT/c1; mkdir -p $O
cp bins/COMMIT $O/
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
timeout 150 ./bins/test_gpu_skinny --gtest_filter='Layers/SkinnyLayer.EveryMAgainstFp64/unpooler*:Layers/SkinnyLayer.EveryMAgainstFp64/untuned*:Skinny.XRing*' > $O/test_gpu_skinny.log 2>&1; echo "rc=$?" >> $O/test_gpu_skinny.log
export TUNE_NO_VENDOR=1
# step 208: the rule's box (now one 4-D box per stage at one token tile) against the m-row boxes forced (/be)
TUNE_SHAPES="llama8b_qkv=6144x4096" TUNE_LAYOUTS="cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/be" timeout 80 ./bins/tune_plan 15 60 2,4,6 > $O/s208-qkv.md 2>&1
# step 210: n_tiles 2 (9..15 tokens): the rule (m-row boxes per k warp) against one 4-D box (/b4)
TUNE_SHAPES="llama8b_qkv=6144x4096,l70b_tp8_gateup=7168x8192" TUNE_LAYOUTS="cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/b4,cs1/rt2/wk4/g32,cs1/rt2/wk4/g32/b4" timeout 120 ./bins/tune_plan 15 60 9,12,15 > $O/s210-untuned.md 2>&1
TUNE_LAYOUTS="cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/b4" timeout 80 ./bins/tune_plan 15 60 9,12,15 unpooler > $O/s210-unpooler.md 2>&1
unset TUNE_NO_VENDOR
# step 211: small-N, large-K untuned shapes: the rule against clusters of 16 (and the tuned cuBLASLt)
L16="cs16/rt2/wk1/g8,cs16/rt3/wk1/g8,cs16/rt4/wk1/g8,cs16/rt5/wk1/g8,cs16/rt6/wk1/g8,cs16/rt8/wk1/g8"
TUNE_SHAPES="n1280=1280x8192,n1024=1024x8192,n1536=1536x8192,n2048=2048x8192" TUNE_LAYOUTS="$L16,cs8/rt3/wk1/g16,cs8/rt2/wk1/g16,cs8/rt4/wk1/g16,cs8/rt5/wk1/g16" timeout 200 ./bins/tune_plan 9 40 1,4,8,16 > $O/s211-cs16.md 2>&1
cd $O && ls -la
