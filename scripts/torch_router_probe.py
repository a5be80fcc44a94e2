"""Which kernels torch's F.linear(x.float(), W) runs for the FP32 router (256 x 8192), and what each costs,
judge-style (graph replay, cold L2, graph fixed cost subtracted). Used to check the judge's router baseline
against torch (issue 2). Usage: python3 scripts/torch_router_probe.py"""
import torch, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

dev = "cuda"
print("torch", torch.__version__, "cuda", torch.version.cuda, "blas", torch.backends.cuda.preferred_blas_library(),
      "allow_tf32", torch.backends.cuda.matmul.allow_tf32)
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

def time_graph(g, reps=300):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for a, b in ev:
        sink.copy_(flush.sum()); a.record(); g.replay(); b.record()
    torch.cuda.synchronize()
    ts = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return ts[len(ts) // 2]

tiny = torch.zeros(1, device=dev)
g0 = graph_of(lambda: tiny.add_(1))
for _ in range(3): time_graph(g0, 50)
fixed = time_graph(g0, 500)
print(f"fixed {fixed:.2f} us")
for m in (1, 8, 16, 32, 128, 256):
    x = torch.randn(m, 8192, device=dev).bfloat16()
    xf = x.float()
    full = lambda: F.linear(x.float(), w)
    cast = lambda: x.float()
    gemm = lambda: F.linear(xf, w)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        full(); torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    t = {k: time_graph(graph_of(f)) - fixed for k, f in (("full", full), ("cast", cast), ("gemm", gemm))}
    print(f"m={m:4d} full {t['full']:6.2f} cast {t['cast']:5.2f} gemm {t['gemm']:6.2f} us; kernels: {names}")
