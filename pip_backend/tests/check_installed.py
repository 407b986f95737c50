"""Checks an installed sdtw_torch from outside the checkout, with no sdtw environment variable:
it comes from the environment's site-packages with its library inside, reports the CMake project
version with the build's torch and CUDA, its loss and gradient match a float64 soft-DTW recursion
written here on fresh random inputs at several shapes, and 10 training steps lower the loss (on CUDA
when the library has it and a GPU is present).
    python check_installed.py <CMake project version> [<environment prefix>]
"""
import importlib.metadata
import sys
from pathlib import Path

import torch

import sdtw_torch


def soft_dtw_recursion(x, y, gamma):
    """R[i,j] = D[i,j] + softmin_gamma(R[i-1,j-1], R[i-1,j], R[i,j-1]) on autograd scalars, float64."""
    D = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    n, m = D.shape
    inf = torch.tensor(float("inf"), dtype=D.dtype)
    R = [[inf] * (m + 1) for _ in range(n + 1)]
    R[0][0] = torch.zeros((), dtype=D.dtype)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            previous = torch.stack([R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]])
            R[i][j] = D[i - 1, j - 1] - gamma * torch.logsumexp(-previous / gamma, 0)
    return R[n][m]


def relative_error(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def check_location(prefix):
    package = Path(sdtw_torch.__file__).resolve().parent
    assert Path(prefix).resolve() in package.parents, f"sdtw_torch imported from {package}, not from {prefix}"
    assert sdtw_torch.LIBRARY_PATH.parent.resolve() == package, f"library {sdtw_torch.LIBRARY_PATH} not in {package}"


def check_version(project_version):
    major, minor = torch.__version__.split(".")[:2]
    label = f"pt{major}{minor}" + ("cu" if sdtw_torch.built_with_cuda() else "cpu")
    expected = f"{project_version}+{label}"
    assert sdtw_torch.__version__.startswith(expected), f"__version__ {sdtw_torch.__version__}, expected {expected}..."
    assert importlib.metadata.version("sdtw_torch") == sdtw_torch.__version__, importlib.metadata.version("sdtw_torch")


def check_values(device):
    # Library float64 on CPU is the float64 reference itself; the CUDA path keeps 4 bytes per cell
    # of alignment weights, accurate to ~1e-5.
    value_tolerance, grad_tolerance = (1e-10, 1e-9) if device == "cpu" else (1e-6, 1e-4)
    generator = torch.Generator().manual_seed(15)
    for n, m, d, gamma in [(5, 7, 3, 1.0), (9, 4, 2, 0.1), (1, 6, 2, 0.5), (12, 12, 4, 0.01), (16, 11, 1, 2.0)]:
        x = torch.randn(n, d, generator=generator, dtype=torch.float64)
        y = torch.randn(m, d, generator=generator, dtype=torch.float64)
        xr = x.clone().requires_grad_(True)
        expected = soft_dtw_recursion(xr, y, gamma)
        expected.backward()
        xs = x.to(device).requires_grad_(True)
        value = sdtw_torch.soft_dtw(xs, y.to(device), gamma=gamma)
        value.backward()
        assert relative_error(value.detach().cpu(), expected.detach()) < value_tolerance, (n, m, d, gamma, value, expected)
        assert relative_error(xs.grad.cpu(), xr.grad) < grad_tolerance, (n, m, d, gamma, xs.grad, xr.grad)


def check_training(device):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, reduction="mean")
    x, y = torch.randn(8, 20, 4, device=device), torch.randn(8, 18, 4, device=device)
    losses = []
    for _ in range(10):
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0], losses
    return losses


def main():
    project_version = sys.argv[1]
    if len(sys.argv) > 2:
        check_location(sys.argv[2])
    check_version(project_version)
    device = "cuda" if sdtw_torch.built_with_cuda() and torch.cuda.is_available() else "cpu"
    check_values(device)
    losses = check_training(device)
    print(f"sdtw_torch {sdtw_torch.__version__} from {sdtw_torch.LIBRARY_PATH}: loss and gradient match the "
          f"float64 recursion on {device}; 10 training steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
