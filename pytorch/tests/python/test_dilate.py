"""sdtw_torch.dilate against a direct float64 implementation of its definition (the numpy
reference's soft-DTW and E, reference.py), value and gradient; its checks; and examples/dilate.py,
which must train (the evaluation loss decreases) in a few steps on the CPU and, where there is one, the GPU."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import reference
import sdtw_torch
from conftest import requires_cuda

F64 = torch.float64
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "dilate.py"


def randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


def direct_dilate(outputs, targets, alpha, gamma, n_rows=None):
    """alpha * sdtw(D) + (1 - alpha) * sum((i - j)^2 / N^2 * E) for one pair, straight from the definition."""
    D = reference.sqdist(outputs, targets)
    n, m = D.shape
    value, E = reference.sdtw(D, gamma)
    i, j = np.arange(n)[:, None], np.arange(m)[None, :]
    temporal = ((i - j) ** 2 / float(n_rows or n) ** 2 * E).sum()
    return alpha * value + (1 - alpha) * temporal, value, temporal


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_dilate_matches_its_definition_value_and_gradient(alpha):
    gamma, h = 0.3, 1e-6
    outputs0, targets = randn(2, 6, 1, seed=1), randn(2, 5, 1, seed=2)
    outputs = outputs0.clone().requires_grad_(True)
    result = sdtw_torch.dilate(outputs, targets, alpha=alpha, gamma=gamma, reduction="none")
    (grad,) = torch.autograd.grad(result.loss.sum(), outputs)
    for b in range(2):
        expected = direct_dilate(outputs0[b].numpy(), targets[b].numpy(), alpha, gamma)
        np.testing.assert_allclose([t[b].item() for t in result], expected, rtol=1e-10, atol=1e-12)
        numeric = np.zeros((6, 1))
        for i in range(6):
            step = np.zeros((6, 1))
            step[i] = h
            plus = direct_dilate(outputs0[b].numpy() + step, targets[b].numpy(), alpha, gamma)[0]
            minus = direct_dilate(outputs0[b].numpy() - step, targets[b].numpy(), alpha, gamma)[0]
            numeric[i] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(grad[b].numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_dilate_mean_is_the_batch_average_and_lengths_use_each_pairs_own_n():
    outputs, targets = randn(2, 6, 2, seed=3), randn(2, 5, 2, seed=4)
    per_pair = sdtw_torch.dilate(outputs, targets, gamma=0.5, reduction="none")
    mean = sdtw_torch.dilate(outputs, targets, gamma=0.5)
    for got, each in zip(mean, per_pair):
        torch.testing.assert_close(got, each.mean(), rtol=1e-12, atol=0)
    short = sdtw_torch.dilate(outputs, targets, gamma=0.5, reduction="none", x_lengths=[4, 6], y_lengths=[5, 3])
    for b, (n, m) in enumerate([(4, 5), (6, 3)]):
        expected = direct_dilate(outputs[b, :n].numpy(), targets[b, :m].numpy(), 0.5, 0.5)
        np.testing.assert_allclose([t[b].item() for t in short], expected, rtol=1e-10)
    unbatched = sdtw_torch.dilate(outputs[1, :5], targets[1], gamma=0.5, x_lengths=5)
    expected = direct_dilate(outputs[1, :5].numpy(), targets[1].numpy(), 0.5, 0.5)
    np.testing.assert_allclose([t.item() for t in unbatched], expected, rtol=1e-10)


def test_dilate_takes_an_omega():
    outputs, targets = randn(2, 4, 1, seed=5), randn(2, 4, 1, seed=6)
    Omega = torch.rand(4, 4, generator=torch.Generator().manual_seed(7), dtype=F64)
    got = sdtw_torch.dilate(outputs, targets, alpha=0.2, gamma=0.5, Omega=Omega, reduction="none")
    E = sdtw_torch.alignment(outputs, targets, gamma=0.5)
    torch.testing.assert_close(got.temporal, (E * Omega).sum((1, 2)), rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=r"Omega must have shape \(N, M\) = \(4, 4\) or that of the cost"):
        sdtw_torch.dilate(outputs, targets, Omega=torch.zeros(4, 5))


def test_dilate_names_bad_arguments():
    outputs, targets = randn(2, 4, 1, seed=8), randn(2, 4, 1, seed=9)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\] \(got 1.5\)"):
        sdtw_torch.dilate(outputs, targets, alpha=1.5)
    with pytest.raises(ValueError, match="reduction must be 'none', 'mean' or 'sum'"):
        sdtw_torch.dilate(outputs, targets, reduction="max")
    with pytest.raises(ValueError, match="gamma"):
        sdtw_torch.dilate(outputs, targets, gamma=-1.0)


def test_dilate_omega_is_the_references():
    np.testing.assert_allclose(sdtw_torch.dilate_omega(3, 2, dtype=F64).numpy(),
                               np.array([[0, 1], [1, 0], [4, 1]]) / 9.0, rtol=0, atol=0)


def test_dilate_omega_with_lengths_divides_by_each_pairs_n():
    got = sdtw_torch.dilate_omega(3, 2, lengths=[3, 2], dtype=F64)
    square = np.array([[0, 1], [1, 0], [4, 1]], dtype=np.float64)
    np.testing.assert_allclose(got.numpy(), np.stack([square / 9.0, square / 4.0]), rtol=0, atol=0)


@pytest.mark.parametrize("n, m, error, message", [
    (0, 2, ValueError, r"n must be >= 1 \(got 0\)"),
    (3, -1, ValueError, r"m must be >= 1 \(got -1\)"),
    (2.0, 2, TypeError, r"n must be an int \(got 2.0\)"),
    (3, True, TypeError, r"m must be an int \(got True\)"),
])
def test_dilate_omega_names_a_bad_size(n, m, error, message):
    with pytest.raises(error, match=message):
        sdtw_torch.dilate_omega(n, m)


@pytest.mark.parametrize("lengths, error, message", [
    ([3, 0], ValueError, r"lengths\[1\] must be in \[1, n\] = \[1, 3\] \(got 0\)"),
    (torch.tensor([4, 2]), ValueError, r"lengths\[0\] must be in \[1, n\] = \[1, 3\] \(got 4\)"),
    (torch.tensor([2.0]), ValueError, r"lengths must be a 1-D integer tensor \(got dtype torch.float32"),
    (torch.tensor([[2]]), ValueError, r"lengths must be a 1-D integer tensor \(got dtype torch.int64, shape \(1, 1\)\)"),
    ([1.5], TypeError, r"lengths must be an integer tensor or a list of integers"),
])
def test_dilate_omega_names_bad_lengths(lengths, error, message):
    with pytest.raises(error, match=message):
        sdtw_torch.dilate_omega(3, 2, lengths=lengths)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
def test_example_trains(device, tmp_path):
    # From a scratch directory: never the checkout's root on sys.path.
    run = subprocess.run([sys.executable, str(EXAMPLE), "--device", device, "--steps", "60"], cwd=tmp_path,
                         env=dict(os.environ), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    found = re.search(r"eval_loss start=([0-9.e+-]+) end=([0-9.e+-]+)", run.stdout)
    assert found, run.stdout
    start, end = float(found.group(1)), float(found.group(2))
    assert end < 0.8 * start, run.stdout
