#!/usr/bin/env bash
# Session 49, call 3: the layout rule for untuned BF16 shapes (step 207): GPU tests of three such shapes at every m of
# 1..64 against FP64, then tune_plan on other models' shapes (the rule's layout in the "plan layout" column).
cd "$(dirname "$0")"
[ -d bins ] || tar xJf b3.txz
O=/tmp/s49c3; mkdir -p $O
pack() { tar czf $OUT/c3.tgz -C /tmp s49c3; }
timeout 150 ./bins/test_gpu_skinny --gtest_filter='Layers/SkinnyLayer.EveryMAgainstFp64/untuned*' > $O/test-untuned.log 2>&1
echo "test untuned rc=$?" >> $O/summary.txt; tail -8 $O/test-untuned.log >> $O/summary.txt
pack
export TUNE_SHAPES="llama8b_qkv=6144x4096,l70b_tp8_qkv=1280x8192,qwen7b_qkv=4608x3584,llama8b_o=4096x4096,l70b_tp8_down=8192x3584,qwen7b_o=3584x3584,phi3_o=3072x3072,l70b_tp8_gateup=7168x8192,llama8b_down=4096x14336,mixtral_w1=14336x4096,llama8b_gateup=28672x4096"
timeout 400 ./bins/tune_plan 15 60 1,4,8,16,32 > $O/tune_shapes.md 2> $O/tune_shapes.err
echo "tune_plan rc=$?" >> $O/summary.txt
pack
cat $O/summary.txt
