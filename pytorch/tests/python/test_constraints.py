"""tslearn's global constraints (Sakoe-Chiba radius, Itakura slope) in every API, against numpy
transcriptions of tslearn's masks and the numpy soft-DTW (reference.py) on costs set to +inf
outside the mask, each pair's mask from its own lengths; marked `cuda`, the GPU against the CPU."""

import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import all_paths, sdtw, sqdist


def sakoe_chiba_mask(n, m, radius):
    """tslearn.metrics.sakoe_chiba_mask, True where a cell may be aligned."""
    mask = np.zeros((n, m), dtype=bool)
    if n > m:
        width = n - m + radius
        for k in range(m):
            mask[max(0, k - radius):min(n, k + width) + 1, k] = True
    else:
        width = m - n + radius
        for k in range(n):
            mask[k, max(0, k - radius):min(m, k + width) + 1] = True
    return mask


def itakura_mask(n, m, max_slope):
    """tslearn.metrics.itakura_mask (numpy's round is numba's: rint(x * 100) / 100)."""
    steep, shallow = max_slope * (n / m), (1 / max_slope) * (n / m)
    j = np.arange(m, dtype=np.float64)
    lower = np.ceil(np.maximum(np.round(shallow * j, 2), np.round((n - 1) - steep * (m - 1) + steep * j, 2)))
    upper = np.floor(np.minimum(np.round(steep * j, 2), np.round((n - 1) - shallow * (m - 1) + shallow * j, 2)) + 1)
    mask = np.zeros((n, m), dtype=bool)
    for k in range(m):
        mask[int(lower[k]):int(upper[k]), k] = True
    return mask


def mask_of(kind, n, m, parameter):
    return sakoe_chiba_mask(n, m, parameter) if kind == "sakoe_chiba" else itakura_mask(n, m, parameter)


def keywords(kind, parameter):
    name = "sakoe_chiba_radius" if kind == "sakoe_chiba" else "itakura_max_slope"
    return {"global_constraint": kind, name: parameter}


def feasible(mask):
    return any(all(mask[i, j] for i, j in path) for path in all_paths(*mask.shape))


def masked(D, mask):
    return np.where(mask, D, np.inf)


CONSTRAINTS = [("sakoe_chiba", 0), ("sakoe_chiba", 1), ("sakoe_chiba", 3), ("itakura", 2.0), ("itakura", 1.5),
               ("itakura", 3.0)]
SHAPES = [(1, 1), (1, 4), (4, 1), (5, 5), (4, 7), (7, 4), (9, 6), (6, 10), (8, 8)]


def cases():
    for kind, parameter in CONSTRAINTS:
        for n, m in SHAPES:
            if feasible(mask_of(kind, n, m, parameter)):
                yield kind, parameter, n, m


@pytest.mark.parametrize("kind,parameter,n,m", list(cases()))
def test_cost_value_and_alignment_are_the_reference_on_masked_costs(kind, parameter, n, m):
    g = torch.Generator().manual_seed(n * 100 + m)
    D = torch.rand(n, m, generator=g, dtype=torch.float64) * 3
    want_value, want_E = sdtw(masked(D.numpy(), mask_of(kind, n, m, parameter)), 0.7)
    Dg = D.clone().requires_grad_(True)
    value = sdtw_torch.soft_dtw_cost(Dg, gamma=0.7, **keywords(kind, parameter))
    value.backward()
    assert value.item() == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(Dg.grad.numpy(), want_E, rtol=1e-10, atol=1e-12)
    E = sdtw_torch.alignment_from_cost(D, gamma=0.7, **keywords(kind, parameter))
    np.testing.assert_allclose(E.numpy(), want_E, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind,parameter,n,m", list(cases()))
def test_fused_value_and_gradients_are_the_reference(kind, parameter, n, m):
    g = torch.Generator().manual_seed(7 * n + m)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64, requires_grad=True)
    y = torch.randn(m, 3, generator=g, dtype=torch.float64, requires_grad=True)
    mask = mask_of(kind, n, m, parameter)
    want_value, E = sdtw(masked(sqdist(x.detach(), y.detach()), mask), 0.5)
    value = sdtw_torch.soft_dtw(x, y, gamma=0.5, **keywords(kind, parameter))
    value.backward()
    xn, yn = x.detach().numpy(), y.detach().numpy()
    assert value.item() == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 2 * (xn * E.sum(1)[:, None] - E @ yn), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), 2 * (yn * E.sum(0)[:, None] - E.T @ xn), rtol=1e-9, atol=1e-12)


