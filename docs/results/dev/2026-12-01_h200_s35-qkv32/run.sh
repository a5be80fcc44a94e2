#!/bin/bash
# step 171: qkv_gate at 17..32 tokens on the skinny family (cs8 / rt10 / wk1 / g16) against the vendor family:
# the judge's qkv_gate rows at decode 32, the previous (aa4881c) and the new judge alternated three times; the new
# build's skinny GPU tests (PlanLayoutsBatchInvariant now covers qkv_gate 17..32). Usage: bash run.sh OUTDIR
set -u
O=$1; mkdir -p $O/f
(cd carry/s35 && tar xJf b.txz); (cd carry/s35n && tar xJf n.txz)
OLD=$PWD/carry/s35/b; NEW=$PWD/carry/s35n/n
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
(cd $NEW && timeout 200 ./test_gpu_skinny --gtest_brief=1 > $O/f/tests-skinny.log 2>&1; echo "skinny tests rc=$?" >> $O/sum.txt)
for r in 1 2 3; do
  for v in old new; do
    J=$NEW/solgemm-judge; [ $v = old ] && J=$OLD/solgemm-judge
    timeout 100 $J --layers qkv_gate --loads 'decode 32' 'decode 16' --json $O/f/ab-$v-$r.json > $O/f/ab-$v-$r.txt 2>&1
    echo "$v $r rc=$? $(grep -E '^decode 32 +qkv_gate' $O/f/ab-$v-$r.txt | tr -s ' ' | cut -d' ' -f12-16)" >> $O/sum.txt
  done
done
tar czf $O/all.tgz -C $O f && rm -rf $O/f
cat $O/sum.txt
