#!/usr/bin/env bash
# Does the data move a vendor configuration's time (perf-notes step 195: the pooler's m = 128 tile 16/1 ran 20.5 us at
# m = 104 in lt_pair and in the tuner, 27.5 in the judge of the same build)? lt_pair with its own data, the judge's x,
# the judge's default weights, both; 2 processes each; then the judge at m = 104 with the tuner's log.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/data; mkdir -p $O
for i in 1 2; do
  for d in own x w xw; do
    case $d in own) E="";; x) E="LT_JUDGE_X=1";; w) E="LT_JUDGE_W=2";; xw) E="LT_JUDGE_X=1 LT_JUDGE_W=2";; esac
    env $E LT_PAIR=16/1 LT_FROM_M=128 LT_OFFSETS=0,2097152 timeout 60 ./lt_pair 104 4096 8192 40 > $O/p104-$d-$i.txt 2>&1
    env $E LT_PAIR=16/1 LT_OFFSETS=0,2097152 timeout 60 ./lt_pair 128 4096 8192 40 > $O/p128-$d-$i.txt 2>&1
    env $E LT_PAIR=397/1 LT_FROM_M=192 LT_OFFSETS=0,2097152 timeout 60 ./lt_pair 160 4096 8192 40 > $O/p160-$d-$i.txt 2>&1
  done
done
SOLGEMM_TUNE_LOG=1 timeout 150 ./b/solgemm-judge --layers pooler --loads none --m 104,112,120,128 --inputs 1 \
    --replays 100,200 --ci-target 0.03 --json $O/judge.json --md '' --svg '' > $O/judge.txt 2> $O/tune.log
cd $OUT && tar czf data.tgz data && rm -rf data
