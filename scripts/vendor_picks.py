#!/usr/bin/env python3
"""Which cuBLASLt configuration the vendor tuner kept for one judged row, and what the judge then timed, across the
committed judge runs: does a row's time follow the tuner's pick? (perf-notes session 51: the pooler at m = 256 ran
~24 us on tiles 17/0-17/3, ~25.3 on 125/x and ~26.3 on 17/4-17/5, while the tuner's pairs ranked them within 2-3%.)

    python3 scripts/vendor_picks.py LAYER M [RESULTS_DIR]      e.g.  vendor_picks.py pooler 256

Reads every judge JSON under RESULTS_DIR (default docs/results, its dev/ folders included) that timed LAYER at M on the
vendor family: the tuner's choice for M's bucket (from the layer's description, "mB default->chosen(tile T/C...)", B
the bucket top at or above M), the row's cuBLAS and solgemm times and the run's fixed cost (compare runs at one fixed
cost: scripts/score_at_fixed.py). Then the median solgemm time per choice. Output: a Markdown table on stdout.
"""
import glob
import json
import os
import re
import statistics
import sys

BUCKETS = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256]


def bucket_top(m: int) -> int:
    for b in BUCKETS:
        if m <= b:
            return b
    return BUCKETS[-1]


def main() -> int:
    if len(sys.argv) < 3:
        sys.exit("usage: vendor_picks.py LAYER M [RESULTS_DIR]")
    layer, m = sys.argv[1], int(sys.argv[2])
    root = sys.argv[3] if len(sys.argv) > 3 else "docs/results"
    top = bucket_top(m)
    # "m256 33.5->28.1(tile 17/5, from m = 232: ...)" or "m256 25.8->25.8(default)": the all-rows part comes first
    pick_re = re.compile(r"\bm%d (\d+\.\d+)->(\d+\.\d+)\(([^,)]*)" % top)
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.json"), recursive=True)):
        try:
            run = json.load(open(path))
        except (OSError, ValueError):
            continue
        if not isinstance(run, dict) or "shapes" not in run or "layers" not in run:
            continue
        desc = next((l.get("description", "") for l in run["layers"] if l.get("layer") == layer), "")
        shape = next((s for s in run["shapes"] if s.get("timed") and s.get("layer") == layer and s.get("m") == m), None)
        if shape is None or not str(shape.get("plan", "")).startswith("vendor"):
            continue
        hit = pick_re.search(desc)
        pick = hit.group(3) if hit else "?"
        rows.append((os.path.relpath(path, root), run.get("generator", "?"), pick, shape["baseline_us"], shape["impl_us"],
                     run.get("fixed_cost_us", float("nan"))))
    if not rows:
        print(f"no judge run under {root} timed {layer} at m = {m} on the vendor family")
        return 1
    print(f"## {layer} at m = {m} (bucket m{top}): the tuner's pick and the judge's times\n")
    print("| run | generator | tuner's pick | cuBLAS us | solgemm us | fixed cost us |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} |")
    print("\n| tuner's pick | runs | solgemm us (median) | range |")
    print("|---|---|---|---|")
    by = {}
    for r in rows:
        by.setdefault(r[2], []).append(r[4])
    for pick, ts in sorted(by.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"| {pick} | {len(ts)} | {statistics.median(ts):.2f} | {min(ts):.2f}-{max(ts):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
