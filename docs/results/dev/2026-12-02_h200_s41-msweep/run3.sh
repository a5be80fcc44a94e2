#!/usr/bin/env bash
# session 41, call 3: the vendor tuner's bucket check (perf-notes step 184): m = 1..64 on the BF16 layers again; GPU check
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
rm -rf bins && mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
O=$OUT/s41-3; mkdir -p $O
MS=$(seq -s ' ' 1 64)
rm -f tune3.txt
for L in unpooler o qkv_gate pooler; do
  SOLGEMM_TUNE_LOG=1 timeout 150 ./bins/solgemm-judge --layers $L --loads none --m $MS --inputs 1 --replays 100,400 \
    --ci-target 0.02 --tune-file tune3.txt --json $O/sweep-$L.json --md '' --svg '' > /tmp/sweep-$L.txt 2> /tmp/tunelog-$L.txt
  echo "== $L rc=$?" >> $O/sweep.log
  grep -E 'score|correct|fixed cost' /tmp/sweep-$L.txt | head -3 >> $O/sweep.log
done
cat /tmp/tunelog-*.txt | grep -E 'at m|kept|default .* us' > $O/tunelog.txt
bash ../../scripts/gpu_check.sh /tmp/check --bins bins.txz > /tmp/gpu_check.out 2>&1; echo "rc=$?" >> /tmp/gpu_check.out
cp /tmp/gpu_check.out /tmp/check/
tar czf $O/check.tgz -C /tmp check
tail -3 /tmp/gpu_check.out; cat $O/sweep.log
