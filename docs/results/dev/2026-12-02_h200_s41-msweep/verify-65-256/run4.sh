#!/usr/bin/env bash
# session 41, call 4: m = 65..256 on the BF16 layers, the vendor tuner before (f041b1f) and after (fef4e29) its bucket check
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
[ -f old-judge ] || xz -dk old-judge.xz
rm -rf bins && mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-4; mkdir -p $O
MS="65 72 80 88 96 97 104 112 120 128 129 144 160 176 192 193 208 224 240 255 256"
for L in pooler qkv_gate unpooler; do
  for V in old new; do
    J=./bins/solgemm-judge; [ $V = old ] && J=./old-judge
    SOLGEMM_TUNE_LOG=1 timeout 100 $J --layers $L --loads none --m $MS --inputs 1 --replays 100,300 --ci-target 0.02 \
      --json $O/$V-$L.json --md '' --svg '' > /tmp/$V-$L.txt 2> /tmp/tl-$V-$L.txt
    echo "== $V $L rc=$?" >> $O/run4.log
    grep -E 'prepare ' /tmp/tl-$V-$L.txt | cut -c1-1200 >> $O/run4.log
  done
done
tail -c 3000 $O/run4.log
