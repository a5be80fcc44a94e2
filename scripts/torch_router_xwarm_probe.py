"""Does an x written just before the L2 flush survive it (issue 2)? The judge regenerates x before every flush;
torch_baseline.py does not. Times torch's F.linear(x.float(), W) for the router both ways, judge-style (graph
replay, read flush of 512 MB, fixed cost subtracted). Usage: python3 scripts/torch_router_xwarm_probe.py"""
import torch, torch.nn.functional as F

dev = "cuda"
w = (torch.randn(256, 8192, device=dev) * 0.02).float()
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

def time_graph(g, before=None, reps=400):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        if before: before()
        sink.copy_(flush.sum()); a.record(); g.replay(); b.record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return ts[len(ts) // 2]

tiny = torch.zeros(1, device=dev)
g0 = graph_of(lambda: tiny.add_(1))
for _ in range(3): time_graph(g0, reps=50)
fixed = time_graph(g0, reps=500)
print(f"fixed {fixed:.2f} us")
for m in (1, 8, 16, 32, 128, 256):
    x = torch.randn(m, 8192, device=dev).bfloat16()
    x2 = torch.randn(m, 8192, device=dev).bfloat16()
    g = graph_of(lambda: F.linear(x.float(), w))
    cold = time_graph(g) - fixed
    written = time_graph(g, before=lambda: x.copy_(x2)) - fixed
    print(f"m={m:4d} x untouched before the flush {cold:6.2f} us   x written before the flush {written:6.2f} us")
