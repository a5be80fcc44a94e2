#!/usr/bin/env bash
# Packs what a GPU check needs from a build made here into one small file for the device tool's carry (64 MiB in all;
# a build folder is ~300 MB): the judge, the GPU test executables, tune_plan, and any other bench executables named.
#   bash scripts/pack_gpu_bins.sh BUILD_DIR OUT.txz [bench names, e.g. skinny_bench verify12_bench]
# On the GPU machine: bash scripts/gpu_check.sh OUTDIR --bins OUT.txz (unpacks it beside itself and runs the GPU tests
# and the judge; COMMIT names the commit checked out when packing, "(dirty)" with local changes). ~10 MB with xz; packing takes ~40 s.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bash scripts/pack_gpu_bins.sh BUILD_DIR OUT.txz [bench names...]" >&2; exit 2; }
BUILD=$1; OUTF=$2; shift 2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bins"
cp "$BUILD/judge/solgemm-judge" "$BUILD/bench/tune_plan" "$tmp/bins/"
for t in "$BUILD"/tests/test_gpu_*; do [[ -x "$t" && "$t" != *.cmake ]] && cp "$t" "$tmp/bins/"; done
for b in "$@"; do cp "$BUILD/bench/$b" "$tmp/bins/"; done
dirty=""
git -C "$ROOT" status --porcelain --untracked-files=no | grep -q . && dirty=" (dirty)"
echo "$(git -C "$ROOT" rev-parse HEAD)$dirty" > "$tmp/bins/COMMIT"
tar cJf "$OUTF" -C "$tmp" bins
echo "$OUTF: $(ls "$tmp/bins" | wc -l) files, $(du -h "$OUTF" | cut -f1), built at $(head -1 "$tmp/bins/COMMIT")"
