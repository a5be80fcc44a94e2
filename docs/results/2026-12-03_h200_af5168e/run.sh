#!/usr/bin/env bash
# session 47 call 1: (a) perf-notes step 203: the judge's qkv_gate rows, one K order over 1..32 (new, this build) /
# b1772dd (old) alternated twice; (b) the whole GPU check (all GPU tests + judge) on the new build; (c) the llm-like
# judge if time is left. Outputs in two tars.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
xz -dc judge-old.xz > judge-old && chmod +x judge-old
R=/tmp/ab; mkdir -p $R; cat bins/COMMIT > $R/COMMIT; nvidia-smi -L > $R/gpu.txt 2>&1
for i in 1 2; do
  timeout 45 ./bins/solgemm-judge --layers qkv_gate --json $R/new-$i.json --md '' --svg '' > $R/new-$i.txt 2>&1
  timeout 45 ./judge-old --layers qkv_gate --json $R/old-$i.json --md '' --svg '' > $R/old-$i.txt 2>&1
  tar czf $OUT/ab.tgz -C /tmp ab
done
export SOLGEMM_JUDGE_EXE=$(pwd)/bins/solgemm-judge
timeout $((560 - SECONDS)) bash ../../scripts/gpu_check.sh /tmp/check --bins $(pwd)/bins.txz --tar
cp /tmp/check.tgz $OUT/ 2>/dev/null || tar czf $OUT/check.tgz -C /tmp check
left=$((585 - SECONDS))
if [ $left -gt 70 ]; then
  timeout $left ./bins/solgemm-judge --generator llm-like --json $R/judge-llm.json --md $R/judge-llm.md --svg '' \
    > $R/judge-llm.txt 2>&1; echo "llm rc $?" >> $R/judge-llm.txt
  tar czf $OUT/ab.tgz -C /tmp ab
fi
echo "elapsed $SECONDS"; grep -h "^score" /tmp/check/judge.txt $R/judge-llm.txt 2>/dev/null
