#!/usr/bin/env bash
# Session 51, call 1 (binaries of da474b4, carry/s51a/bins.txz): the judge at HEAD (default and llm-like weights),
# the untuned tuner's GPU tests, and step 212's effect: Weights::prepare + run on the fifteen other-model shapes
# (tune_plan TUNE_PREPARED, as session 50's call 2).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=$(pwd)/carry/s51a/bins.txz
W=/tmp/s51c1; mkdir -p $W; tar xJf $B -C $W; cd $W
R=/tmp/judge; mkdir -p $R
cp bins/COMMIT $R/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > $R/build.log 2>&1
timeout 170 ./bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
timeout 150 ./bins/solgemm-judge --generator llm-like --json $R/judge-llm.json --md $R/judge-llm.md --svg '' \
  > $R/judge-llm.txt 2>&1; echo "llm rc $?" >> $R/judge-llm.txt
tar czf $OUT/judge.tgz -C /tmp judge
P=/tmp/prep; mkdir -p $P
timeout 100 ./bins/test_gpu_skinny --gtest_filter='Skinny.Untuned*' > $P/test_gpu_skinny.log 2>&1; echo "rc=$?" >> $P/test_gpu_skinny.log
S="l8qkv=6144x4096,l70b_qkv=1280x8192,qwen7b_qkv=4608x3584,l8o=4096x4096,l70b_down=8192x3584,qwen7b_o=3584x3584,phi3_o=3072x3072,l70b_gateup=7168x8192,l8down=4096x14336,mixtral_w1=14336x4096,l8gateup=28672x4096,n1024=1024x8192,n1536=1536x8192,n2048=2048x8192,n2560=2560x8192"
left=$((575 - SECONDS))
SOLGEMM_TUNE_LOG=1 TUNE_PREPARED=1 TUNE_SHAPES="$S" timeout $left ./bins/tune_plan 15 60 1,2,4,8,12,16 > $P/prepared.md 2> $P/prepared-tunelog.txt
echo "prepared rc $?" >> $P/prepared.md
grep -v "solgemm tune  \|solgemm tune m\|solgemm tune r" $P/prepared-tunelog.txt | grep "untuned" > $P/untuned-log.txt
gzip $P/prepared-tunelog.txt
tar czf $OUT/prep.tgz -C /tmp prep
echo "elapsed $SECONDS"; grep -h "^score" $R/judge.txt $R/judge-llm.txt
