"""The named costs besides squared Euclidean ('l1', 'euclidean', 'cosine', 'negative_dot'), fused by
default: on the CPU fused and unfused agree and both equal soft-DTW on the cost written out with
plain torch ops; marked `cuda`, the fused kernels agree with the unfused path on the same cost tensor,
values and gradients, with lengths and bands, and in float32 and float64."""

import pytest
import torch

import sdtw_torch
from conftest import requires_cuda

NAMED = ["l1", "euclidean", "cosine", "negative_dot"]
# (B, N, M, D, bandwidth, lengths): N != M, N = 1, M = 1, a band, lengths with and without a band.
SHAPES = [(3, 7, 5, 4, None, None), (2, 1, 6, 3, None, None), (2, 6, 1, 3, None, None),
          (2, 9, 9, 5, 2, None), (3, 8, 6, 3, None, ([8, 5, 2], [6, 6, 3])), (2, 10, 9, 4, 3, ([10, 7], [9, 6]))]


def on_cuda(test):
    for mark in requires_cuda:
        test = mark(test)
    return test


def written_out(x, y, dist):
    """The cost tensor by its definition (reference/costs.hpp), through torch ops other than pairwise_cost's."""
    if dist == "l1":
        return torch.cdist(x, y, p=1)
    if dist == "euclidean":
        return torch.cdist(x, y, p=2)
    if dist == "cosine":
        unit = lambda t: t / t.norm(dim=-1, keepdim=True).clamp_min(1e-8)
        return 1 - unit(x) @ unit(y).transpose(1, 2)
    return -(x @ y.transpose(1, 2))


def inputs(shape, dtype, device, seed, coincident=True):
    B, N, M, D, _, _ = shape
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, N, D, generator=g, dtype=torch.float64)
    y = torch.randn(B, M, D, generator=g, dtype=torch.float64)
    if coincident:  # a coincident pair of rows: the Euclidean cost's zero, gradient 0 there
        y[0, 0] = x[0, 0]
    return (x.to(device=device, dtype=dtype).requires_grad_(), y.to(device=device, dtype=dtype).requires_grad_())


def loss(x, y, shape, **options):
    _, _, _, _, bandwidth, lengths = shape
    xl, yl = (None, None) if lengths is None else (torch.tensor(lengths[0]), torch.tensor(lengths[1]))
    return sdtw_torch.soft_dtw(x, y, gamma=0.5, bandwidth=bandwidth, x_lengths=xl, y_lengths=yl, **options)


def loss_and_grads(x, y, shape, **options):
    values = loss(x, y, shape, **options)
    weights = torch.linspace(0.5, 1.5, values.numel(), dtype=values.dtype, device=values.device)
    gx, gy = torch.autograd.grad((values * weights).sum(), (x, y))
    return values.detach(), gx, gy


def truncated_cost_loss(x, y, shape, dist):
    """soft-DTW pair by pair on each pair's own rows, through the written-out cost."""
    _, _, _, _, bandwidth, lengths = shape
    values = []
    for b in range(x.shape[0]):
        n, m = (x.shape[1], y.shape[1]) if lengths is None else (lengths[0][b], lengths[1][b])
        D = written_out(x[b:b + 1, :n], y[b:b + 1, :m], dist)
        values.append(sdtw_torch.soft_dtw_cost(D, gamma=0.5, bandwidth=bandwidth))
    return torch.cat(values)


@pytest.mark.parametrize("dist", NAMED)
def test_fused_is_the_default_for_every_named_cost(dist):
    assert torch.ops.sdtw.soft_dtw_options(1.0, None, False, dist, None, "none")[4] is True


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dist", NAMED)
def test_cpu_fused_and_unfused_agree_with_the_written_out_cost(dist, shape):
    x, y = inputs(shape, torch.float64, "cpu", seed=11)
    fused = loss_and_grads(x, y, shape, dist=dist)
    explicit = loss_and_grads(x, y, shape, dist=dist, fused=True)
    unfused = loss_and_grads(x, y, shape, dist=dist, fused=False)
    values = truncated_cost_loss(x, y, shape, dist)
    weights = torch.linspace(0.5, 1.5, values.numel(), dtype=values.dtype)
    want = (values.detach(), *torch.autograd.grad((values * weights).sum(), (x, y)))
    for got in (fused, explicit, unfused):
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-10)


# float32: the costs in float and the saved weights' ~1e-5 error per element (kernels/tests use relative L2 norms).
@on_cuda
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-9), (torch.float32, 1e-3)])
@pytest.mark.parametrize("shape", SHAPES + [(4, 70, 45, 40, None, None), (2, 100, 100, 8, 6, ([100, 90], [97, 95]))])
@pytest.mark.parametrize("dist", NAMED)
def test_cuda_fused_matches_unfused_on_the_same_cost(dist, shape, dtype, tol):
    x, y = inputs(shape, dtype, "cuda", seed=12)
    fused = loss_and_grads(x, y, shape, dist=dist, fused=True)
    unfused = loss_and_grads(x, y, shape, dist=dist, fused=False)
    for g, w in zip(fused, unfused):
        torch.testing.assert_close(g, w, rtol=tol, atol=tol)
    with torch.no_grad():  # the values-only kernels: the same values
        torch.testing.assert_close(loss(x, y, shape, dist=dist), fused[0], rtol=0, atol=0)
    x64, y64 = x.detach().cpu().double().requires_grad_(), y.detach().cpu().double().requires_grad_()
    cpu = loss_and_grads(x64, y64, shape, dist=dist)
    for g, w in zip(fused, cpu):
        torch.testing.assert_close(g.cpu().double(), w, rtol=tol, atol=tol)


@on_cuda
@pytest.mark.parametrize("dist", NAMED)
def test_cuda_fused_second_backward_and_double_backward(dist):
    """A second backward through the node recomputes the state; create_graph=True has a gradient."""
    shape = (2, 5, 4, 3, None, None)
    x, y = inputs(shape, torch.float64, "cuda", seed=13, coincident=False)
    values = sdtw_torch.soft_dtw(x, y, dist=dist)
    first = torch.autograd.grad(values.sum(), (x, y), retain_graph=True)
    second = torch.autograd.grad(values.sum(), (x, y))
    for a, b in zip(first, second):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    if dist != "l1":  # |.| has no second derivative to check by differences at its kinks
        assert torch.autograd.gradgradcheck(lambda a, b: sdtw_torch.soft_dtw(a, b, dist=dist), (x, y))