def test_each_pair_takes_the_mask_of_its_own_lengths():
    # Padded to (8, 9): tslearn's masks depend on the lengths, so a pair's value is that of its
    # unpadded series, not of the padded mask's corner.
    g = torch.Generator().manual_seed(11)
    x, y = torch.randn(4, 8, 2, generator=g, dtype=torch.float64), torch.randn(4, 9, 2, generator=g, dtype=torch.float64)
    xl, yl = [8, 5, 3, 6], [9, 9, 4, 6]
    for kind, parameter in [("sakoe_chiba", 1), ("itakura", 2.0)]:
        got = sdtw_torch.soft_dtw(x, y, gamma=0.3, x_lengths=xl, y_lengths=yl, **keywords(kind, parameter))
        for b in range(4):
            a, c = x[b, :xl[b]].numpy(), y[b, :yl[b]].numpy()
            want, _ = sdtw(masked(sqdist(a, c), mask_of(kind, xl[b], yl[b], parameter)), 0.3)
            assert got[b].item() == pytest.approx(want, rel=1e-12), (kind, b)


def test_radius_alone_implies_sakoe_chiba_and_slope_alone_implies_itakura():
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(2, 6, 2, generator=g), torch.randn(2, 9, 2, generator=g)
    named = sdtw_torch.soft_dtw(x, y, global_constraint="sakoe_chiba", sakoe_chiba_radius=2)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, sakoe_chiba_radius=2), named, rtol=0, atol=0)
    named = sdtw_torch.soft_dtw(x, y, global_constraint="itakura", itakura_max_slope=3.0)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, itakura_max_slope=3.0), named, rtol=0, atol=0)
    # tslearn's defaults: radius 1, slope 2.
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, global_constraint="sakoe_chiba"),
                               sdtw_torch.soft_dtw(x, y, sakoe_chiba_radius=1), rtol=0, atol=0)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, global_constraint="itakura"),
                               sdtw_torch.soft_dtw(x, y, itakura_max_slope=2.0), rtol=0, atol=0)


def test_radius_zero_with_equal_lengths_is_the_diagonal_alone():
    # One path: its cost, exactly, whatever gamma.
    D = torch.rand(2, 6, 6, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    value = sdtw_torch.soft_dtw_cost(D, gamma=10.0, sakoe_chiba_radius=0)
    torch.testing.assert_close(value, D.diagonal(dim1=1, dim2=2).sum(-1), rtol=1e-15, atol=0)
    E = sdtw_torch.alignment_from_cost(D, gamma=10.0, sakoe_chiba_radius=0)
    torch.testing.assert_close(E, torch.eye(6, dtype=torch.float64).expand(2, 6, 6), rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind,parameter", [("sakoe_chiba", 1), ("itakura", 2.0)])
def test_gamma_zero_is_the_best_path_inside_the_mask(kind, parameter):
    for n, m in [(4, 6), (6, 4), (5, 5)]:
        mask = mask_of(kind, n, m, parameter)
        D = torch.rand(n, m, generator=torch.Generator().manual_seed(n + 10 * m), dtype=torch.float64)
        best = min(sum(D[i, j].item() for i, j in p) for p in all_paths(n, m) if all(mask[i, j] for i, j in p))
        value = sdtw_torch.soft_dtw_cost(D, gamma=0, **keywords(kind, parameter))
        assert value.item() == pytest.approx(best, rel=1e-14)
        E = sdtw_torch.alignment_from_cost(D, gamma=0, **keywords(kind, parameter)).numpy()
        assert not E[~mask].any() and (E.sum() >= max(n, m))


def test_module_cdist_and_alignment_take_the_constraint():
    g = torch.Generator().manual_seed(9)
    X, Y = torch.randn(3, 7, 2, generator=g, dtype=torch.float64), torch.randn(2, 5, 2, generator=g, dtype=torch.float64)
    kw = keywords("itakura", 1.5)
    loss = sdtw_torch.SoftDTW(gamma=0.2, **kw)
    assert "itakura_max_slope=1.5" in repr(loss)
    got = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.2, **kw)
    for i in range(3):
        for j in range(2):
            want, _ = sdtw(masked(sqdist(X[i], Y[j]), itakura_mask(7, 5, 1.5)), 0.2)
            assert got[i, j].item() == pytest.approx(want, rel=1e-12)
            assert loss(X[i], Y[j]).item() == pytest.approx(want, rel=1e-12)
    with torch.no_grad():  # the values-only path through the pairs operator
        torch.testing.assert_close(sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.2, **kw), got, rtol=1e-12, atol=0)
    _, want_E = sdtw(masked(sqdist(X[0], Y[1]), itakura_mask(7, 5, 1.5)), 0.2)
    np.testing.assert_allclose(sdtw_torch.alignment(X[0], Y[1], gamma=0.2, **kw).numpy(), want_E, rtol=1e-10,
                               atol=1e-12)


