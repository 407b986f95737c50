"""The warp penalty (Parallel Tacotron 2) and subsequence soft-DTW against a direct float64
implementation of their definitions (reference.sdtw_variant, the numpy form of the C++ reference's
soft_dtw_variant), itself checked against the sum over every path at small sizes. warp without
subsequence runs the fast operators on the cost + 2 warp; subsequence is a composite of torch ops.
The tests marked `cuda` compare CUDA against the CPU."""
import math

import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import sdtw_variant, sqdist, variant_paths

SHAPES = [(1, 1), (1, 5), (6, 1), (4, 4), (5, 7), (9, 3), (3, 8)]
GAMMAS = [0.0, 0.1, 1.0]
WARPS = [0.0, 0.7, -0.3]


def on_cuda(test):
    for mark in requires_cuda:
        test = mark(test)
    return test


def costs(shape, seed, ties=False):
    """A float64 cost; ties=True draws integers from {0, 1, 2}, so many paths share the minimum."""
    g = torch.Generator().manual_seed(seed)
    if ties:
        return torch.randint(0, 3, shape, generator=g).double()
    return torch.rand(shape, generator=g, dtype=torch.float64) * 3


def series(shape, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def value_and_grad(f, *inputs):
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    v = f(*leaves)
    v.sum().backward()
    return (v.detach(),) + tuple(t.grad for t in leaves)


def grad_xy(x, y, E):
    """d/dx and d/dy of <E, sqdist(x, y)>."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return 2 * (x * E.sum(1)[:, None] - E @ y), 2 * (y * E.sum(0)[:, None] - E.T @ x)


@pytest.mark.parametrize("subsequence", [False, True])
@pytest.mark.parametrize("n,m", [(1, 1), (1, 3), (3, 1), (2, 3), (3, 3), (4, 2)])
def test_numpy_reference_is_the_sum_over_paths(n, m, subsequence):
    D = costs((n, m), 100 * n + m).numpy()
    for gamma, warp in [(0.5, 0.0), (0.5, 0.8), (1.3, -0.4), (0.0, 0.8)]:
        path_costs = [sum(D[i, j] for i, j in p) + warp * turns for p, turns in variant_paths(n, m, subsequence)]
        if gamma == 0:
            expected = min(path_costs)
        else:
            lo = min(path_costs)
            expected = lo - gamma * math.log(sum(math.exp(-(c - lo) / gamma) for c in path_costs))
        assert sdtw_variant(D, gamma, warp, subsequence)[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("subsequence", [False, True])
@pytest.mark.parametrize("n,m", SHAPES)
def test_cost_values_and_gradients_match_the_reference(n, m, subsequence):
    D = costs((2, n, m), 7 * n + m)
    for gamma in GAMMAS:
        for warp in WARPS:
            v, gD = value_and_grad(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=gamma, warp=warp,
                                                                      subsequence=subsequence), D)
            for b in range(2):
                value, E, _, _ = sdtw_variant(D[b].numpy(), gamma, warp, subsequence)
                assert v[b].item() == pytest.approx(value, rel=1e-11, abs=1e-11), (gamma, warp)
                np.testing.assert_allclose(gD[b].numpy(), E, rtol=1e-9, atol=1e-11, err_msg=f"{gamma} {warp}")


@pytest.mark.parametrize("subsequence", [False, True])
def test_gamma_zero_breaks_ties_as_the_reference(subsequence):
    for seed, (n, m) in enumerate([(3, 5), (5, 3), (4, 4), (6, 7)]):
        D = costs((n, m), seed, ties=True)
        for warp in [0.0, 1.0, -0.5]:
            v, gD = value_and_grad(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.0, warp=warp,
                                                                      subsequence=subsequence), D)
            value, E, _, _ = sdtw_variant(D.numpy(), 0.0, warp, subsequence)
            assert v.item() == pytest.approx(value, rel=1e-12, abs=1e-12)
            np.testing.assert_array_equal(gD.numpy(), E)


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-9), (torch.float32, 2e-4)])
@pytest.mark.parametrize("fused", [None, False])
@pytest.mark.parametrize("subsequence", [False, True])
def test_series_values_and_gradients_match_the_reference(dtype, tol, fused, subsequence):
    for n, m in [(1, 1), (1, 6), (5, 1), (5, 7), (8, 3)]:
        x, y = series((2, n, 3), n, dtype), series((2, m, 3), 50 + m, dtype)
        for gamma in GAMMAS:
            for warp in WARPS:
                v, gx, gy = value_and_grad(lambda a, b: sdtw_torch.soft_dtw(
                    a, b, gamma=gamma, warp=warp, subsequence=subsequence, fused=fused), x, y)
                assert v.dtype == dtype and gx.dtype == dtype
                for b in range(2):
                    value, E, _, _ = sdtw_variant(sqdist(x[b].double(), y[b].double()), gamma, warp, subsequence)
                    ex, ey = grad_xy(x[b].double(), y[b].double(), E)
                    assert v[b].item() == pytest.approx(value, rel=tol, abs=tol), (n, m, gamma, warp)
                    np.testing.assert_allclose(gx[b].double().numpy(), ex, rtol=tol, atol=tol)
                    np.testing.assert_allclose(gy[b].double().numpy(), ey, rtol=tol, atol=tol)


@pytest.mark.parametrize("subsequence", [False, True])
def test_lengths_compute_each_pair_on_its_own_series(subsequence):
    x, y = series((3, 7, 2), 1), series((3, 9, 2), 2)
    xl, yl = [7, 1, 4], [5, 9, 1]
    # Padding past the lengths is never read: NaN there leaves values and gradients finite.
    x[0, 7:], x[1, 1:], x[2, 4:] = float("nan"), float("nan"), float("nan")
    y[0, 5:], y[2, 1:] = float("nan"), float("nan")
    for gamma, warp in [(0.5, 0.4), (0.0, -0.2), (1.0, 0.0)]:
        v, gx, gy = value_and_grad(lambda a, b: sdtw_torch.soft_dtw(
            a, b, gamma=gamma, warp=warp, subsequence=subsequence, x_lengths=xl, y_lengths=yl), x, y)
        for b in range(3):
            xb, yb = x[b, :xl[b]], y[b, :yl[b]]
            value, E, _, _ = sdtw_variant(sqdist(xb, yb), gamma, warp, subsequence)
            ex, ey = grad_xy(xb, yb, E)
            assert v[b].item() == pytest.approx(value, rel=1e-10, abs=1e-10)
            np.testing.assert_allclose(gx[b, :xl[b]].numpy(), ex, rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(gy[b, :yl[b]].numpy(), ey, rtol=1e-9, atol=1e-10)
            assert not gx[b, xl[b]:].any() and not gy[b, yl[b]:].any()


@pytest.mark.parametrize("subsequence", [False, True])
def test_cost_lengths_ignore_non_finite_padding(subsequence):
    D = costs((2, 5, 6), 3)
    D[0, 3:, :] = float("nan")
    D[1, :, 2:] = float("inf")
    xl, yl = [3, 5], [6, 2]
    v, gD = value_and_grad(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.3, warp=0.5, subsequence=subsequence,
                                                              x_lengths=xl, y_lengths=yl), D)
    for b in range(2):
        value, E, _, _ = sdtw_variant(D[b, :xl[b], :yl[b]].numpy(), 0.3, 0.5, subsequence)
        assert v[b].item() == pytest.approx(value, rel=1e-11)
        np.testing.assert_allclose(gD[b, :xl[b], :yl[b]].numpy(), E, rtol=1e-9, atol=1e-11)
        assert gD[b].isfinite().all() and gD[b].sum().item() == pytest.approx(E.sum(), rel=1e-12)


def band_mask(n, m, k):
    i, j = np.indices((n, m))
    return np.where(np.abs(i - j) <= k, 0.0, np.inf)


def test_warp_with_a_band_or_a_constraint_matches_the_masked_recursion():
    """Forbidden cells (+inf cost) are how the reference reads a band: the identity holds on any set of paths."""
    for n, m, k in [(5, 5, 1), (6, 4, 2), (4, 7, 3), (6, 6, 0)]:
        D = costs((n, m), n * m + k)
        for gamma, warp in [(0.5, 0.6), (0.0, 0.6), (1.0, -0.4)]:
            masked = D.numpy() + band_mask(n, m, k)
            value, E, _, _ = sdtw_variant(masked, gamma, warp)
            # bandwidth 0 means no band (as in pytorch-softdtw-cuda); the radius 0 is the diagonal.
            for keywords in ([dict(bandwidth=k)] if k else []) + ([dict(sakoe_chiba_radius=k)] if n == m else []):
                v, gD = value_and_grad(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=gamma, warp=warp, **keywords), D)
                assert v.item() == pytest.approx(value, rel=1e-11), keywords
                np.testing.assert_allclose(gD.numpy(), E, rtol=1e-9, atol=1e-11)


def test_warp_with_normalize_applies_it_to_the_three_terms():
    x, y = series((2, 5, 3), 4), series((2, 8, 3), 5)
    xl, yl = [5, 3], [8, 6]
    for gamma, warp in [(0.5, 0.7), (0.0, -0.2)]:
        v, gx, gy = value_and_grad(lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=gamma, warp=warp, normalize=True,
                                                                    x_lengths=xl, y_lengths=yl), x, y)
        for b in range(2):
            xb, yb = x[b, :xl[b]], y[b, :yl[b]]
            vxy, Exy, _, _ = sdtw_variant(sqdist(xb, yb), gamma, warp)
            vxx, Exx, _, _ = sdtw_variant(sqdist(xb, xb), gamma, warp)
            vyy, Eyy, _, _ = sdtw_variant(sqdist(yb, yb), gamma, warp)
            gxy = grad_xy(xb, yb, Exy)
            gxx, gyy = sum(grad_xy(xb, xb, Exx)), sum(grad_xy(yb, yb, Eyy))
            assert v[b].item() == pytest.approx(vxy - (vxx + vyy) / 2, rel=1e-10, abs=1e-10)
            np.testing.assert_allclose(gx[b, :xl[b]].numpy(), gxy[0] - gxx / 2, rtol=1e-9, atol=1e-10)
            np.testing.assert_allclose(gy[b, :yl[b]].numpy(), gxy[1] - gyy / 2, rtol=1e-9, atol=1e-10)


def test_warp_is_the_offset_identity_on_the_unpenalised_loss():
    """soft-DTW_warp(D) = soft-DTW(D + 2 warp) - warp (n + m), the identity the warp path rests on, here
    against the direct recursion with the penalty inside the moves (no identity used on either side)."""
    for n, m in SHAPES:
        D = costs((n, m), 11 * n + m).numpy()
        for gamma in GAMMAS:
            for warp in [0.7, -0.3, 2.5]:
                direct, E, _, _ = sdtw_variant(D, gamma, warp)
                shifted, E_shifted, _, _ = sdtw_variant(D + 2 * warp, gamma, 0.0)
                assert direct == pytest.approx(shifted - warp * (n + m), rel=1e-12, abs=1e-12)
                np.testing.assert_allclose(E, E_shifted, rtol=1e-10, atol=1e-12)


def test_warp_of_a_callable_dist_and_of_named_dists():
    x, y = series((2, 4, 3), 6), series((2, 6, 3), 7)
    for subsequence in [False, True]:
        for dist in ["l1", "cosine", "euclidean", "negative_dot"]:
            D = sdtw_torch.pairwise_cost(x, y, dist)
            named = sdtw_torch.soft_dtw(x, y, dist=dist, gamma=0.4, warp=0.3, subsequence=subsequence)
            for b in range(2):
                assert named[b].item() == pytest.approx(sdtw_variant(D[b].numpy(), 0.4, 0.3, subsequence)[0],
                                                        rel=1e-10), dist
        called = sdtw_torch.soft_dtw(x, y, dist=lambda a, b: torch.cdist(a, b) ** 2, gamma=0.4, warp=0.3,
                                     subsequence=subsequence)
        named = sdtw_torch.soft_dtw(x, y, gamma=0.4, warp=0.3, subsequence=subsequence)
        torch.testing.assert_close(called, named, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n,m", SHAPES)
def test_subsequence_end_matches_the_reference(n, m):
    D = costs((2, n, m), 3 * n + m)
    for gamma in GAMMAS:
        for warp in WARPS:
            end, expected_end = sdtw_torch.subsequence_end_from_cost(D, gamma=gamma, warp=warp)
            for b in range(2):
                _, _, ref_end, ref_expected = sdtw_variant(D[b].numpy(), gamma, warp, True)
                np.testing.assert_allclose(end[b].numpy(), ref_end, rtol=1e-10, atol=1e-12)
                assert expected_end[b].item() == pytest.approx(ref_expected, rel=1e-10, abs=1e-12)


def test_subsequence_end_at_gamma_zero_is_the_first_optimal_column():
    D = costs((5, 9), 8, ties=True)
    end, expected_end = sdtw_torch.subsequence_end_from_cost(D, gamma=0.0)
    _, _, ref_end, ref_expected = sdtw_variant(D.numpy(), 0.0, 0.0, True)
    np.testing.assert_array_equal(end.numpy(), ref_end)
    assert expected_end.item() == ref_expected == float(np.argmax(ref_end))


def test_subsequence_end_finds_a_planted_query():
    """x planted at columns 11..16 of a longer y: the end is column 16, sharply at small gamma."""
    y = series((40, 2), 9)
    x = y[11:17].clone()
    end, expected_end = sdtw_torch.subsequence_end(x, y, gamma=0.01)
    assert end.shape == (40,) and end.sum().item() == pytest.approx(1.0, rel=1e-12)
    assert expected_end.item() == pytest.approx(16.0, abs=1e-3)
    assert sdtw_torch.soft_dtw(x, y, gamma=0.0, subsequence=True).item() == 0.0


def test_subsequence_end_with_lengths_and_dists():
    x, y = series((2, 3, 2), 12), series((2, 8, 2), 13)
    end, expected_end = sdtw_torch.subsequence_end(x, y, gamma=0.2, warp=0.1, x_lengths=[3, 2], y_lengths=[8, 5])
    for b, (n, m) in enumerate([(3, 8), (2, 5)]):
        _, _, ref_end, ref_expected = sdtw_variant(sqdist(x[b, :n], y[b, :m]), 0.2, 0.1, True)
        np.testing.assert_allclose(end[b, :m].numpy(), ref_end, rtol=1e-10, atol=1e-12)
        assert not end[b, m:].any()
        assert expected_end[b].item() == pytest.approx(ref_expected, rel=1e-10)
    called = sdtw_torch.subsequence_end(x, y, gamma=0.2, dist=lambda a, b: torch.cdist(a, b, p=1))
    named = sdtw_torch.subsequence_end(x, y, gamma=0.2, dist="l1")
    torch.testing.assert_close(called.end, named.end, rtol=1e-10, atol=1e-12)


def test_gradcheck_float64():
    x, y = series((2, 4, 2), 14).requires_grad_(True), series((2, 6, 2), 15).requires_grad_(True)
    xl = torch.tensor([4, 3])
    for subsequence in [False, True]:
        for warp in [0.5, -0.3]:
            assert torch.autograd.gradcheck(lambda a, b: sdtw_torch.soft_dtw(
                a, b, gamma=0.7, warp=warp, subsequence=subsequence, x_lengths=xl), (x, y))
    D = costs((2, 4, 5), 16).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda d: sdtw_torch.subsequence_end_from_cost(d, gamma=0.5, warp=0.2), (D,))


def test_second_order_gradgradcheck_float64():
    """create_graph=True: warp through the cost operator's Hessian-vector product, subsequence through
    the composite's own ops."""
    D = costs((2, 4, 5), 26).requires_grad_(True)
    for subsequence in [False, True]:
        assert torch.autograd.gradgradcheck(lambda d: sdtw_torch.soft_dtw_cost(
            d, gamma=0.6, warp=0.4, subsequence=subsequence, x_lengths=[4, 3]), (D,))


def test_module_and_unbatched_calls():
    x, y = series((5, 2), 17), series((8, 2), 18)
    loss = sdtw_torch.SoftDTW(gamma=0.3, warp=0.4, subsequence=True)
    assert "warp=0.4" in repr(loss) and "subsequence=True" in repr(loss)
    v = loss(x, y)
    assert v.shape == ()
    assert v.item() == pytest.approx(sdtw_variant(sqdist(x, y), 0.3, 0.4, True)[0], rel=1e-11)
    batched = sdtw_torch.SoftDTW(gamma=0.3, warp=0.4, reduction="sum")(x[None], y[None])
    assert batched.item() == pytest.approx(sdtw_variant(sqdist(x, y), 0.3, 0.4)[0], rel=1e-11)


@pytest.mark.parametrize("call,match", [
    (dict(warp=float("inf")), r"warp must be finite \(got inf\)"),
    (dict(warp=float("nan")), r"warp must be finite \(got nan\)"),
    (dict(warp=0.5, fused=True), r"fused=True does not apply with warp != 0 \(got warp=0.5"),
    (dict(subsequence=True, fused=True), r"fused=True does not apply with subsequence=True"),
    (dict(subsequence=True, bandwidth=2), r"subsequence=True takes no band or global constraint \(got bandwidth 2\)"),
    (dict(subsequence=True, sakoe_chiba_radius=1), r"subsequence=True takes no band .*sakoe_chiba_radius=1"),
    (dict(subsequence=True, global_constraint="itakura"), r"subsequence=True takes no band .*itakura"),
    (dict(subsequence=True, normalize=True), r"normalize=True does not apply with subsequence=True"),
])
def test_bad_arguments_name_the_parameter(call, match):
    x, y = series((1, 4, 2), 19), series((1, 6, 2), 20)
    with pytest.raises(ValueError, match=match):
        sdtw_torch.soft_dtw(x, y, **call)
    with pytest.raises(ValueError, match=match):
        sdtw_torch.SoftDTW(**call)


def test_bad_argument_types_and_the_end_functions_refusals():
    x, y = series((4, 2), 21), series((6, 2), 22)
    with pytest.raises(TypeError, match="warp must be a real number"):
        sdtw_torch.soft_dtw(x, y, warp="0.5")
    with pytest.raises(TypeError, match="subsequence must be True or False"):
        sdtw_torch.soft_dtw(x, y, subsequence="yes")
    with pytest.raises(ValueError, match=r"warp must be finite \(got inf\)"):
        sdtw_torch.subsequence_end(x, y, warp=math.inf)
    with pytest.raises(ValueError, match=r"gamma must be finite and >= 0 \(got -1"):
        sdtw_torch.subsequence_end_from_cost(sqdist_tensor(x, y), gamma=-1.0)
    with pytest.raises(ValueError, match=r"x_lengths"):
        sdtw_torch.soft_dtw(x[None], y[None], subsequence=True, x_lengths=[5])


def sqdist_tensor(x, y):
    return torch.as_tensor(sqdist(x, y))


@on_cuda
@pytest.mark.parametrize("subsequence", [False, True])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-10), (torch.float32, 1e-4)])
def test_cuda_matches_cpu(subsequence, dtype, tol):
    x, y = series((3, 9, 4), 23, dtype), series((3, 13, 4), 24, dtype)
    xl, yl = torch.tensor([9, 4, 1]), torch.tensor([13, 13, 6])
    for gamma in GAMMAS:
        for warp in WARPS:
            def f(a, b):
                return sdtw_torch.soft_dtw(a, b, gamma=gamma, warp=warp, subsequence=subsequence, x_lengths=xl,
                                           y_lengths=yl)
            cpu = value_and_grad(f, x, y)
            gpu = value_and_grad(lambda a, b: f(a, b), x.cuda(), y.cuda())
            for c, g in zip(cpu, gpu):
                torch.testing.assert_close(g.cpu(), c, rtol=tol, atol=tol)


