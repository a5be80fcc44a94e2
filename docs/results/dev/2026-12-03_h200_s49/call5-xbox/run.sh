#!/usr/bin/env bash
# Session 49, call 5 (ran): the no-split 4-k-warp layouts at 1..8 tokens, the x ring's boxes by bench knob (perf-notes
# step 208): the launcher's rule (one 2-D box of m rows per k warp), /b4 (one 4-D box per stage, zero-filled to 8 rows),
# /be (the m-row boxes, forced), /b2 (2-D boxes of 8 rows per k warp), /xs (x staged). Binary: tune_plan at af8e2ce.
cd "$(dirname "$0")"
[ -d bins ] || tar xJf tp.txz
O=/tmp/s49c5; mkdir -p $O
export TUNE_NO_VENDOR=1
L() { echo "$1,$1/b4,$1/be,$1/b2,$1/xs"; }
TUNE_SHAPES="llama8b_qkv=6144x4096" TUNE_LAYOUTS="$(L cs1/rt2/wk4/g16)" timeout 100 ./bins/tune_plan 15 60 1,2,3,4,6,8 > $O/qkv.md 2>&1
TUNE_SHAPES="l70b_tp8_gateup=7168x8192" TUNE_LAYOUTS="$(L cs1/rt2/wk4/g32)" timeout 100 ./bins/tune_plan 15 60 1,2,3,4,6,8 > $O/gateup.md 2>&1
# Not run (no device time left): the prepared change (prepared-xbox-ntiles1.patch) checked by
#   ./bins/test_gpu_skinny --gtest_filter='Layers/SkinnyLayer.EveryMAgainstFp64/unpooler:Skinny.XRing*'
#   TUNE_NO_VENDOR=1 TUNE_SHAPES="llama8b_qkv=6144x4096" TUNE_LAYOUTS="cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/be" ./bins/tune_plan 15 60 2,4,6
