"""gamma = 0, exact DTW: the value is the minimum over alignment paths and the alignment E (the
gradient with respect to the cost) is the 0/1 indicator of one optimal path, ties broken as the
reference's hard DTW breaks them. Checked against brute force over all paths and the numpy hard
DTW (reference.py), on the CPU and, marked `cuda`, on the GPU against the CPU."""

import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import all_paths, hard_dtw, sqdist

SHAPES_AND_BANDS = [(1, 1, None), (1, 5, None), (5, 1, None), (3, 5, None), (5, 3, None), (4, 4, None),
                    (4, 4, 1), (5, 3, 2), (3, 6, 3), (6, 5, 1)]


def on_cuda(test):
    for mark in requires_cuda:
        test = mark(test)
    return test


def costs(n, m, seed, ties=False):
    """A float64 cost (n, m); ties=True draws from {0, 1, 2}, so many paths share the minimum."""
    g = torch.Generator().manual_seed(seed)
    if ties:
        return torch.randint(0, 3, (n, m), generator=g).double()
    return torch.rand(n, m, generator=g, dtype=torch.float64) * 4


def assert_is_optimal_path(E, D, value, bandwidth):
    """E is the 0/1 indicator of an alignment path whose cost is the brute-force minimum."""
    paths = {frozenset(p): sum(D[i, j] for i, j in p) for p in all_paths(*D.shape, bandwidth)}
    cells = frozenset(zip(*np.nonzero(E)))
    assert set(np.unique(E)) <= {0.0, 1.0}
    assert cells in paths, f"E is not an alignment path: {sorted(cells)}"
    best = min(paths.values())
    assert value == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert paths[cells] == pytest.approx(best, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n,m,bandwidth", SHAPES_AND_BANDS)
def test_cost_value_and_path_match_brute_force_and_reference(n, m, bandwidth, ties):
    for seed in range(4):
        D = costs(n, m, seed=100 * n + 10 * m + seed, ties=ties)
        value = sdtw_torch.soft_dtw_cost(D, gamma=0, bandwidth=bandwidth)
        E = sdtw_torch.alignment_from_cost(D, gamma=0, bandwidth=bandwidth).numpy()
        assert_is_optimal_path(E, D.numpy(), value.item(), bandwidth)
        want_value, want_E = hard_dtw(D.numpy(), bandwidth)
        assert value.item() == want_value
        np.testing.assert_array_equal(E, want_E)


def test_cost_gradient_is_the_path():
    D = costs(5, 7, seed=3, ties=True).requires_grad_(True)
    sdtw_torch.soft_dtw_cost(D, gamma=0).backward()
    np.testing.assert_array_equal(D.grad.numpy(), hard_dtw(D.detach().numpy())[1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("fused", [True, False])
def test_series_gradient_is_the_path_through_the_cost(dtype, fused):
    g = torch.Generator().manual_seed(11)
    x = torch.randn(6, 3, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True)
    y = torch.randn(4, 3, generator=g, dtype=torch.float64).to(dtype).requires_grad_(True)
    value = sdtw_torch.soft_dtw(x, y, gamma=0, fused=fused)
    value.backward()
    xd, yd = x.detach().double().numpy(), y.detach().double().numpy()
    want, E = hard_dtw(sqdist(xd, yd))
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    assert value.item() == pytest.approx(want, rel=tol)
    np.testing.assert_allclose(x.grad.double().numpy(), 2 * (xd * E.sum(1)[:, None] - E @ yd), rtol=tol, atol=tol)
    np.testing.assert_allclose(y.grad.double().numpy(), 2 * (yd * E.sum(0)[:, None] - E.T @ xd), rtol=tol, atol=tol)


def test_lengths_take_each_pair_s_block():
    D = torch.stack([costs(6, 5, seed=20 + b, ties=True) for b in range(3)])
    xl, yl = torch.tensor([6, 2, 1]), torch.tensor([5, 4, 1])
    values = sdtw_torch.soft_dtw_cost(D, gamma=0, x_lengths=xl, y_lengths=yl)
    E = sdtw_torch.alignment_from_cost(D, gamma=0, x_lengths=xl, y_lengths=yl).numpy()
    for b in range(3):
        n, m = xl[b].item(), yl[b].item()
        want_value, want_E = hard_dtw(D[b, :n, :m].numpy())
        assert values[b].item() == want_value
        np.testing.assert_array_equal(E[b, :n, :m], want_E)
        assert not E[b, n:].any() and not E[b, :, m:].any()


def test_is_the_limit_of_small_gamma():
    D = costs(7, 9, seed=5)
    hard = sdtw_torch.soft_dtw_cost(D, gamma=0)
    soft = sdtw_torch.soft_dtw_cost(D, gamma=1e-4)
    # softmin lies in [min - gamma log 3, min] at every cell: at most N + M - 1 cells on a path
    assert 0 <= (hard - soft).item() <= (7 + 9) * 1e-4 * np.log(3)


def test_infinite_and_nan_costs():
    D = costs(3, 3, seed=6)
    blocked = D.clone()
    blocked[1, :] = float("inf")
    assert sdtw_torch.soft_dtw_cost(blocked, gamma=0).item() == float("inf")
    assert torch.isnan(sdtw_torch.alignment_from_cost(blocked, gamma=0)).all()
    nan = D.clone()
    nan[2, 0] = float("nan")
    assert torch.isnan(sdtw_torch.soft_dtw_cost(nan, gamma=0)).item()


def test_module_and_cdist_take_gamma_zero():
    g = torch.Generator().manual_seed(8)
    X, Y = torch.randn(3, 5, 2, generator=g, dtype=torch.float64), torch.randn(2, 4, 2, generator=g, dtype=torch.float64)
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0)
    loss = sdtw_torch.SoftDTW(gamma=0)
    for i in range(3):
        for j in range(2):
            want = hard_dtw(sqdist(X[i].numpy(), Y[j].numpy()))[0]
            assert C[i, j].item() == pytest.approx(want, rel=1e-12)
            assert loss(X[i], Y[j]).item() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("gamma,shown", [(-1.0, "-1"), (float("nan"), "nan"), (float("inf"), "inf")])
def test_negative_or_non_finite_gamma_is_refused(gamma, shown):
    with pytest.raises(ValueError, match=rf"gamma must be finite and >= 0 \(got {shown}\)"):
        sdtw_torch.soft_dtw(costs(4, 2, seed=1), costs(3, 2, seed=2), gamma=gamma)


def test_barycenter_and_kmeans_refuse_gamma_zero():
    X = torch.rand(4, 5, 2, generator=torch.Generator().manual_seed(3))
    with pytest.raises(ValueError, match=r"gamma must be > 0 for softdtw_barycenter \(got 0"):
        sdtw_torch.softdtw_barycenter(X, gamma=0)
    with pytest.raises(ValueError, match=r"gamma must be > 0 for SoftDTWKMeans \(got 0"):
        sdtw_torch.SoftDTWKMeans(2, gamma=0)


@on_cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n,m,bandwidth", [(1, 1, None), (1, 40, None), (37, 1, None), (33, 70, None),
                                           (100, 64, 40), (65, 65, 3)])