def test_dilate_takes_the_constraint():
    g = torch.Generator().manual_seed(8)
    out, target = torch.randn(2, 6, 1, generator=g, dtype=torch.float64), torch.randn(2, 8, 1, generator=g, dtype=torch.float64)
    kw = keywords("sakoe_chiba", 1)
    loss = sdtw_torch.dilate(out, target, alpha=0.5, gamma=0.1, reduction="none", **kw)
    D = sdtw_torch.pairwise_cost(out, target)
    torch.testing.assert_close(loss.shape, sdtw_torch.soft_dtw_cost(D, gamma=0.1, **kw), rtol=0, atol=0)
    Omega = sdtw_torch.dilate_omega(6, 8, dtype=torch.float64)
    temporal = (sdtw_torch.alignment_from_cost(D, gamma=0.1, **kw) * Omega).sum((-2, -1))
    torch.testing.assert_close(loss.temporal, temporal, rtol=0, atol=0)


def test_second_order_respects_the_constraint():
    D = torch.rand(2, 5, 7, generator=torch.Generator().manual_seed(2), dtype=torch.float64).requires_grad_(True)
    kw = keywords("sakoe_chiba", 1)
    assert torch.autograd.gradgradcheck(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.5, **kw).sum(), (D,))
    # Cells outside the mask carry no alignment, so no second derivative either.
    E = sdtw_torch.alignment_from_cost(D, gamma=0.5, **kw)
    (H,) = torch.autograd.grad(E.sum(), D)
    outside = torch.from_numpy(~sakoe_chiba_mask(5, 7, 1))
    assert H[:, outside].abs().max().item() == 0.0


def test_a_constraint_without_a_path_is_a_value_error_naming_it():
    x, y = torch.randn(3, 2), torch.randn(12, 2)
    with pytest.raises(ValueError, match=r"global_constraint='itakura' with itakura_max_slope=2 leaves no alignment "
                                         r"path for N = 3, M = 12"):
        sdtw_torch.soft_dtw(x, y, global_constraint="itakura")
    xb, yb = torch.randn(2, 12, 2), torch.randn(2, 12, 2)
    with pytest.raises(ValueError, match=r"leaves no alignment path for pair 1 \(x_lengths = 3, y_lengths = 12\)"):
        sdtw_torch.soft_dtw(xb, yb, itakura_max_slope=2.0, x_lengths=[12, 3], y_lengths=[12, 12])


@pytest.mark.parametrize("kwargs,message", [
    (dict(global_constraint="band"), "global_constraint must be None, 'sakoe_chiba' or 'itakura' \\(got 'band'\\)"),
    (dict(sakoe_chiba_radius=-1), "sakoe_chiba_radius must be >= 0 \\(got -1\\)"),
    (dict(itakura_max_slope=0.0), "itakura_max_slope must be finite and > 0 \\(got 0\\)"),
    (dict(global_constraint="itakura", sakoe_chiba_radius=2), "sakoe_chiba_radius applies to global_constraint='"),
    (dict(global_constraint="sakoe_chiba", itakura_max_slope=2.0), "itakura_max_slope applies to global_constraint"),
    (dict(sakoe_chiba_radius=1, itakura_max_slope=2.0), "sakoe_chiba_radius and itakura_max_slope are two"),
    (dict(bandwidth=2, sakoe_chiba_radius=1), "are three constraints: give at most one"),
])
def test_bad_constraint_arguments_are_named(kwargs, message):
    x = torch.randn(4, 2)
    with pytest.raises(ValueError, match=message):
        sdtw_torch.soft_dtw(x, x, **kwargs)
    with pytest.raises(ValueError, match=message):
        sdtw_torch.SoftDTW(**kwargs)


