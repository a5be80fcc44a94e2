#!/usr/bin/env python3
"""Compare the judge's cuBLAS baseline with torch F.linear timed the same way (../shared/anchors/torch_baseline.py
output), shape by shape. With several judge runs, each shape's baseline is the median of the runs' figures.
Usage: compare_torch.py JUDGE.json [JUDGE.json ...] TORCH.txt  -> a markdown table on stdout."""
import json, statistics, sys

if len(sys.argv) < 3:
    sys.exit("usage: compare_torch.py JUDGE.json [JUDGE.json ...] TORCH.txt")
runs = [json.load(open(p)) for p in sys.argv[1:-1]]
judge = runs[0]
baseline = {}
for run in runs:
    for s in run["shapes"]:
        if s.get("timed") and s.get("load") is not None:
            baseline.setdefault((s["load"], s["layer"]), []).append(s["baseline_us"])
torch = {}
for line in open(sys.argv[-1]):
    f = line.split()
    if len(f) >= 5 and f[0] in ("decode", "verify") and f[2] in ("qkv_gate", "o", "pooler", "unpooler", "router"):
        torch[(f"{f[0]} {f[1]}", f[2])] = float(f[4])
rows, worst = [], 0.0
for s in judge["shapes"]:
    if not s.get("timed") or s.get("load") is None:
        continue
    t = torch.get((s["load"], s["layer"]))
    if t is None:
        continue
    b = statistics.median(baseline[(s["load"], s["layer"])])
    d = b / t - 1
    worst = max(worst, abs(d))
    rows.append(f"| {s['load']} | {s['layer']} | {s['m']} | {b:.2f} | {t:.2f} | {100 * d:+.1f}% |")
print(f"judge runs: {len(runs)} (baseline: the median of their figures)\n")
print("| load | layer | m | judge cuBLAS us | torch F.linear us | difference |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
within = sum(1 for r in rows if abs(float(r.split("|")[6].strip().rstrip("%"))) <= 5.0)
print(f"\n{within} of {len(rows)} shapes within 5%; largest difference {100 * worst:.1f}%")
