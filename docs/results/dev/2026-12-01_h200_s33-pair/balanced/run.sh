#!/bin/bash
# step 165: GPU tests, the pooler's layouts, and the judge's pooler rows (decode 32, verify 1, decode 1) old / new alternated
B=carry/s33/b; O=$1; mkdir -p $O/f
($B/test_gpu_skinny --gtest_brief=1 > $O/f/tests-skinny.log 2>&1; echo "skinny rc=$?" >> $O/sum.txt)
($B/test_gpu_router --gtest_brief=1 > $O/f/tests-router.log 2>&1; echo "router rc=$?" >> $O/sum.txt)
TUNE_LAYOUTS=cs1/rt1/wk8/g16,cs2/rt2/wk4/g16/sq,cs2/rt2/wk4/g16/xr,cs1/rt2/wk8/g16 $B/tune_plan 5 40 1,8,16,17,24,32 pooler > $O/f/tune-pooler.md 2>&1
for r in 1 2 3; do
  for v in old new; do
    J=$B/solgemm-judge; [ $v = old ] && J=$B/judge-old
    $J --layers pooler --loads 'decode 32' 'decode 16' --json $O/f/ab-$v-$r.json > $O/f/ab-$v-$r.txt 2>&1
    echo "$v $r rc=$? $(grep -E '^decode 32 +pooler' $O/f/ab-$v-$r.txt | tr -s ' ' | cut -d' ' -f12-14)" >> $O/sum.txt
  done
done
tar czf $O/all.tgz -C $O f && rm -rf $O/f
