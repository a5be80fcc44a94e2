#!/usr/bin/env bash
# Session 52, call 4 (binaries of 5861c2b + lt_pair, carry/s52d/bins.txz): does the vendor tuner's pick for the pooler
# at m = 256 follow the process (four judge processes on one machine, verify 32's pooler only, the tuner's log kept), and
# does judge-style timing on the same machine (lt_pair: 17/0-17/3 and 17/5 against 125/0, 125/2) rank the tiles as
# the picks' judge times do? (perf-notes step 217)
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
C=$(pwd)/carry/s52d
W=/tmp/s52c4; mkdir -p $W; tar xJf $C/bins.txz -C $W; cd $W
R=/tmp/res; mkdir -p $R; cp bins/COMMIT $R/
for i in 1 2 3 4; do
  SOLGEMM_TUNE_LOG=1 timeout 110 ./bins/solgemm-judge --layers pooler --loads 'verify 32' --json $R/j$i.json --md '' \
    --svg '' > $R/j$i.txt 2> $R/j$i.log
  grep -h "rows 4096 m 256" -A14 $R/j$i.log | grep "playoff\|kept\|screen" > $R/j$i-pick.txt
  echo "process $i: $(grep -c . $R/j$i-pick.txt) tuner lines, elapsed $SECONDS"
done
left=$((560 - SECONDS))
LT_PAIR=17/0,17/1,17/3,17/5,125/0,125/2 timeout $left ./bins/lt_pair 256 4096 8192 120 > $R/ltpair.txt 2>&1
echo "lt_pair rc $?" >> $R/ltpair.txt
gzip $R/j*.log
tar czf $OUT/res.tgz -C /tmp res
echo "elapsed $SECONDS"; for i in 1 2 3 4; do grep -h "kept" $R/j$i-pick.txt; grep -h "| verify 32 | pooler" $R/j$i.txt | head -1; done; tail -12 $R/ltpair.txt