def test_keyword_types_are_checked():
    x = torch.randn(4, 2)
    with pytest.raises(TypeError, match="sakoe_chiba_radius must be an integer"):
        sdtw_torch.soft_dtw(x, x, sakoe_chiba_radius=1.5)
    with pytest.raises(TypeError, match="global_constraint must be a string"):
        sdtw_torch.soft_dtw(x, x, global_constraint=1)


def on_cuda(test):
    for mark in requires_cuda:
        test = mark(test)
    return test


@on_cuda
@pytest.mark.parametrize("kind,parameter", [("sakoe_chiba", 0), ("sakoe_chiba", 2), ("itakura", 2.0),
                                            ("itakura", 1.3)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_equals_the_cpu(kind, parameter, dtype):
    g = torch.Generator().manual_seed(21)
    # N != M, strips of 32 rows and more, and lengths that change each pair's mask.
    x, y = torch.randn(5, 70, 3, generator=g, dtype=dtype), torch.randn(5, 62, 3, generator=g, dtype=dtype)
    xl, yl = torch.tensor([70, 64, 33, 40, 1]), torch.tensor([62, 60, 40, 40, 1])  # a path for each constraint
    kw = dict(gamma=0.4, x_lengths=xl, y_lengths=yl, **keywords(kind, parameter))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)
    results = {}
    for device in ("cpu", "cuda"):
        a, b = x.to(device).detach().requires_grad_(True), y.to(device).detach().requires_grad_(True)
        values = sdtw_torch.soft_dtw(a, b, **kw)
        values.sum().backward()
        D = sdtw_torch.pairwise_cost(a.detach(), b.detach())
        with torch.no_grad():
            values_only = sdtw_torch.soft_dtw(a, b, **kw)
        results[device] = [values, a.grad, b.grad, values_only,
                           sdtw_torch.soft_dtw_cost(D, **kw), sdtw_torch.alignment_from_cost(D, **kw)]
    for cpu, cuda in zip(results["cpu"], results["cuda"]):
        torch.testing.assert_close(cuda.cpu(), cpu, **tol)


@on_cuda
def test_cuda_cdist_and_second_order_equal_the_cpu():
    g = torch.Generator().manual_seed(4)
    X, Y = torch.randn(4, 40, 2, generator=g, dtype=torch.float64), torch.randn(3, 50, 2, generator=g, dtype=torch.float64)
    kw = keywords("itakura", 2.0)
    with torch.no_grad():
        torch.testing.assert_close(sdtw_torch.cdist_soft_dtw(X.cuda(), Y.cuda(), **kw).cpu(),
                                   sdtw_torch.cdist_soft_dtw(X, Y, **kw), rtol=1e-10, atol=1e-10)
    D = torch.rand(2, 20, 30, generator=g, dtype=torch.float64)
    G = torch.rand(2, 20, 30, generator=g, dtype=torch.float64)
    products = []
    for device in ("cpu", "cuda"):
        Dd = D.to(device).detach().requires_grad_(True)
        E = sdtw_torch.alignment_from_cost(Dd, gamma=0.5, **keywords("sakoe_chiba", 3))
        products.append(torch.autograd.grad((E * G.to(device)).sum(), Dd)[0].cpu())
    torch.testing.assert_close(products[1], products[0], rtol=1e-9, atol=1e-12)


@on_cuda
def test_cuda_lengths_on_the_device_without_a_path_give_inf():
    x, y = torch.randn(2, 12, 2, device="cuda"), torch.randn(2, 12, 2, device="cuda")
    values = sdtw_torch.soft_dtw(x, y, itakura_max_slope=2.0, x_lengths=torch.tensor([12, 3], device="cuda"),
                                 y_lengths=torch.tensor([12, 12], device="cuda"))
    assert torch.isfinite(values[0]) and values[1].item() == float("inf")
