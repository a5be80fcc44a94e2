#!/usr/bin/env python3
"""torch.nn.functional.linear on the judge's 30 scored shapes, timed as the judge times its baseline (issue 2):
one call per CUDA graph, 512 MB read before every replay (cold L2), events around the replay, the median, minus
the replay cost of a graph holding one *empty* kernel (judge-spec: "Fixed cost"). ../shared/anchors/torch_baseline.py
subtracts a graph of one tiny kernel instead (`tiny.add_(1)`: a cold one-float read and write), which makes every
time ~0.2 us shorter; both figures are printed, the judge's way in the `torch_us` column that
scripts/compare_torch.py reads.
Data as the anchor script: W ~ N(0, 0.02^2) (FP32 for the router, BF16 otherwise), x ~ N(0, 1) in BF16 with probe
rows; the router as F.linear(x.float(), W); the unpooler's first 1024 rows at m <= 8.
Sturdier than one pass (issue 2: two single-pass runs put 29 and 26 of 30 shapes within 5%): every shape's graph is
built once and timed in --passes interleaved passes over all 30 shapes (default 3, so a drift of the machine
touches every shape alike); the printed figure is the median of the passes, the passes follow it.
Usage: python3 scripts/torch_baseline.py [--passes N] > torch-baseline.txt"""
import argparse
import torch
import torch.nn.functional as F

from judge_style_timing import empty_fixed_us, fixed_us, graph_of, time_graph

LAYERS = {"qkv_gate": (2304, 8192), "o": (8192, 1024), "pooler": (4096, 8192), "unpooler": (8192, 4096),
          "router": (256, 8192)}
LOADS = [("decode 1", 1), ("decode 16", 16), ("decode 32", 32), ("verify 1", 8), ("verify 16", 128), ("verify 32", 256)]


def make_x(m, k):
    x = torch.randn(m, k, device="cuda").bfloat16()
    for r in range(0, m, 8):  # probe rows: one nonzero power of two
        x[r].zero_()
        x[r, (r * 7919) % k] = 2.0 ** ((r % 5) - 2)
    return x


def main():
    ap = argparse.ArgumentParser(description="torch F.linear on the judge's 30 scored shapes, timed as the judge")
    ap.add_argument("--passes", type=int, default=3, help="interleaved passes over all shapes (median printed)")
    args = ap.parse_args()
    if args.passes < 1:
        ap.error(f"--passes {args.passes}: expected at least 1")
    torch.manual_seed(0)
    p = torch.cuda.get_device_properties(0)
    print(p.name, p.multi_processor_count, "SMs", "torch", torch.__version__)
    W = {}
    for name, (n, k) in LAYERS.items():
        w = torch.randn(n, k, device="cuda") * 0.02
        W[name] = w.float() if name == "router" else w.bfloat16()
    empty = empty_fixed_us()
    tiny = fixed_us()
    print(f"fixed cost: empty kernel {empty:.2f} us (subtracted: torch_us), tiny kernel {tiny:.2f} us "
          f"(the anchor script's: anchor_us)")
    print(f"{'load':<10}{'layer':<10}{'m':>5}{'torch_us':>10}{'anchor_us':>10}  passes (us, judge's fixed cost)")
    shapes = []
    for load, m in LOADS:
        for name, (n, k) in LAYERS.items():
            w = W[name][:1024] if (name == "unpooler" and m <= 8) else W[name]
            x = make_x(m, k)
            fn = (lambda x=x, w=w: F.linear(x.float(), w)) if name == "router" else (lambda x=x, w=w: F.linear(x, w))
            g = graph_of(fn)
            time_graph(g, 20)
            shapes.append((load, name, m, g, []))
    for _ in range(args.passes):
        for load, name, m, g, ts in shapes:
            ts.append(time_graph(g, 200))
    for load, name, m, g, ts in shapes:
        t = sorted(ts)[len(ts) // 2]
        each = " ".join(f"{v - empty:.2f}" for v in ts)
        print(f"{load:<10}{name:<10}{m:>5}{t - empty:>10.2f}{t - tiny:>10.2f}  {each}")

if __name__ == "__main__":
    main()
