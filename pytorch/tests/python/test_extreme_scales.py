"""Extreme gamma and input scales, on the CPU and on CUDA (tests marked
`cuda`, skipped by name without a GPU): for every gamma > 0 and finite inputs the value, the
alignment E and the gradients are finite, E lies in [0, 1], and soft-DTW tends to hard DTW as
gamma / cost -> 0; a pair whose value overflows its dtype gets value inf and NaN gradients, the
same in the fused and the unfused mode, and the other pairs are unaffected."""
import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import hard_dtw

DEVICES = ["cpu", pytest.param("cuda", marks=requires_cuda)]
GAMMAS = [10.0 ** k for k in range(-30, 31, 3)]
SCALES = [10.0 ** k for k in range(-20, 21, 5)]


def pair(scale, seed, n=7, m=6, dim=3, batch=2, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, n, dim, generator=g, dtype=torch.float64) * scale
    y = torch.randn(batch, m, dim, generator=g, dtype=torch.float64) * scale
    return x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)


def value_and_grads(x, y, **kw):
    x = x.detach().clone().requires_grad_(True)
    y = y.detach().clone().requires_grad_(True)
    values = sdtw_torch.soft_dtw(x, y, **kw)
    values.sum().backward()
    return values.detach(), x.grad, y.grad


def rel(a, b):
    """max |a - b| / max |b|: relative to b's size, whatever its scale."""
    a, b = a.double().cpu(), b.double().cpu()
    return ((a - b).abs().max() / b.abs().max()).item()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
def test_value_alignment_and_gradients_are_finite_for_every_gamma_and_scale(device, fused):
    for s, scale in enumerate(SCALES):
        x, y = pair(scale, s, device=device)
        for gamma in GAMMAS + [5e-324, 1e-300]:
            where = f"scale {scale:g}, gamma {gamma:g}"
            v, gx, gy = value_and_grads(x, y, gamma=gamma, fused=fused)
            assert torch.isfinite(v).all() and torch.isfinite(gx).all() and torch.isfinite(gy).all(), where
            E = sdtw_torch.alignment(x, y, gamma=gamma)
            assert torch.isfinite(E).all(), where
            assert E.min().item() >= 0.0 and E.max().item() <= 1.0 + 1e-9, (where, E.min().item(), E.max().item())
            # every path starts at (0, 0): all the mass arrives there
            assert torch.allclose(E[:, 0, 0].cpu(), torch.ones(2, dtype=E.dtype), atol=1e-9), where


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
def test_tends_to_hard_dtw_as_gamma_over_cost_vanishes(device, fused):
    for s, scale in enumerate(SCALES):
        x, y = pair(scale, 100 + s, device=device)
        xc, yc = x.cpu().numpy(), y.cpu().numpy()
        for ratio in (1e-12, 1e-30):
            gamma = ratio * scale * scale
            v, gx, gy = value_and_grads(x, y, gamma=gamma, fused=fused)
            E = sdtw_torch.alignment(x, y, gamma=gamma).cpu()
            for b in range(x.shape[0]):
                where = f"scale {scale:g}, gamma {gamma:g}, pair {b}"
                D = ((xc[b][:, None, :] - yc[b][None, :, :]) ** 2).sum(-1)
                hard, P = hard_dtw(D)
                P = torch.from_numpy(P)
                assert abs(v[b].item() - hard) <= 1e-12 * abs(hard), where
                assert (E[b] - P).abs().max().item() <= 1e-9, where
                xb, yb = torch.from_numpy(xc[b]), torch.from_numpy(yc[b])
                hard_gx = 2 * (xb * P.sum(1)[:, None] - P @ yb)
                hard_gy = 2 * (yb * P.sum(0)[:, None] - P.T @ xb)
                assert rel(gx[b], hard_gx) <= 1e-9 and rel(gy[b], hard_gy) <= 1e-9, where


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
def test_scaling_inputs_by_c_is_scaling_gamma_by_one_over_c_squared(device, fused):
    x, y = pair(1.0, 7, device=device)
    for gamma in (1e-3, 0.1, 1.0, 1e3):
        v1, gx1, gy1 = value_and_grads(x, y, gamma=gamma, fused=fused)
        for scale in SCALES:
            where = f"scale {scale:g}, gamma {gamma:g}"
            v, gx, gy = value_and_grads(x * scale, y * scale, gamma=gamma * scale * scale, fused=fused)
            assert rel(v / (scale * scale), v1) <= 1e-9, where
            assert rel(gx / scale, gx1) <= 1e-9 and rel(gy / scale, gy1) <= 1e-9, where


@pytest.mark.parametrize("device", DEVICES[1:])
@pytest.mark.parametrize("fused", [True, False])
def test_cuda_matches_the_float64_reference_at_every_gamma_and_scale(device, fused):
    for s, scale in enumerate(SCALES):
        x, y = pair(scale, 200 + s)
        for gamma in GAMMAS:
            where = f"scale {scale:g}, gamma {gamma:g}"
            v, gx, gy = value_and_grads(x.to(device), y.to(device), gamma=gamma, fused=fused)
            rv, rgx, rgy = value_and_grads(x, y, gamma=gamma, fused=fused)
            assert rel(v, rv) <= 1e-9, where
            assert rel(gx, rgx) <= 1e-7 and rel(gy, rgy) <= 1e-7, where


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("dist", ["sqeuclidean", "euclidean"])
def test_float32_overflow_gives_inf_value_and_nan_gradients_for_that_pair_only(device, fused, dist):
    x, y = pair(1.0, 300, dtype=torch.float32, device=device)
    x[0] *= 1e20  # squared distances ~1e40: beyond float32, so the Euclidean cost is inf too
    v, gx, gy = value_and_grads(x, y, gamma=1.0, fused=fused, dist=dist)
    assert v[0].item() == float("inf")
    assert torch.isnan(gx[0]).all() and torch.isnan(gy[0]).all()
    v1, gx1, gy1 = value_and_grads(x[1:], y[1:], gamma=1.0, fused=fused, dist=dist)
    assert torch.isfinite(v[1]) and torch.isfinite(gx[1]).all() and torch.isfinite(gy[1]).all()
    assert rel(v[1:], v1) <= 1e-6 and rel(gx[1:], gx1) <= 1e-6 and rel(gy[1:], gy1) <= 1e-6


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("dist", ["sqeuclidean", "euclidean", "l1", "cosine", "negative_dot"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nan_in_the_data_makes_that_pair_nan_and_leaves_the_others(device, fused, dist, dtype):
    x, y = pair(1.0, 400, dtype=dtype, device=device)
    x[0, 2, 1] = float("nan")
    v = sdtw_torch.soft_dtw(x, y, gamma=1.0, fused=fused, dist=dist)
    assert torch.isnan(v[0]), f"{dist}: a NaN feature must reach its pair's value, as in torch's losses"
    want = sdtw_torch.soft_dtw(x[1:], y[1:], gamma=1.0, fused=fused, dist=dist)
    assert torch.isfinite(v[1]) and rel(v[1:], want) <= 1e-6
