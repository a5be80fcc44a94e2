#!/usr/bin/env bash
# A/B of the router's 7..32 layout (perf-notes step 199): the judge's router rows, 68c76b9's judge (old) and the new
# plan's (new) alternated three times in one call.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
xz -dc judge-new.xz > jn && xz -dc judge-old.xz > jo && chmod +x jn jo
for i in 1 2 3; do
  for v in old new; do
    J=./jn; [ $v = old ] && J=./jo
    timeout 60 $J --layers router --json $OUT/$v-$i.json --md '' --svg '' > $OUT/$v-$i.txt 2>&1
  done
done
