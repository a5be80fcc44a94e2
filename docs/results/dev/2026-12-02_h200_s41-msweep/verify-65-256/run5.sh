#!/usr/bin/env bash
# session 41, call 5: the bucket check at every eighth (867bef8): the vendor GPU tests; pooler / qkv_gate / unpooler at 65..256
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
rm -rf bins && mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-5; mkdir -p $O
timeout 60 ./bins/test_gpu_vendor > $O/test_gpu_vendor.log 2>&1; echo "rc=$?" >> $O/test_gpu_vendor.log
MS="65 72 80 88 96 97 104 112 120 128 129 144 160 176 192 193 208 224 240 255 256"
for L in pooler qkv_gate unpooler; do
  SOLGEMM_TUNE_LOG=1 timeout 70 ./bins/solgemm-judge --layers $L --loads none --m $MS --inputs 1 --replays 100,200 --ci-target 0.025 \
    --json $O/new8-$L.json --md '' --svg '' > /tmp/n-$L.txt 2> /tmp/tl-$L.txt
  echo "== $L rc=$?" >> $O/run5.log
  grep -E 'prepare ' /tmp/tl-$L.txt | cut -c1-1500 >> $O/run5.log
done
tail -3 $O/test_gpu_vendor.log; tail -c 1500 $O/run5.log
