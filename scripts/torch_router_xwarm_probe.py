"""Does an x written just before the L2 flush survive it (issue 2)? The judge regenerates x before every flush;
torch_baseline.py does not. Times torch's F.linear(x.float(), W) for the router both ways, judge-style (graph
replay, read flush of 512 MB, fixed cost subtracted). Usage: python3 scripts/torch_router_xwarm_probe.py"""
import torch, torch.nn.functional as F
from judge_style_timing import fixed_us, graph_of, time_graph

dev = "cuda"
w = (torch.randn(256, 8192, device=dev) * 0.02).float()

fixed = fixed_us()
print(f"fixed {fixed:.2f} us")
for m in (1, 8, 16, 32, 128, 256):
    x = torch.randn(m, 8192, device=dev).bfloat16()
    x2 = torch.randn(m, 8192, device=dev).bfloat16()
    g = graph_of(lambda: F.linear(x.float(), w))
    cold = time_graph(g) - fixed
    written = time_graph(g, before=lambda: x.copy_(x2)) - fixed
    print(f"m={m:4d} x untouched before the flush {cold:6.2f} us   x written before the flush {written:6.2f} us")
