#!/usr/bin/env bash
# session 47 call 2 (af5168e's library): correctness beyond the check: the judge's check-only runs on the adversarial
# and adversarial-dense weights, qkv_gate at every m of 9..16 (the rows step 203 moved), and compute-sanitizer memcheck
# of the batch-invariance GPU test (the 10-row-tile layout at n_tiles 2 is new). One tar.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
R=/tmp/c2; mkdir -p $R; cat bins/COMMIT > $R/COMMIT
pk() { tar czf $OUT/c2.tgz -C /tmp c2; }
timeout 60 ./bins/solgemm-judge --check-only --layers qkv_gate --m 9 10 11 12 13 14 15 16 --json $R/qkv-9-16.json --md '' --svg '' > $R/qkv-9-16.txt 2>&1; echo "rc $?" >> $R/qkv-9-16.txt; pk
for g in adversarial adversarial-dense; do
  timeout 100 ./bins/solgemm-judge --check-only --generator $g --json $R/$g.json --md '' --svg '' > $R/$g.txt 2>&1; echo "rc $?" >> $R/$g.txt; pk
done
PATH=/usr/local/cuda/bin:$PATH timeout $((380 - SECONDS)) compute-sanitizer --tool memcheck ./bins/test_gpu_skinny --gtest_filter='Skinny.PlanLayoutsBatchInvariant' > $R/memcheck.txt 2>&1; echo "rc $?" >> $R/memcheck.txt; pk
echo "elapsed $SECONDS"; tail -n 2 $R/*.txt
