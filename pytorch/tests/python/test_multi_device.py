"""The operators on a device that is not the current one: inputs on cuda:1 with cuda:0
current give the results of the same call with cuda:1 current and of the float64 CPU path, on
cuda:1, and allocate nothing on cuda:0. Marked `cuda`; skipped by name below two GPUs."""
import pytest
import torch

import sdtw_torch

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2,
                       reason="needs two CUDA devices (torch.cuda.device_count() < 2)"),
]


def inputs(device, dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 40, 5, generator=g, dtype=torch.float64)
    y = torch.randn(3, 33, 5, generator=g, dtype=torch.float64)
    return x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)


def run_all(x, y):
    """Every operator the user reaches, forward and backward: results as CPU float64 tensors."""
    out = {}
    for fused in (True, False):
        a, b = x.detach().clone().requires_grad_(True), y.detach().clone().requires_grad_(True)
        v = sdtw_torch.soft_dtw(a, b, gamma=0.1, fused=fused, bandwidth=10,
                                x_lengths=torch.tensor([40, 30, 20]), y_lengths=torch.tensor([33, 25, 15]))
        v.sum().backward()
        out[f"value fused={fused}"], out[f"grad_x fused={fused}"], out[f"grad_y fused={fused}"] = v, a.grad, b.grad
    D = sdtw_torch.pairwise_cost(x, y).detach().requires_grad_(True)
    v = sdtw_torch.soft_dtw_cost(D, gamma=0.1)
    v.sum().backward()
    out["cost value"], out["cost grad"] = v, D.grad
    out["alignment"] = sdtw_torch.alignment(x, y, gamma=0.1)
    out["divergence"] = sdtw_torch.soft_dtw(x, y, gamma=0.1, normalize=True)
    for name, t in out.items():
        assert t.device == x.device, (name, t.device)
    return {name: t.detach().double().cpu() for name, t in out.items()}


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float64, 1e-10)])
def test_operators_on_cuda1_with_cuda0_current(dtype, tol):
    torch.cuda.set_device(0)
    torch.cuda.synchronize(0)
    torch.cuda.reset_peak_memory_stats(0)
    before = torch.cuda.memory_allocated(0)
    x, y = inputs("cuda:1", dtype)
    other = run_all(x, y)
    torch.cuda.synchronize(1)
    assert torch.cuda.current_device() == 0
    assert torch.cuda.memory_allocated(0) == before and torch.cuda.max_memory_allocated(0) == before

    with torch.cuda.device(1):
        current = run_all(x, y)
    reference = run_all(*inputs("cpu", torch.float64))
    def rel(a, b):
        return ((a - b).norm() / b.norm()).item()

    for name in reference:
        assert rel(other[name], current[name]) < 1e-12, name  # the same computation, another current device
        assert rel(other[name], reference[name]) < tol, (name, rel(other[name], reference[name]))