def test_cuda_cost_path_is_the_reference_path(dtype, n, m, bandwidth):
    """On a cost with ties the kernels' E is exactly the CPU's 0/1 path, in float32 too: the kernels
    carry R in float64 on the float32 cost, as the CPU does on that cost promoted."""
    D = costs(n, m, seed=n + m, ties=True).to(dtype)
    values = sdtw_torch.soft_dtw_cost(D.cuda(), gamma=0, bandwidth=bandwidth)
    E = sdtw_torch.alignment_from_cost(D.cuda(), gamma=0, bandwidth=bandwidth)
    want_value, want_E = hard_dtw(D.double().numpy(), bandwidth)
    assert values.item() == pytest.approx(want_value, rel=1e-6 if dtype == torch.float32 else 1e-14)
    np.testing.assert_array_equal(E.cpu().double().numpy(), want_E)


@on_cuda
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float64, 1e-10)])
@pytest.mark.parametrize("fused", [True, False])
def test_cuda_series_match_the_cpu(dtype, tol, fused):
    """Values, gradients and the hard path (alignment at gamma 0) of a padded batch on the GPU
    against the float64 CPU path on the GPU's own cost (so that near-ties are broken alike)."""
    g = torch.Generator().manual_seed(21)
    x = torch.randn(4, 50, 5, generator=g, dtype=torch.float64).to(dtype).cuda()
    y = torch.randn(4, 37, 5, generator=g, dtype=torch.float64).to(dtype).cuda()
    xl, yl = torch.tensor([50, 20, 1, 33]), torch.tensor([37, 37, 9, 1])
    xg, yg = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
    values = sdtw_torch.soft_dtw(xg, yg, gamma=0, fused=fused, x_lengths=xl, y_lengths=yl)
    values.sum().backward()
    path = sdtw_torch.alignment(x, y, gamma=0, x_lengths=xl, y_lengths=yl)
    D = sdtw_torch.pairwise_cost(x, y).double().cpu()
    want_values = sdtw_torch.soft_dtw_cost(D, gamma=0, x_lengths=xl, y_lengths=yl)
    want_path = sdtw_torch.alignment_from_cost(D, gamma=0, x_lengths=xl, y_lengths=yl)
    torch.testing.assert_close(values.double().cpu(), want_values, rtol=tol, atol=tol)
    assert torch.equal(path.double().cpu(), want_path)
    xd, yd = x.double().cpu(), y.double().cpu()
    E = want_path
    gx = 2 * (xd * E.sum(2, keepdim=True) - E @ yd)
    gy = 2 * (yd * E.sum(1).unsqueeze(-1) - E.transpose(1, 2) @ xd)
    torch.testing.assert_close(xg.grad.double().cpu(), gx, rtol=tol, atol=tol)
    torch.testing.assert_close(yg.grad.double().cpu(), gy, rtol=tol, atol=tol)