@on_cuda
def test_cuda_subsequence_end_and_device_lengths_match_cpu():
    D = costs((3, 6, 11), 25)
    xl, yl = torch.tensor([6, 2, 5]), torch.tensor([11, 7, 3])
    for gamma in GAMMAS:
        cpu = sdtw_torch.subsequence_end_from_cost(D, gamma=gamma, warp=0.3, x_lengths=xl, y_lengths=yl)
        gpu = sdtw_torch.subsequence_end_from_cost(D.cuda(), gamma=gamma, warp=0.3, x_lengths=xl.cuda(),
                                                   y_lengths=yl.cuda())
        torch.testing.assert_close(gpu.end.cpu(), cpu.end, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(gpu.expected_end.cpu(), cpu.expected_end, rtol=1e-10, atol=1e-12)


def test_tslearns_documented_subsequence_example():
    """tslearn: dtw_subsequence_path([2., 3.], [1., 2., 2., 3., 4.]) -> path [(0, 2), (1, 3)], dist 0.0."""
    x, y = torch.tensor([[2.0], [3.0]], dtype=torch.float64), torch.tensor([[1.0], [2.0], [2.0], [3.0], [4.0]],
                                                                           dtype=torch.float64)
    assert sdtw_torch.soft_dtw(x, y, gamma=0.0, subsequence=True).item() == 0.0
    assert sdtw_torch.subsequence_end(x, y, gamma=0.0).expected_end.item() == 3.0
