import sys, torch
x1 = torch.randn(1, 8192, device="cuda").bfloat16()
x8 = torch.randn(8, 8192, device="cuda").bfloat16()
torch.cuda.synchronize()
for _ in range(3):
    y = x1.float(); torch.cuda.synchronize()
    y = x8.float(); torch.cuda.synchronize()
print("ok: 3 rounds of x.float() at m = 1 then m = 8", torch.__version__)
