#!/usr/bin/env python3
"""The judge's score recomputed with another fixed cost, to compare runs of different processes: each run subtracts
its own estimate of the fixed cost (the median replay of a graph of one empty kernel), which moves by up to ~0.6 us
between processes and machines, and the score moves with it (~+0.03 per us: a larger subtraction shrinks both
sides' times, and the ratio of the two grows where ours is the shorter; perf-notes step 76).
Each shape's median time gets the run's fixed cost added back and FIXED subtracted; the load times and score follow
judge-spec (load time = sum of its five shape times; score = geometric mean of the six load speedups).
Usage: score_at_fixed.py FIXED_US JUDGE.json [JUDGE.json ...]"""
import json, math, sys

if len(sys.argv) < 3:
    sys.exit("usage: score_at_fixed.py FIXED_US JUDGE.json [JUDGE.json ...]")
fixed = float(sys.argv[1])
for path in sys.argv[2:]:
    run = json.load(open(path))
    shift = run["fixed_cost_us"] - fixed
    loads = {}
    for s in run["shapes"]:
        if s.get("timed") and s.get("load") is not None:
            t = loads.setdefault(s["load"], [0.0, 0.0])
            t[0] += s["baseline_us"] + shift
            t[1] += s["impl_us"] + shift
    speedups = [b / i for b, i in loads.values()]
    score = math.exp(sum(map(math.log, speedups)) / len(speedups))
    print(f"{path}: commit {run['commit'][:7]}, fixed cost {run['fixed_cost_us']:.2f} us, score {run['score']:.4f}; "
          f"at {fixed:.2f} us: {score:.4f}")
