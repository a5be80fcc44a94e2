#!/usr/bin/env bash
# session 50 call 3: the whole GPU check (all GPU tests + judge, default weights) at this commit (step 208: the 4-D x
# box at one token tile; step 211: untuned shapes timed at prepare; the vendor tuner on the shared ColdTimer), then
# the llm-like judge if time is left.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
R=/tmp/llm; mkdir -p $R
export SOLGEMM_JUDGE_EXE=$(pwd)/bins/solgemm-judge
timeout 470 bash ../../scripts/gpu_check.sh /tmp/check --bins $(pwd)/bins.txz --tar
cp /tmp/check.tgz $OUT/ 2>/dev/null || tar czf $OUT/check.tgz -C /tmp check
left=$((530 - SECONDS))
if [ $left -gt 70 ]; then
  mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
  timeout $left ./bins/solgemm-judge --generator llm-like --json $R/judge-llm.json --md $R/judge-llm.md --svg '' \
    > $R/judge-llm.txt 2>&1; echo "llm rc $?" >> $R/judge-llm.txt
  tar czf $OUT/llm.tgz -C /tmp llm
fi
echo "elapsed $SECONDS"; grep -h "^score" /tmp/check/judge.txt $R/judge-llm.txt 2>/dev/null
