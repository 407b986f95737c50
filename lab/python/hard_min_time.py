# Exact DTW (gamma = 0, the kernels' hard-min instantiation) against soft-DTW (gamma = 0.1) through
# sdtw_torch on a GPU: a fused forward + backward and a values-only forward, CUDA events around each
# call, median of 10 after 3 warm-up. Run: PYTHONPATH=$REPO/pytorch/python python3 hard_min_time.py
import sdtw_torch
import torch


def median_ms(f):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[5]


torch.manual_seed(0)
print(torch.cuda.get_device_name())
for B, N, D in ((32, 512, 64), (1024, 1024, 64), (16, 8192, 16)):
    x = torch.randn(B, N, D, device="cuda", requires_grad=True)
    y = torch.randn(B, N, D, device="cuda")
    for gamma in (0.1, 0.0):
        step = median_ms(lambda: sdtw_torch.soft_dtw(x, y, gamma=gamma).sum().backward())
        with torch.no_grad():
            values = median_ms(lambda: sdtw_torch.soft_dtw(x, y, gamma=gamma))
        cells = B * N * N
        print(f"B{B} N{N} D{D} gamma {gamma}: step {step:.3f} ms ({cells / step / 1e6:.1f} G cells/s), "
              f"values-only {values:.3f} ms ({cells / values / 1e6:.1f} G cells/s)")
