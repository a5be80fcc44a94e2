"""Which kernels torch's F.linear(x.float(), W) runs for the FP32 router (256 x 8192), and what each costs,
judge-style (graph replay, cold L2, graph fixed cost subtracted). Used to check the judge's router baseline
against torch (issue 2). Usage: python3 scripts/torch_router_probe.py"""
import torch, torch.nn.functional as F
from judge_style_timing import fixed_us, graph_of, time_graph
from torch.profiler import profile, ProfilerActivity

dev = "cuda"
print("torch", torch.__version__, "cuda", torch.version.cuda, "blas", torch.backends.cuda.preferred_blas_library(),
      "allow_tf32", torch.backends.cuda.matmul.allow_tf32)
w = (torch.randn(256, 8192, device=dev) * 0.02).float()

fixed = fixed_us()
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
