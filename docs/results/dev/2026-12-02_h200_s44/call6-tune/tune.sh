#!/usr/bin/env bash
# tune_plan over the judge's shapes at the decode loads' m (1, 8, 16, 32) on the current code (session 44): every valid
# layout screened, the best few, the plan's layout, cuBLAS and the tuned vendor family again in one pass.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/tune; mkdir -p $O
t0=$(date +%s)
for s in qkv_gate pooler unpooler o "unpooler slice" router; do
  f=$O/$(echo $s | tr ' ' '_').md
  if [ "$s" = "unpooler slice" ] || [ "$s" = router ]; then export TUNE_SIMT=1; else unset TUNE_SIMT; fi
  timeout 150 ./b/tune_plan 15 60 1,8,16,32 "$s" > $f 2> ${f%.md}.err
  echo "$s rc $? at $(( $(date +%s) - t0 )) s" >> $O/progress.txt
  [ $(( $(date +%s) - t0 )) -gt 420 ] && break
done
cd $OUT && tar czf tune.tgz tune && rm -rf tune
