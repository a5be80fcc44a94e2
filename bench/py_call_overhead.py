"""Host time per call of solgemm.Linear against torch.nn.functional.linear, eager (no CUDA graph).

An engine that calls the projection eagerly pays the Python and launch path on every call; when that is longer than
the kernel, the GPU waits on the host. Times (us per call, median of 5 runs of N back-to-back calls, synchronised at
the end; the GPU side is short for these shapes, so the figure is the host path): solgemm.Linear(x), the same with a
preallocated out, Weights.run on prepared arguments, and F.linear(x, W). Usage: python3 py_call_overhead.py [N=2000]
(PYTHONPATH = the build's python folder).
"""
import statistics
import sys
import time

import torch

import solgemm


def per_call(fn, n):
    runs = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(runs)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, {n} calls x 5 runs")
    print("| N x K | m | solgemm.Linear us | with out= | Weights.run us | F.linear us | kernel alone (graph replay) us |")
    print("|---|---|---|---|---|---|---|")
    for n_, k_ in ((8192, 1024), (4096, 8192)):
        w = (torch.randn(n_, k_, device="cuda") * 0.02).bfloat16()
        lin = solgemm.Linear(w, tune_vendor=False)
        for m in (1, 16):
            x = torch.randn(m, k_, device="cuda").bfloat16()
            out = torch.empty(m, n_, device="cuda", dtype=torch.bfloat16)
            s = torch.cuda.current_stream().cuda_stream
            a = per_call(lambda: lin(x), n)
            b = per_call(lambda: lin(x, out=out), n)
            c = per_call(lambda: lin.weights.run(x, out, n_, s), n)
            d = per_call(lambda: torch.nn.functional.linear(x, w), n)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(20):
                    lin(x, out=out)
            e = per_call(g.replay, max(1, n // 20)) / 20
            print(f"| {n_} x {k_} | {m} | {a:.1f} | {b:.1f} | {c:.1f} | {d:.1f} | {e:.1f} |")


if __name__ == "__main__":
    main()
