#!/usr/bin/env bash
# Prepared in session 43 for a later device call (not run): do the vendor choices' two modes below their bucket tops
# (perf-notes steps 188, 190: the pooler's m = 128 tile 16/1 at m = 104 ran 1.11x cuBLAS in three processes and 0.885x
# in one) depend on where x and out lie? lt_pair with roughly the tuner's construction (LT_FROM_M: the configuration built on
# the heuristic at the bucket's top; the tuner's sweep bases may differ) times the tile and the default at five
# offsets of x and out, in three processes.
# From a folder with bins.txz (scripts/pack_gpu_bins.sh build bins.txz lt_pair) beside this script. ~2 minutes.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/modes; mkdir -p $O
for i in 1 2 3; do
  LT_PAIR=16/1 LT_FROM_M=128 LT_OFFSETS=0,256,4096,65536,2097152 timeout 60 ./b/lt_pair 104 4096 8192 60 > $O/p104-$i.txt 2>&1
  LT_PAIR=397/1 LT_FROM_M=192 LT_OFFSETS=0,256,4096,65536,2097152 timeout 60 ./b/lt_pair 160 4096 8192 60 > $O/p160-$i.txt 2>&1
done
cd $OUT && tar czf modes.tgz modes && rm -rf modes
