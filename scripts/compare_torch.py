#!/usr/bin/env python3
"""Compare the judge's cuBLAS baseline with torch F.linear timed the same way (../shared/anchors/torch_baseline.py
output), shape by shape. With several judge runs, each shape's baseline is the median of the runs' figures.
Both sides subtract a fixed cost measured in their own process (a graph of one empty kernel); that estimate moves
by up to ~0.6 us between processes (perf-notes step 76), so the raw replay times (the fixed cost added back) are
compared too.
Usage: compare_torch.py JUDGE.json [JUDGE.json ...] TORCH.txt  -> a markdown table on stdout."""
import json, statistics, sys

if len(sys.argv) < 3:
    sys.exit("usage: compare_torch.py JUDGE.json [JUDGE.json ...] TORCH.txt")
runs = [json.load(open(p)) for p in sys.argv[1:-1]]
judge = runs[0]
baseline = {}
judge_fixed = statistics.median(run["fixed_cost_us"] for run in runs)
torch_fixed = None
for run in runs:
    for s in run["shapes"]:
        if s.get("timed") and s.get("load") is not None:
            baseline.setdefault((s["load"], s["layer"]), []).append(s["baseline_us"])
torch = {}
for line in open(sys.argv[-1]):
    f = line.split()
    if line.startswith("fixed cost: empty kernel"):
        torch_fixed = float(f[4])
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
    raw = f"{100 * ((b + judge_fixed) / (t + torch_fixed) - 1):+.1f}%" if torch_fixed is not None else "-"
    # Both raw replay times less one fixed cost (the judge's): the same subtraction on both sides.
    common = f"{100 * (b / (t + torch_fixed - judge_fixed) - 1):+.1f}%" if torch_fixed is not None else "-"
    rows.append(f"| {s['load']} | {s['layer']} | {s['m']} | {b:.2f} | {t:.2f} | {100 * d:+.1f}% | {raw} | {common} |")
print(f"judge runs: {len(runs)} (baseline: the median of their figures); fixed cost subtracted: judge {judge_fixed:.2f} us, "
      f"torch {torch_fixed if torch_fixed is not None else float('nan'):.2f} us\n")
print("| load | layer | m | judge cuBLAS us | torch F.linear us | difference | raw replays (fixed cost added back) | "
      "one fixed cost (the judge's) for both |")
print("|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
within = sum(1 for r in rows if abs(float(r.split("|")[6].strip().rstrip("%"))) <= 5.0)
print(f"\n{within} of {len(rows)} shapes within 5%; largest difference {100 * worst:.1f}%")
if torch_fixed is not None:
    raws = [float(r.split("|")[7].strip().rstrip("%")) for r in rows]
    print(f"raw replay times: {sum(1 for v in raws if abs(v) <= 5.0)} of {len(raws)} within 5%; largest difference "
          f"{max(abs(v) for v in raws):.1f}%")
    commons = [float(r.split("|")[8].strip().rstrip("%")) for r in rows]
    print(f"one fixed cost for both: {sum(1 for v in commons if abs(v) <= 5.0)} of {len(commons)} within 5%; largest "
          f"difference {max(abs(v) for v in commons):.1f}%")
