#!/bin/bash
# step 166 control: the cluster kernels (qkv_gate, the slice, the router) old / new alternated in the judge
B=carry/s33/j; O=$1; mkdir -p $O/f
for r in 1 2; do
  for v in old new; do
    $B/$v --layers qkv_gate unpooler router --loads 'decode 1' 'verify 1' 'decode 16' --json $O/f/ab2-$v-$r.json > $O/f/ab2-$v-$r.txt 2>&1
    echo "$v $r rc=$?" >> $O/sum.txt
    grep -E "^(decode|verify) +[0-9]+ +(qkv_gate|unpooler|router)" $O/f/ab2-$v-$r.txt | tr -s ' ' | cut -d" " -f1-4,12-13,16 >> $O/sum.txt
  done
done
tar czf $O/all.tgz -C $O f && rm -rf $O/f
