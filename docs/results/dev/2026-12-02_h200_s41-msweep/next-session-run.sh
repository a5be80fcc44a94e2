#!/usr/bin/env bash
# Prepared in session 41 for the next device call (not run: no device time left). From a folder with bins.txz
# (scripts/pack_gpu_bins.sh build bins.txz) beside this script:
# 1. the vendor bucket check at multiples of the eighth (438507c): the pooler and qkv_gate at 65..256 (pooler m = 104
#    ran 0.81x at 867bef8);
# 2. the judge's same-call resolution: cuBLAS timed against itself (--impl cublas) where the vendor family's default
#    call ran 0.95-0.99x against the baseline (perf-notes step 184, open item 2).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/next; mkdir -p $O
MS="65 72 80 88 96 97 104 105 112 120 128 129 144 160 176 192 193 208 224 240 255 256"
for L in pooler qkv_gate; do
  SOLGEMM_TUNE_LOG=1 timeout 100 ./bins/solgemm-judge --layers $L --loads none --m $MS --inputs 1 --replays 100,300 \
    --ci-target 0.02 --json $O/sweep-$L.json --md '' --svg '' > /dev/null 2> $O/tunelog-$L.txt
done
timeout 100 ./bins/solgemm-judge --impl cublas --baseline cublas --layers unpooler o --loads none \
  --m 6 43 56 61 96 129 192 240 --inputs 1 --replays 100,400 --ci-target 0.02 --json $O/same-call.json --md '' --svg '' \
  > $O/same-call.txt 2>&1
python3 ../../../../scripts/msweep_table.py $O/sweep-pooler.json $O/sweep-qkv_gate.json > $O/table.md 2>/dev/null || true
