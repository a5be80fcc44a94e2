#!/usr/bin/env bash
# A whole GPU check in one command, on a machine with an NVIDIA Hopper GPU:
#   bash scripts/gpu_check.sh OUTDIR [--prebuilt BUILD_DIR | --bins BINS] [--tar] [-- JUDGE_ARGS...]
# 1. builds (cmake, with ninja when present) into build-gpu-check/, or takes BUILD_DIR built elsewhere, or BINS: the
#    judge and the GPU test executables only, flat (a folder or the .txz that scripts/pack_gpu_bins.sh writes; ~10 MB
#    where a build folder is ~300 MB: what fits the device tool's carry; the CPU tests are then left to CI);
# 2. runs the GPU tests and the CPU tests (ctest -L gpu / -L cpu; with --prebuilt the test executables are run
#    directly, since a copied build folder's CTest files name the paths of the machine that built it);
# 3. runs the judge with its defaults (plus JUDGE_ARGS, e.g. -- --loads 'decode 1').
# OUTDIR receives, flat (8 files): build.log (tools, GPU, commit, build), tests-gpu.log, tests-cpu.log,
# judge.txt (tables), judge.log (progress, and the vendor tuner's log: SOLGEMM_TUNE_LOG), judge.json, judge.md, judge.svg.
# --tar: also packs OUTDIR into OUTDIR.tgz at the end (one file: the device tool brings back at most 8 files, and a
# check writes 8 of its own).
# Exit code: 0 when everything passed, 1 when any step failed (the summary names it), 2 on bad usage.
set -uo pipefail
usage() { echo "usage: bash scripts/gpu_check.sh OUTDIR [--prebuilt BUILD_DIR | --bins BINS] [--tar] [-- JUDGE_ARGS...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
OUT=$1; shift
PREBUILT=""
BINS=""
TAR=""
JUDGE_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) [ $# -ge 2 ] || usage; PREBUILT=$2; shift 2 ;;
    --bins) [ $# -ge 2 ] || usage; BINS=$2; shift 2 ;;
    --tar) TAR=1; shift ;;
    --) shift; JUDGE_ARGS=("$@"); break ;;
    *) usage ;;
  esac
done
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT" || { echo "gpu_check: cannot create $OUT" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
failed=()

# ---- 1. environment and build ----
{
  echo "== $(date -u +%FT%TZ) gpu_check in $ROOT"
  echo "== commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv 2>&1 || true
  nvcc --version 2>&1 | tail -1 || true
  cmake --version 2>&1 | head -1 || true
} > "$OUT/build.log"
[ -n "$PREBUILT" ] && [ -n "$BINS" ] && usage
if [ -n "$BINS" ]; then
  if [ -f "$BINS" ]; then  # the .txz of scripts/pack_gpu_bins.sh: unpacked beside it
    dir=$(dirname "$BINS")/$(basename "$BINS" .txz)
    rm -rf "$dir" && mkdir -p "$dir" && tar xJf "$BINS" -C "$dir" --strip-components=1 ||
      { echo "gpu_check: cannot unpack $BINS" >&2; exit 2; }
    BINS=$dir
  fi
  BINS=$(cd "$BINS" 2>/dev/null && pwd) || { echo "gpu_check: no folder $BINS" >&2; exit 2; }
  echo "== using the carried binaries in $BINS: $(cat "$BINS/COMMIT" 2>/dev/null || echo 'commit unknown')" >> "$OUT/build.log"
  # the judge's end-to-end test finds the judge here, not at the path of the machine that built it
  export SOLGEMM_JUDGE_EXE="$BINS/solgemm-judge"
elif [ -n "$PREBUILT" ]; then
  BUILD=$(cd "$PREBUILT" 2>/dev/null && pwd) || { echo "gpu_check: no build folder $PREBUILT" >&2; exit 2; }
  echo "== using the prebuilt build folder $BUILD" >> "$OUT/build.log"
