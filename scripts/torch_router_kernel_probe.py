"""Which kernels torch's F.linear(x.float(), W) launches for the router (256 x 8192, FP32 weights) at m = 1 / 8, and
which cuBLAS library torch loaded (issue 2: the judge's router baseline ran 6-8% faster than torch at m = 1).
Run under ncu to see the kernel names: ncu --metrics gpu__time_duration.sum python3 scripts/torch_router_kernel_probe.py"""
import torch, torch.nn.functional as F

print("torch", torch.__version__, "CUDA", torch.version.cuda, "allow_tf32", torch.backends.cuda.matmul.allow_tf32)
w = (torch.randn(256, 8192, device="cuda") * 0.02).float()
for m in (1, 8):
    x = torch.randn(m, 8192, device="cuda").bfloat16()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"router m={m}")
    y = F.linear(x.float(), w)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print(f"m={m}: out {tuple(y.shape)} {y.dtype}")
with open("/proc/self/maps") as f:
    libs = sorted({line.split()[-1] for line in f if "cublas" in line})
print("cuBLAS libraries loaded:", *libs, sep="\n  ")