@on_cuda
def test_cuda_cdist_values_only_matches_the_cpu():
    g = torch.Generator().manual_seed(22)
    X, Y = torch.randn(5, 40, 3, generator=g), torch.randn(3, 29, 3, generator=g)
    with torch.no_grad():
        C = sdtw_torch.cdist_soft_dtw(X.cuda(), Y.cuda(), gamma=0, bandwidth=15)
    want = sdtw_torch.cdist_soft_dtw(X.double(), Y.double(), gamma=0, bandwidth=15)
    torch.testing.assert_close(C.double().cpu(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fused", [True, False])
def test_second_order_at_gamma_zero_is_zero(fused):
    """The path is piecewise constant in the cost, so its derivative is 0: create_graph=True through
    the loss gives a Hessian-vector product of 0 and the first-order gradient unchanged; the
    alignment's gradient is 0 too."""
    g = torch.Generator().manual_seed(7)
    x = torch.rand(2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.rand(2, 4, 3, generator=g, dtype=torch.float64)
    loss = sdtw_torch.soft_dtw(x, y, gamma=0.0, fused=fused).sum()
    (grad,) = torch.autograd.grad(loss, x, create_graph=True)
    (plain,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, gamma=0.0, fused=fused).sum(), x)
    assert torch.equal(grad.detach(), plain)
    direction = torch.rand(x.shape, generator=g, dtype=torch.float64)
    (hvp,) = torch.autograd.grad((grad * direction).sum(), x)
    # Only the cost's own curvature is left (squared Euclidean: 2 x the direction on the path).
    expected = torch.autograd.functional.hvp(
        lambda z: sqdist_path_cost(z, y), x.detach(), direction)[1]
    torch.testing.assert_close(hvp, expected, rtol=1e-12, atol=1e-12)
    D = ((x.detach().unsqueeze(2) - y.unsqueeze(1)) ** 2).sum(-1).requires_grad_(True)
    E = sdtw_torch.alignment_from_cost(D, gamma=0.0)
    (dE,) = torch.autograd.grad((E * torch.rand(E.shape, generator=g, dtype=torch.float64)).sum(), D)
    assert torch.equal(dE, torch.zeros_like(D))


def sqdist_path_cost(x, y):
    """The loss with the path held fixed (the reference's optimal path at x): the sum of the squared
    distances of the cells on it, whose Hessian is the squared Euclidean cost's alone."""
    total = x.new_zeros(())
    for b in range(x.shape[0]):
        D = ((x[b].detach().unsqueeze(1) - y[b].unsqueeze(0)) ** 2).sum(-1).numpy()
        _, E = hard_dtw(D)
        path = torch.from_numpy(np.asarray(E))
        total = total + (path * ((x[b].unsqueeze(1) - y[b].unsqueeze(0)) ** 2).sum(-1)).sum()
    return total
