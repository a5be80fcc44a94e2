#!/usr/bin/env bash
# Session 48, call 3: synccheck on the exception warp's named barrier, before (bins) and after (fix: __syncwarp before
# bar.sync / bar.arrive); the SASS around the barriers of the flagged instantiation.
cd "$(dirname "$0")"
[ -d bins ] || tar xJf bins.txz
[ -f fix/test_gpu_skinny ] || xz -d -k fix/test_gpu_skinny.xz
[ -f fix/solgemm-judge ] || xz -d -k fix/solgemm-judge.xz
chmod +x fix/test_gpu_skinny fix/solgemm-judge
O=/tmp/s48c3; mkdir -p $O
pack() { tar czf $OUT/s48c3.tgz -C /tmp s48c3; }
F=Skinny.PlanLayoutsBatchInvariant
for v in bins fix; do
  timeout 100 compute-sanitizer --tool synccheck --kernel-name kns=skinny_kernel ./$v/test_gpu_skinny --gtest_filter=$F > $O/synccheck-$v.log 2>&1
  echo "synccheck $v rc=$?" >> $O/summary.txt; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/synccheck-$v.log | head -3 >> $O/summary.txt
  pack
done
for v in bins fix; do
  cuobjdump -sass ./$v/test_gpu_skinny > /tmp/all-$v.txt 2>&1
  awk '/Function : / {p = ($0 ~ /Dec12ELi1ELi512ELi2ELb0ELi0ELb0E/)} p' /tmp/all-$v.txt > $O/sass-$v.txt
  echo "sass $v rc=$? lines $(wc -l < $O/sass-$v.txt)" >> $O/summary.txt
done
# the fix under the full test file (correctness) and racecheck of it (for the record)
timeout 200 ./fix/test_gpu_skinny > $O/test-fix.log 2>&1; echo "test fix rc=$?" >> $O/summary.txt
tail -3 $O/test-fix.log >> $O/summary.txt
pack
# A/B of the judge's rows whose kernels changed (staged x: qkv_gate at 1..32, the pooler and o at one token), old / new
for r in 1 2; do
  for v in bins fix; do
    timeout 150 ./$v/solgemm-judge --layers qkv_gate pooler o --loads 'decode 1' 'decode 16' 'decode 32' 'verify 1' \
      --tune-file /tmp/tune.txt --json $O/ab-$v-$r.json --md '' --svg '' > $O/ab-$v-$r.txt 2>&1
    echo "ab $v $r rc=$?" >> $O/summary.txt
    pack
  done
done
cat $O/summary.txt
