#!/usr/bin/env bash
# session 46 call 4 (lean: the session's device time ran short after refused starts): the judge with its defaults
# (as gpu_check runs it), the judge on its llm-like weights, then test_gpu_skinny and test_gpu_skinny_decode (the
# families the plan change touches). Outputs in one tar.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p bins && tar xJf bins.txz -C bins --strip-components=1
R=/tmp/check; mkdir -p $R; cat bins/COMMIT > $R/COMMIT; nvidia-smi -L > $R/gpu.txt 2>&1
SOLGEMM_TUNE_LOG=1 timeout 120 ./bins/solgemm-judge --json $R/judge.json --md $R/judge.md --svg $R/judge.svg \
  > $R/judge.txt 2> $R/judge.log; echo "judge rc $?" >> $R/judge.log
tar czf $OUT/check.tgz -C /tmp check
timeout 100 ./bins/solgemm-judge --generator llm-like --json $R/judge-llm.json --md $R/judge-llm.md --svg '' \
  > $R/judge-llm.txt 2>&1; echo "llm rc $?" >> $R/judge-llm.txt
tar czf $OUT/check.tgz -C /tmp check
for t in test_gpu_skinny test_gpu_skinny_decode; do
  timeout 150 ./bins/$t > $R/$t.log 2>&1; echo "rc $?" >> $R/$t.log
  tar czf $OUT/check.tgz -C /tmp check
done
grep -E "^score" $R/judge.txt $R/judge-llm.txt; tail -n 2 $R/test_gpu_*.log
