#!/usr/bin/env bash
# Session 43, call 1: (1) the vendor tuner's serve check against the judge at the pooler's verify m (two processes,
# SOLGEMM_TUNE_LOG with the pairs' medians); (2) the exception warp on llm-like weights (exc.sh, prepared in s42).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/s43a; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for i in 1 2; do
  SOLGEMM_TUNE_LOG=1 timeout 150 ./b/solgemm-judge --layers pooler --loads none --m 104 129 136 160 176 192 \
    --inputs 1 --replays 100,200 --ci-target 0.03 --json $O/pooler-$i.json --md $O/pooler-$i.md --svg '' \
    > $O/pooler-$i.txt 2> $O/pooler-$i.log
done
bash exc.sh
mv $OUT/exc.tgz $O/ 2>/dev/null
cd $OUT && tar czf s43a.tgz s43a && rm -rf s43a
