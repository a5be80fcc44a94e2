#!/usr/bin/env bash
# session 42: the pooler's vendor choices timed judge-style (lt_pair) where the judge and the tuner disagreed:
# m = 160 (tile 397/1 of the m = 192 bucket: the tuner 0.957 of the default, the judge 0.824x cuBLAS), m = 192 (1.62x)
# as the control, m = 104 (tile 16/1 of m = 128, step 184).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/ltpair; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $O/gpu.txt 2>&1
for m in 160 192; do LT_PAIR=397/1,397/5,18/1 timeout 40 ./b/lt_pair $m 4096 8192 100 > $O/pooler-m$m.txt 2>&1; done
LT_PAIR=16/1,17/1 timeout 40 ./b/lt_pair 104 4096 8192 100 > $O/pooler-m104.txt 2>&1
cd $OUT && tar czf ltpair.tgz ltpair && rm -rf ltpair
