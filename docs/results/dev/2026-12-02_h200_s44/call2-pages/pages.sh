#!/usr/bin/env bash
# Do the vendor choices' times follow the physical pages x and out land on? lt_pair with x and out at 8 offsets 2 MiB
# apart (each a different 2 MiB page of one allocation), for the judge's scored choices (ab512fa's tuning) and the pooler's
# m = 160 tile 397/1 (two modes in session 44's first call: fast only at a 2 MiB offset) as the control; 2 processes.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/pages; mkdir -p $O
OFFS=0,2097152,4194304,6291456,8388608,10485760,12582912,14680064
run() { # tag tile m n k
  LT_PAIR=$2 LT_OFFSETS=$OFFS timeout 90 ./b/lt_pair $3 $4 $5 40 > $O/$1-$6.txt 2>&1
}
for i in 1 2; do
  run pooler160 397/1 160 4096 8192 $i
  run pooler128 16/1 128 4096 8192 $i
  run pooler256 17/3 256 4096 8192 $i
  run qkv128 80/0 128 2304 8192 $i
  run qkv256 134/2 256 2304 8192 $i
  run o128 18/2 128 8192 1024 $i
done
cd $OUT && tar czf pages.tgz pages && rm -rf pages