else
  BUILD="$ROOT/build-gpu-check"
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  echo "== building into $BUILD" >> "$OUT/build.log"
  if ! { cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release &&
         cmake --build "$BUILD" -j"$(nproc)"; } >> "$OUT/build.log" 2>&1; then
    echo "gpu_check: build FAILED (see $OUT/build.log)" >&2
    exit 1
  fi
fi
if [ -n "$BINS" ]; then JUDGE="$BINS/solgemm-judge"; else JUDGE="$BUILD/judge/solgemm-judge"; fi
[ -x "$JUDGE" ] || { echo "gpu_check: $JUDGE is missing" >&2; exit 1; }

# ---- 2. tests ----
# Runs every test executable of one label directly (gtest), from the label CMake recorded for it.
run_label_direct() {
  local label=$1 rc=0 f name
  for f in "$BUILD"/tests/*"[1]_include.cmake"; do
    [ -e "$f" ] || continue
    grep -q "LABELS;$label\]" "$f" || continue
    name=$(basename "$f"); name=${name%"[1]_include.cmake"}
    [ -x "$BUILD/tests/$name" ] || { echo "== $name: NOT BUILT"; rc=1; continue; }
    echo "== $name"
    (cd "$BUILD/tests" && "./$name" --gtest_brief=1) || rc=1
  done
  # The Python bindings' tests (CTest python_<label>), when the prebuilt module imports with this machine's python3
  # (a module is built for one Python version; exit code 77 = skipped).
  if [ -d "$BUILD/python/solgemm" ] && PYTHONPATH="$BUILD/python" python3 -c "import solgemm" 2>/dev/null; then
    echo "== python_$label"
    PYTHONPATH="$BUILD/python" python3 "$ROOT/python/tests/test_solgemm.py" "$label"
    local prc=$?
    [ $prc -eq 0 ] || [ $prc -eq 77 ] || rc=1
  else
    echo "== python_$label: not run (no module in $BUILD/python that $(python3 --version 2>&1) imports)"
  fi
  return $rc
}
# With --bins: every test_gpu_* executable carried, run directly; the CPU tests are not carried (CI runs them).
run_bins() {
  local rc=0 t
  if [ "$1" = cpu ]; then echo "== CPU tests not run: --bins carries the GPU test executables only (CI runs the CPU tests)"; return 0; fi
  for t in "$BINS"/test_gpu_*; do
    [ -x "$t" ] || continue
    echo "== $(basename "$t")"
    (cd "$BINS" && "$t" --gtest_brief=1) || rc=1
  done
  return $rc
}
for label in gpu cpu; do
  log="$OUT/tests-$label.log"
  if [ -n "$BINS" ]; then
    run_bins "$label" > "$log" 2>&1
  elif [ -n "$PREBUILT" ]; then
    run_label_direct "$label" > "$log" 2>&1
  else
    ctest --test-dir "$BUILD" -L "$label" --output-on-failure > "$log" 2>&1
  fi
  rc=$?
  [ $rc -eq 0 ] || failed+=("$label tests (see tests-$label.log)")
done

# ---- 3. the judge, defaults ----
(cd "$ROOT" && SOLGEMM_TUNE_LOG=1 "$JUDGE" --json "$OUT/judge.json" --md "$OUT/judge.md" --svg "$OUT/judge.svg" "${JUDGE_ARGS[@]}") \
  > "$OUT/judge.txt" 2> "$OUT/judge.log"
rc=$?
[ $rc -eq 0 ] || failed+=("judge exit code $rc (see judge.log)")

# ---- summary ----
grep -E "^score:" "$OUT/judge.txt" || true
if [ ${#failed[@]} -gt 0 ]; then
  printf 'gpu_check: FAILED: %s\n' "${failed[@]}" | tee -a "$OUT/build.log" >&2
  [ -n "$TAR" ] && tar czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")"
  exit 1
fi
echo "gpu_check: all passed; results in $OUT" | tee -a "$OUT/build.log"
[ -n "$TAR" ] && tar czf "$OUT.tgz" -C "$(dirname "$OUT")" "$(basename "$OUT")" && echo "gpu_check: packed into $OUT.tgz"
exit 0
