#!/usr/bin/env bash
# session 41, call 1: negative control of the ring test; GPU check of f041b1f; simt-form probes
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p neg && tar xJf neg.txz -C neg --strip-components=1
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-1; mkdir -p $O
nvidia-smi > $O/nvidia-smi.txt 2>&1
echo "== negative control build: the ring test (must FAIL)" > $O/neg-test.log
timeout 200 ./neg/test_gpu_skinny --gtest_filter='*RingDeterministic*' >> $O/neg-test.log 2>&1; echo "rc=$?" >> $O/neg-test.log
echo "== normal build: the ring test (must pass)" > $O/pos-test.log
timeout 200 ./bins/test_gpu_skinny --gtest_filter='*RingDeterministic*' >> $O/pos-test.log 2>&1; echo "rc=$?" >> $O/pos-test.log
timeout 100 ./neg/race_probe default 4096 8192 4096 2 9,16,32 1000 > $O/neg-race.log 2>&1; echo "rc=$?" >> $O/neg-race.log
# simt mma form at the router's bytes (slice: 1024 x 4096 BF16 = 8.4 MB) vs the router's plan
TUNE_SIMT_ONLY=1 TUNE_ROWS=1024 timeout 120 ./bins/tune_plan 15 60 1,8,12,16 unpooler > $O/tune-slice-simt.md 2>&1
TUNE_SIMT_ONLY=1 timeout 120 ./bins/tune_plan 15 60 1,8,12,16,32 router > $O/tune-router-simt.md 2>&1
bash ../../scripts/gpu_check.sh $O/check --bins bins.txz > $O/gpu_check.out 2>&1; echo "rc=$?" >> $O/gpu_check.out
tail -5 $O/neg-test.log $O/pos-test.log $O/neg-race.log $O/gpu_check.out
