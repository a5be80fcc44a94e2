#!/usr/bin/env python3
"""Where the score is: for each timed shape of a judge run, what the score would become if that shape alone ran at
a target time, and the score with every shape at its target.

    python3 scripts/score_potential.py docs/results/RUN/judge.json [--bw 4.59] [--ramp 1.34] [--slack 1.10]
                                                                     [--tensor 0.75] [--top 30]

Target of a shape (a model, not a measurement): slack x max(memory, math), where memory is the streaming ceiling of
the bytes it must move with the weights at their smallest lossless size (BF16 layers at the 12-bit code's 12.01 bits
per weight, the router's FP32 weights at 32 bits as BF16 hi + lo), x and the output once (ramp + bytes / bw, the
judge's own ceiling model, ../shared/anchors), and math is its FLOPs at `tensor` x 989 TFLOP/s. Issue 4's numbers are
this model with slack 1.10. A shape already under its target keeps its time. The score follows the judge: per load,
the sum of cuBLAS's times over the sum of ours; the geometric mean over loads. The judge's own fixed cost stays
subtracted (compare runs at a common fixed cost with scripts/score_at_fixed.py first where that matters).
"""
import argparse
import json
import math
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("judge_json")
    ap.add_argument("--bw", type=float, default=4.59, help="streaming bandwidth, TB/s (default 4.59)")
    ap.add_argument("--ramp", type=float, default=1.34, help="streaming ramp, us (default 1.34)")
    ap.add_argument("--slack", type=float, default=1.10, help="target = slack x the bound (default 1.10)")
    ap.add_argument("--tensor", type=float, default=0.75, help="share of 989 TFLOP/s a math-bound shape reaches")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    try:
        with open(a.judge_json) as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"score_potential: {a.judge_json}: {e}")
    shapes = [s for s in j.get("shapes", []) if s.get("baseline_us") and s.get("impl_us") and s.get("load")]
    if not shapes:
        sys.exit(f"score_potential: {a.judge_json}: no timed shapes (a --check-only run?)")
    loads: dict[str, list[dict]] = {}
    for s in shapes:
        n, k, m = s["rows"], s["k"], s["m"]
        router = s["layer"] == "router"
        w = n * k * (4.0 if router else 12.01 / 8)
        other = m * k * 2 + m * n * (4 if router else 2)
        memory = a.ramp + (w + other) / (a.bw * 1e6)
        math_us = s["flops"] / (a.tensor * 989e6)
        s["_target"] = a.slack * max(memory, math_us)
        s["_bound"] = "memory" if memory >= math_us else "math"
        loads.setdefault(s["load"], []).append(s)

    def score(t) -> tuple[float, list[float]]:
        r = [sum(x["baseline_us"] for x in ss) / sum(t(x) for x in ss) for ss in loads.values()]
        return math.exp(sum(map(math.log, r)) / len(r)), r

    now, r_now = score(lambda x: x["impl_us"])
    cap = lambda x: min(x["impl_us"], x["_target"])  # noqa: E731
    best, r_best = score(cap)
    print(f"{a.judge_json}: commit {str(j.get('commit', '?'))[:7]}, fixed cost {j.get('fixed_cost_us', 0):.2f} us; "
          f"target = {a.slack:.2f} x max({a.ramp} us + bytes / {a.bw} TB/s, FLOPs / {a.tensor:.2f} x 989 TFLOP/s)")
    print(f"score now {now:.4f}; every shape at min(now, target) {best:.4f}")
    print("loads now / at target: " + ", ".join(f"{name} {x:.3f} / {y:.3f}"
                                                 for name, x, y in zip(loads, r_now, r_best)))
    rows = []
    for s in shapes:
        sc, _ = score(lambda x, s=s: cap(x) if x is s else x["impl_us"])
        rows.append((sc / now - 1, s))
    rows.sort(key=lambda r: -r[0])
    print("\n| score gain | load | layer | m | ours us | target us | bound | cuBLAS us | plan |")
    print("|---:|---|---|---:|---:|---:|---|---:|---|")
    for g, s in rows[: a.top]:
        plan = s.get("plan", "").split("]")[0] + "]" if "]" in s.get("plan", "") else s.get("plan", "")
        print(f"| {100 * g:+.2f}% | {s['load']} | {s['layer']} | {s['m']} | {s['impl_us']:.2f} | {s['_target']:.2f} | "
              f"{s['_bound']} | {s['baseline_us']:.2f} | {plan} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
