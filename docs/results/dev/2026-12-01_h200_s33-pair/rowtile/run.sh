#!/bin/bash
# step 166: the pooler's pair A/B in the judge (old / new alternated), all GPU tests, the full judge (new)
cd carry/s33 && tar xzf b.tgz && cd ../..
B=$PWD/carry/s33/b; O=$1; mkdir -p $O/f
for r in 1 2 3; do
  for v in old new; do
    J=$B/judge/solgemm-judge; [ $v = old ] && J=$B/judge-old
    $J --layers pooler --loads 'decode 32' 'decode 16' --json $O/f/ab-$v-$r.json > $O/f/ab-$v-$r.txt 2>&1
    echo "$v $r rc=$? $(grep -E '^decode 32 +pooler' $O/f/ab-$v-$r.txt | tr -s ' ' | cut -d' ' -f12-16)" >> $O/sum.txt
  done
done
for t in $B/tests/test_gpu_*; do
  echo "== $(basename $t)" >> $O/f/tests-gpu.log
  (cd $B/tests && ./$(basename $t) --gtest_brief=1) >> $O/f/tests-gpu.log 2>&1
  echo "$(basename $t) rc=$?" >> $O/sum.txt
done
SOLGEMM_TUNE_LOG=1 $B/judge/solgemm-judge --json $O/f/judge.json --md $O/f/judge.md --svg $O/f/judge.svg > $O/f/judge.txt 2> $O/f/judge.log
echo "judge rc=$?" >> $O/sum.txt
grep -E "^score" $O/f/judge.txt >> $O/sum.txt
tar czf $O/all.tgz -C $O f && rm -rf $O/f
