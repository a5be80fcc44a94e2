#!/usr/bin/env bash
# Session 52, call 1 (binaries built here with step 214, carry/s52a/bins.txz): the judge (default weights), the
# untuned tuner's GPU tests (Skinny.Untuned*: all N rows and, new, the leading N/2 of 2048 x 8192), and step 214's
# effect: Weights::prepare + run on other-model shapes and their leading rows (tune_plan TUNE_PREPARED).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
B=$(pwd)/carry/s52a/bins.txz
W=/tmp/s52c1; mkdir -p $W; tar xJf $B -C $W; cd $W
R=/tmp/judge; mkdir -p $R
cp bins/COMMIT $R/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv > $R/build.log 2>&1
timeout 170 ./bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg > $R/judge.txt 2> $R/judge.log
echo "judge rc $?" >> $R/judge.txt
tar czf $OUT/judge.tgz -C /tmp judge
P=/tmp/prep; mkdir -p $P
timeout 120 ./bins/test_gpu_skinny --gtest_filter='Skinny.Untuned*' > $P/test_gpu_skinny.log 2>&1; echo "rc=$?" >> $P/test_gpu_skinny.log
S="l8qkv=6144x4096,l8gateup=28672x4096,l70b_gateup=7168x8192,n2048=2048x8192,pooler_rows=4096x8192,unpooler_rows=8192x4096,l8down=4096x14336"
left=$((560 - SECONDS))
SOLGEMM_TUNE_LOG=1 TUNE_PREPARED=1 TUNE_SHAPES="$S" timeout $left ./bins/tune_plan 15 60 1,2,4,8,16 > $P/prepared.md 2> $P/prepared-tunelog.txt
echo "prepared rc $?" >> $P/prepared.md
grep "untuned" $P/prepared-tunelog.txt | grep -v "solgemm tune  \|solgemm tune m\|solgemm tune r" > $P/untuned-log.txt
gzip $P/prepared-tunelog.txt
tar czf $OUT/prep.tgz -C /tmp prep
echo "elapsed $SECONDS"; grep -h "^score" $R/judge.txt; tail -3 $P/test_gpu_skinny.log
