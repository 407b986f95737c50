# Time of a fused forward + backward and of the same step with one Hessian-vector product (create_graph=True,
# then a second backward), B32 N512 D64, gamma 0.1, CUDA events around each call; and the HVP step's peak
# memory above the inputs. Needs a GPU and a built sdtw_torch: PYTHONPATH=$REPO/pytorch/python python3 hvp_time.py
import sdtw_torch
import torch

torch.manual_seed(0)
B, N, D = 32, 512, 64
x = torch.randn(B, N, D, device="cuda", requires_grad=True); y = torch.randn(B, N, D, device="cuda")
v = torch.randn_like(x)
def backward():
    loss = sdtw_torch.soft_dtw(x, y, gamma=0.1).sum(); (g,) = torch.autograd.grad(loss, x); return g
def hvp():
    loss = sdtw_torch.soft_dtw(x, y, gamma=0.1).sum(); (g,) = torch.autograd.grad(loss, x, create_graph=True)
    (h,) = torch.autograd.grad((g * v).sum(), x); return h
for name, f in (("forward+backward", backward), ("forward+backward+HVP (create_graph, double backward)", hvp)):
    for _ in range(3): f()
    torch.cuda.synchronize(); ts = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); print(f"{name}: median {ts[5]:.3f} ms (min {ts[0]:.3f}, max {ts[-1]:.3f})", torch.cuda.get_device_name())
torch.cuda.reset_peak_memory_stats(); base = torch.cuda.memory_allocated(); hvp(); torch.cuda.synchronize()
print(f"HVP step peak above inputs: {(torch.cuda.max_memory_allocated() - base) / 2**20:.1f} MiB for {B*N*N} cells")
