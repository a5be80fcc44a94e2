#!/usr/bin/env bash
# Session 50, call 2 (binaries of 2e9e7bf, carry/c2/bins.txz): step 211's prepare-time tuning of untuned shapes checked
# (its GPU tests, and what Weights::prepare + run do on 15 other-model shapes against cuBLAS and the tuned cuBLASLt:
# tune_plan TUNE_PREPARED, the tuner's log on stderr); step 208 on the full unpooler at one token tile; step 210's
# n_tiles-2 boxes on two more 256- and 224-CTA shapes.
set -u
B=${1:-carry/c2/bins.txz}
W=/tmp/s50c2; mkdir -p $W; tar xJf $B -C $W; cd $W
O=$OUT/c2; mkdir -p $O
cp bins/COMMIT $O/
timeout 200 ./bins/test_gpu_skinny --gtest_filter='Skinny.Untuned*:Layers/SkinnyLayer.EveryMAgainstFp64/untuned*' > $O/test_gpu_skinny.log 2>&1; echo "rc=$?" >> $O/test_gpu_skinny.log
S="l8qkv=6144x4096,l70b_qkv=1280x8192,qwen7b_qkv=4608x3584,l8o=4096x4096,l70b_down=8192x3584,qwen7b_o=3584x3584,phi3_o=3072x3072,l70b_gateup=7168x8192,l8down=4096x14336,mixtral_w1=14336x4096,l8gateup=28672x4096,n1024=1024x8192,n1536=1536x8192,n2048=2048x8192,n2560=2560x8192"
SOLGEMM_TUNE_LOG=1 TUNE_PREPARED=1 TUNE_SHAPES="$S" timeout 240 ./bins/tune_plan 15 60 1,2,4,8,12,16 > $O/prepared.md 2> $O/prepared-tunelog.txt
grep -v "solgemm tune  \|solgemm tune m\|solgemm tune r" $O/prepared-tunelog.txt | grep "untuned" > $O/untuned-log.txt
export TUNE_NO_VENDOR=1
TUNE_LAYOUTS="cs1/rt2/wk4/g16,cs1/rt2/wk4/g16/be" timeout 60 ./bins/tune_plan 15 60 2,4,6 unpooler > $O/s208-unpooler.md 2>&1
TUNE_SHAPES="l70b_down=8192x3584,mixtral_w1=14336x4096" TUNE_LAYOUTS="cs1/rt2/wk4/g14,cs1/rt2/wk4/g14/b4,cs1/rt4/wk2/g32,cs1/rt4/wk2/g32/b4" timeout 80 ./bins/tune_plan 15 60 9,12,15 > $O/s210-more.md 2>&1
cd $O && rm -f prepared-tunelog.txt.gz && gzip -k prepared-tunelog.txt && rm prepared-tunelog.txt; ls -la
