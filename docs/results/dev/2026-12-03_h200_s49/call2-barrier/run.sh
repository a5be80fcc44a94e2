#!/usr/bin/env bash
# Session 49, call 2: the skinny family's warp-role barriers as barrier.sync / barrier.arrive (step 206): synccheck,
# the skinny tests, and the judge's skinny rows old (bins) / new alternated.
cd "$(dirname "$0")"
mkdir -p old new
[ -d old/bins ] || tar xJf old.txz -C old
[ -d new/bins ] || tar xJf new.txz -C new
O=/tmp/s49c2; mkdir -p $O
pack() { tar czf $OUT/c2.tgz -C /tmp s49c2; }
F=Skinny.PlanLayoutsBatchInvariant
for v in old new; do
  timeout 110 compute-sanitizer --tool synccheck --kernel-name kns=skinny_kernel ./$v/bins/test_gpu_skinny --gtest_filter=$F > $O/synccheck-$v.log 2>&1
  echo "synccheck $v rc=$?" >> $O/summary.txt; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/synccheck-$v.log | head -3 >> $O/summary.txt
  grep -c "Barrier error" $O/synccheck-$v.log >> $O/summary.txt
  pack
done
timeout 150 ./new/bins/test_gpu_skinny > $O/test-skinny-new.log 2>&1; echo "test_gpu_skinny new rc=$?" >> $O/summary.txt
tail -3 $O/test-skinny-new.log >> $O/summary.txt
timeout 60 ./new/bins/test_gpu_skinny_decode > $O/test-skinny-decode-new.log 2>&1; echo "test_gpu_skinny_decode new rc=$?" >> $O/summary.txt
tail -2 $O/test-skinny-decode-new.log >> $O/summary.txt
pack
for r in 1 2; do
  for v in old new; do
    timeout 120 ./$v/bins/solgemm-judge --layers qkv_gate pooler unpooler o --loads 'decode 1' 'decode 16' 'decode 32' 'verify 1' \
      --tune-file /tmp/tune.txt --json $O/ab-$v-$r.json --md '' --svg '' > $O/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$?" >> $O/summary.txt
    pack
  done
done
cat $O/summary.txt
