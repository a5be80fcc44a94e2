#!/usr/bin/env python3
"""The torch side of bench/fixed_cost_probe (perf-notes step 76): raw median replay times (nothing subtracted) of a
graph of one empty kernel (torch.cuda._sleep(0), what torch_baseline.py subtracts) and of F.linear for o and
qkv_gate at m = 1, timed as scripts/torch_baseline.py times them (flush: flush.sum() copied into a sink), with and
without x regenerated before each flush (the judge regenerates x before every replay), interleaved.
Usage: python3 scripts/torch_fixed_probe.py [replays, default 400]"""
import sys

import torch
import torch.nn.functional as F

from judge_style_timing import graph_of, time_graph

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
torch.manual_seed(0)
x1 = torch.randn(1, 1024, device="cuda").bfloat16()
x8 = torch.randn(1, 8192, device="cuda").bfloat16()
wo = (torch.randn(8192, 1024, device="cuda") * 0.02).bfloat16()
wq = (torch.randn(2304, 8192, device="cuda") * 0.02).bfloat16()
graphs = {"empty": graph_of(lambda: torch.cuda._sleep(0)), "o m=1": graph_of(lambda: F.linear(x1, wo)),
          "qkv_gate m=1": graph_of(lambda: F.linear(x8, wq))}
regen = lambda: (x1.normal_(), x8.normal_())
res = {}
for _ in range(5):  # rounds, interleaved
    for name, g in graphs.items():
        for variant, before in (("torch (flush)", None), ("regen (regen, flush)", regen)):
            res.setdefault((variant, name), []).append(time_graph(g, reps // 5, before))
print(torch.cuda.get_device_name(0), f"{reps} replays per cell, raw median us (medians of 5 interleaved rounds)")
print(f"{'variant':<24}" + "".join(f"{n:>14}" for n in graphs) + "".join(f"{n + ' - empty':>20}" for n in list(graphs)[1:]))
for variant in ("torch (flush)", "regen (regen, flush)"):
    med = {n: sorted(res[(variant, n)])[2] for n in graphs}
    print(f"{variant:<24}" + "".join(f"{med[n]:>14.2f}" for n in graphs)
          + "".join(f"{med[n] - med['empty']:>20.2f}" for n in list(graphs)[1:]))
