#!/usr/bin/env bash
# Session 43, call 5 (at ab512fa's library): (1) ncu warp-state samples of the skinny plan kernel on llm-like
# qkv_gate at 16 tokens (cs8/rt5/wk2/g8, x staged), with and without its exception tables (SKINNY_NCU=noexc): where the
# exception warp's rounds wait (perf-notes step 189); (2) the pooler at m = 104 in two more judge processes (step 190).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
mkdir -p b && tar xJf bins.txz -C b --strip-components=1
O=$OUT/s43e; mkdir -p $O
SKINNY_LLM=1 SKINNY_NCU=noexc SKINNY_ONLY=qkv_gate SKINNY_CANDS=cs8/rt5/wk2/g8 timeout 200 ncu --clock-control none \
  --kernel-name regex:skinny_kernel --launch-count 2 --section WarpStateStats --section SourceCounters \
  --section SpeedOfLight --section MemoryWorkloadAnalysis -o $O/qkv16 ./b/skinny_bench 1 - 16 > $O/ncu.log 2>&1
echo "ncu rc=$?" >> $O/progress.txt
ncu -i $O/qkv16.ncu-rep --page source --csv --print-source sass > $O/qkv16-source.csv 2>> $O/ncu.log
ncu -i $O/qkv16.ncu-rep --page details --csv > $O/qkv16-details.csv 2>> $O/ncu.log
gzip $O/qkv16-source.csv; rm -f $O/qkv16.ncu-rep
for i in 1 2; do
  timeout 60 ./b/solgemm-judge --layers pooler --loads none --m 104 --inputs 1 --replays 100,300 --ci-target 0.03 \
    --json $O/p104-$i.json --md '' --svg '' > $O/p104-$i.txt 2> /dev/null
  echo "judge $i rc=$?" >> $O/progress.txt
done
cd $OUT && tar czf s43e.tgz s43e && rm -rf s43e
