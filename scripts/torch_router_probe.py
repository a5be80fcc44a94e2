#!/usr/bin/env python3
# Where torch's router time goes, timed exactly like ../shared/anchors/torch_baseline.py (graph replay, cold L2).
import torch, torch.nn.functional as F
dev = "cuda"
torch.manual_seed(0)
flush = torch.empty(128 * 2**20, device=dev, dtype=torch.float32).fill_(1.0)
sink = torch.empty(1, device=dev)
def graph_of(fn):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): fn()
    return g
def time_graph(g, reps=200):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        sink.copy_(flush.sum()); a.record(); g.replay(); b.record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return ts[len(ts) // 2]
tiny = torch.zeros(1, device=dev)
g0 = graph_of(lambda: tiny.add_(1)); time_graph(g0, 50); fixed = time_graph(g0, 500)
g00 = graph_of(lambda: (tiny.add_(1), tiny.add_(1))); time_graph(g00, 50); two = time_graph(g00, 500)
print(f"fixed (1 tiny kernel) {fixed:.2f} us; graph of 2 tiny kernels {two:.2f} us")
W = (torch.randn(256, 8192, device=dev) * 0.02).float()
Wb = (torch.randn(8192, 4096, device=dev) * 0.02).bfloat16()[:1024]
for m in (1, 8, 16, 32):
    x = torch.randn(m, 8192, device=dev).bfloat16(); xf = x.float()
    xb = torch.randn(m, 4096, device=dev).bfloat16()
    out = torch.empty(m, 8192, device=dev)
    res = {}
    for name, fn in (("cast+linear", lambda: F.linear(x.float(), W)), ("linear(fp32 x)", lambda: F.linear(xf, W)),
                     ("cast only", lambda: x.float()), ("cast into buffer", lambda: out[:, :].copy_(x)),
                     ("slice bf16", lambda: F.linear(xb, Wb))):
        g = graph_of(fn); time_graph(g, 20); res[name] = time_graph(g) - fixed
    print(m, " ".join(f"{k}={v:.2f}" for k, v in res.items()))
