#!/usr/bin/env bash
# session 42, one call: (1) the full GPU check at 0fa31d8 (exception warp by tokens, 12-bucket vendor tuner);
# (2) the skinny plan layouts on the judge's llm-like weights, 9268484 (prev) against 0fa31d8 (new), tune_plan;
# (3) as time allows, the judge at m = 40..256 on the pooler and qkv_gate (the vendor tuner's new buckets).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
cd "$(dirname "$0")"
T0=$(date +%s)
left() { echo $((570 - ($(date +%s) - T0))); }
timeout 330 bash ../../scripts/gpu_check.sh /tmp/check --bins $(pwd)/bins.txz --tar > $OUT/gpu_check.out 2>&1
cp /tmp/check.tgz $OUT/ 2>/dev/null
mkdir -p new prev && tar xJf bins.txz -C new --strip-components=1 && tar xJf prev.txz -C prev --strip-components=1
O=$OUT/ab; mkdir -p $O
tp() {  # bins layer ms layout
  [ $(left) -lt 45 ] && { echo "$1 $2 skipped" >> $O/progress.txt; return; }
  TUNE_LLM=1 TUNE_NO_VENDOR=1 TUNE_PAIRS=0 TUNE_LAYOUTS=$4 timeout $(( $(left) - 5 )) ./$1/tune_plan 5 40 $3 $2 \
    > $O/llm-$2-$1.md 2> $O/llm-$2-$1.err
  echo "$1 $2 rc=$? $(date +%T)" >> $O/progress.txt
}
for B in new prev; do tp $B qkv_gate 8,16,32 cs8/rt6/wk2/g8; done
for B in new prev; do tp $B unpooler 16,32 cs1/rt2/wk4/g16/xr; done
for B in new prev; do tp $B pooler 16 cs1/rt1/wk8/g16/xr; done
MS="48 65 72 80 88 96 104 120 128 160 192 224 256"
for L in pooler qkv_gate; do
  [ $(left) -lt 60 ] && break
  SOLGEMM_TUNE_LOG=1 timeout $(( $(left) - 5 )) ./new/solgemm-judge --layers $L --loads none --m $MS --inputs 1 \
    --replays 100,200 --ci-target 0.03 --json $O/sweep-$L.json --md '' --svg '' > $O/sweep-$L.txt 2> $O/sweep-$L.log
  echo "sweep $L rc=$? $(date +%T)" >> $O/progress.txt
done
python3 ../../scripts/msweep_table.py $O/sweep-*.json > $O/sweep-table.md 2>&1 || true
cd $OUT && tar czf ab.tgz ab && rm -rf ab
