"""Second order: the loss's backward is differentiable (create_graph=True) and the alignment E has a
gradient, both Hessian-vector products of soft-DTW. Checked by gradgradcheck in float64 and against
central differences of the independent numpy reference's E (reference.py); on CUDA, against the CPU
and by gradgradcheck (tests skipped, by name, without a GPU)."""
import numpy as np
import pytest
import torch
from torch.autograd import gradcheck, gradgradcheck

import reference
import sdtw_torch
from conftest import requires_cuda

F64 = torch.float64


def randn(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


def leaf(t):
    return t.detach().clone().requires_grad_(True)


# (x shape, y shape, keywords): N != M, N = 1, unbatched, lengths, a band, lengths with a band.
SERIES_CASES = [
    ((2, 4, 2), (2, 3, 2), {}),
    ((2, 1, 2), (2, 3, 2), {}),
    ((4, 2), (5, 2), {}),
    ((2, 5, 1), (2, 4, 1), {"x_lengths": [3, 5], "y_lengths": [4, 2]}),
    ((2, 5, 2), (2, 4, 2), {"bandwidth": 1}),
    ((2, 5, 1), (2, 4, 1), {"bandwidth": 1, "x_lengths": [4, 5], "y_lengths": [3, 4]}),
]


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("x_shape,y_shape,keywords", SERIES_CASES)
def test_gradgradcheck_series(fused, normalize, x_shape, y_shape, keywords):
    x, y = leaf(randn(*x_shape, seed=1)), leaf(randn(*y_shape, seed=2))

    def loss(x, y):
        return sdtw_torch.soft_dtw(x, y, gamma=0.7, fused=fused, normalize=normalize, **keywords)

    assert gradgradcheck(loss, (x, y))


def l1_cost(a, b):
    """A callable dist: its cost reaches the cost-tensor loss."""
    return (a.unsqueeze(-2) - b.unsqueeze(-3)).abs().sum(-1)


@pytest.mark.parametrize("dist", ["euclidean", "cosine", l1_cost], ids=["euclidean", "cosine", "callable_l1"])
def test_gradgradcheck_other_costs(dist):
    x, y = leaf(randn(2, 4, 2, seed=28)), leaf(randn(2, 3, 2, seed=29))
    assert gradgradcheck(lambda x, y: sdtw_torch.soft_dtw(x, y, gamma=0.7, dist=dist, normalize=True), (x, y))


COST_CASES = [
    ((2, 4, 3), {}),
    ((2, 1, 4), {}),
    ((3, 3), {}),
    ((2, 5, 4), {"x_lengths": [2, 5], "y_lengths": [4, 3]}),
    ((2, 5, 4), {"bandwidth": 1}),
]


@pytest.mark.parametrize("shape,keywords", COST_CASES)
def test_gradgradcheck_cost(shape, keywords):
    D = leaf(randn(*shape, seed=3).abs())
    assert gradgradcheck(lambda D: sdtw_torch.soft_dtw_cost(D, gamma=0.5, **keywords), (D,))
    assert gradcheck(lambda D: sdtw_torch.alignment_from_cost(D, gamma=0.5, **keywords), (D,))


def test_gradcheck_alignment_of_series_and_callable_dist():
    x, y = leaf(randn(2, 4, 2, seed=4)), leaf(randn(2, 5, 2, seed=5))
    assert gradcheck(lambda x, y: sdtw_torch.alignment(x, y, gamma=0.5, x_lengths=[4, 3]), (x, y))
    assert gradcheck(lambda x, y: sdtw_torch.alignment(x, y, gamma=0.5, dist=l1_cost), (x, y))


def block_E(D, gamma, bandwidth, n, m):
    """The numpy reference's E of D's first n x m block, zero-padded to D's shape."""
    E = np.zeros(D.shape)
    E[:n, :m] = reference.sdtw(D[:n, :m], gamma, bandwidth)[1]
    return E


@pytest.mark.parametrize("bandwidth,lengths", [(None, None), (2, None), (None, ([5, 3], [4, 4]))])
def test_double_backward_matches_central_differences_of_reference_E(bandwidth, lengths):
    """d/dt E(D + t V) at t = 0, by the reference, against the gradient of <g E(D), V> in D."""
    gamma, h = 0.4, 1e-5
    D0, V, g = randn(2, 5, 4, seed=6).abs(), randn(2, 5, 4, seed=7), torch.tensor([0.7, -1.3], dtype=F64)
    x_lengths, y_lengths = lengths or ([5, 5], [4, 4])
    D = leaf(D0)
    values = sdtw_torch.soft_dtw_cost(D, gamma=gamma, bandwidth=bandwidth, x_lengths=x_lengths, y_lengths=y_lengths)
    (grad,) = torch.autograd.grad(values, D, g, create_graph=True)
    (hvp,) = torch.autograd.grad(grad, D, V)
    for b in range(2):
        n, m = x_lengths[b], y_lengths[b]
        Dp, Dm = (D0[b] + h * V[b]).numpy(), (D0[b] - h * V[b]).numpy()
        expected = g[b].item() * (block_E(Dp, gamma, bandwidth, n, m) - block_E(Dm, gamma, bandwidth, n, m)) / (2 * h)
        np.testing.assert_allclose(hvp[b].numpy(), expected, rtol=1e-6, atol=1e-8)
    assert hvp.abs().max() > 0.1  # a real second derivative, not a vanishing one


def test_fused_double_backward_matches_central_differences_of_reference_gradient():
    """d/dt grad_x sdtw(x + t u, y) at t = 0 by the reference, against the fused double backward."""
    gamma, h = 0.5, 1e-5
    x0, y0, u = randn(6, 2, seed=8), randn(4, 2, seed=9), randn(6, 2, seed=10)
    x, y = leaf(x0), leaf(y0)
    (gx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, gamma=gamma, fused=True), x, create_graph=True)
    (hvp_x, hvp_y) = torch.autograd.grad(gx, (x, y), u)
    plus, minus = reference.sdtw_xy(x0 + h * u, y0, gamma), reference.sdtw_xy(x0 - h * u, y0, gamma)
    np.testing.assert_allclose(hvp_x.numpy(), (plus[1] - minus[1]) / (2 * h), rtol=1e-6, atol=1e-8)
    # d/dy <grad_x, u> = d/dt grad_y sdtw(x + t u, y): mixed second derivatives are symmetric.
    np.testing.assert_allclose(hvp_y.numpy(), (plus[2] - minus[2]) / (2 * h), rtol=1e-6, atol=1e-8)


def test_alignment_gradient_matches_central_differences_of_reference():
    """The gradient of <G, E(x, y)> in x against central differences of the reference's <G, E>."""
    gamma, h = 0.5, 1e-6
    x0, y0, G = randn(5, 3, seed=12), randn(4, 3, seed=13), randn(5, 4, seed=14)
    x = leaf(x0)
    (grad,) = torch.autograd.grad((sdtw_torch.alignment(x, y0, gamma=gamma) * G).sum(), x)

    def inner(xv):
        return (reference.sdtw(reference.sqdist(xv, y0.numpy()), gamma)[1] * G.numpy()).sum()

    expected = np.zeros(x0.shape)
    for index in np.ndindex(*x0.shape):
        step = np.zeros(x0.shape)
        step[index] = h
        expected[index] = (inner(x0.numpy() + step) - inner(x0.numpy() - step)) / (2 * h)
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fused", [True, False])
def test_float32_double_backward_agrees_with_float64(fused):
    x64, y64, u = randn(2, 6, 2, seed=15), randn(2, 5, 2, seed=16), randn(2, 6, 2, seed=17)
    results = []
    for dtype in (torch.float32, F64):
        x, y = leaf(x64.to(dtype)), leaf(y64.to(dtype))
        (gx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, gamma=0.5, fused=fused).sum(), x, create_graph=True)
        (hvp,) = torch.autograd.grad(gx, x, u.to(dtype))
        assert gx.dtype == hvp.dtype == dtype
        results.append(hvp.double())
    torch.testing.assert_close(results[0], results[1], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fused", [True, False])
def test_non_finite_pair_gives_nan_second_derivatives_in_its_pair_only(fused):
    x0, y0, u = randn(3, 5, 2, seed=18), randn(3, 4, 2, seed=19), randn(3, 5, 2, seed=20)
    bad = x0.clone()
    bad[1, 2, 0] = float("nan")
    hvps = []
    for series in (x0, bad):
        x, y = leaf(series), leaf(y0)
        (gx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, gamma=0.5, fused=fused).sum(), x, create_graph=True)
        hvps.append(torch.autograd.grad(gx, x, u)[0])
    clean, dirty = hvps
    assert torch.isnan(dirty[1]).all()
    torch.testing.assert_close(dirty[[0, 2]], clean[[0, 2]], rtol=0, atol=0)


def test_non_finite_upstream_gradient_of_alignment_is_nan_in_its_pair():
    D = leaf(randn(2, 4, 3, seed=21).abs())
    G = randn(2, 4, 3, seed=22)
    G[0, 1, 1] = float("inf")
    (grad,) = torch.autograd.grad(sdtw_torch.alignment_from_cost(D, gamma=0.5), D, G)
    assert torch.isnan(grad[0]).all() and torch.isfinite(grad[1]).all()


def test_third_order_is_an_error_naming_the_operator():
    D = leaf(randn(2, 4, 3, seed=23).abs())
    (grad,) = torch.autograd.grad(sdtw_torch.soft_dtw_cost(D).sum(), D, create_graph=True)
    (hvp,) = torch.autograd.grad(grad, D, torch.ones_like(D), create_graph=True)
    with pytest.raises(RuntimeError, match="sdtw::alignment_backward is not implemented"):
        torch.autograd.grad(hvp.sum(), D)


def test_alignment_backward_names_a_mismatched_G():
    D = randn(2, 4, 3, seed=24).abs()
    with pytest.raises(ValueError, match=r"G \(the gradient of E\) must have the shape of D \(\[2, 4, 3\]\)"):
        torch.ops.sdtw.alignment_backward(torch.zeros(2, 3, 4, dtype=F64), D, 1.0)


skip_without_cuda = requires_cuda[1]

# (D shape, lengths, bandwidth): N != M, N = 1, M = 1, odd sizes, pairs of many 32-row strips (with
# rows not a multiple of 32), a band, lengths (also with a band) and a pair of length one.
CUDA_COST_CASES = [
    ((3, 7, 5), None, -1),
    ((2, 1, 6), None, -1),
    ((2, 6, 1), None, -1),
    ((9, 8), None, -1),
    ((2, 300, 277), None, -1),
    ((2, 33, 31), None, 4),
    ((3, 12, 10), ([12, 5, 1], [10, 7, 1]), -1),
    ((3, 15, 13), ([15, 9, 6], [13, 11, 4]), 3),
]


def cost_case(shape, lengths, seed):
    D, G = randn(*shape, seed=seed).abs(), randn(*shape, seed=seed + 1)
    x_lengths, y_lengths = (torch.tensor(l) for l in lengths) if lengths else (None, None)
    return D, G, x_lengths, y_lengths


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("shape,lengths,bandwidth", CUDA_COST_CASES)
def test_cuda_alignment_backward_equals_cpu_in_float64(shape, lengths, bandwidth):
    """The kernel repeats the reference's float64 recursions in its order: only the device's exp
    and log (a few ulp) separate them, far below 1e-10 of the largest entry. Where the product
    vanishes (one row or column: E is constant) its terms cancel only to their rounding, so the
    bound is then taken of the direction's scale max |G| / gamma, as in second_order_test.cpp."""
    D, G, x_lengths, y_lengths = cost_case(shape, lengths, seed=40)
    want = torch.ops.sdtw.alignment_backward(G, D, 0.5, bandwidth, x_lengths, y_lengths)
    scale = want.abs().max().item() or G.abs().max().item() / 0.5
    for where in ("cpu", "cuda"):  # lengths on the host and on the device
        on = (lambda t: None if t is None else t.to(where))
        got = torch.ops.sdtw.alignment_backward(G.cuda(), D.cuda(), 0.5, bandwidth, on(x_lengths), on(y_lengths))
        assert got.dtype == F64 and got.device.type == "cuda"
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=1e-10 * scale)
    if min(shape[-2:]) > 1:
        assert want.abs().max() > 1e-3  # a real second derivative (one row or column has one path: 0)


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("shape,lengths,bandwidth", CUDA_COST_CASES)
def test_cuda_alignment_backward_equals_cpu_for_float32_costs(shape, lengths, bandwidth):
    """The CPU computes a float32 D's weights in float64; the CUDA kernel saves them in float32 and runs
    its sweeps in float64, so the two differ by those weights' rounding carried through both sweeps:
    within 1e-5 of the direction's scale max |G| / gamma (or of the largest entry, if larger), the
    kernel test's bound at these shapes (second_order_test.cpp)."""
    D, G, x_lengths, y_lengths = cost_case(shape, lengths, seed=42)
    D32, G32 = D.float(), G.float()
    want = torch.ops.sdtw.alignment_backward(G32, D32, 0.5, bandwidth, x_lengths, y_lengths)
    got = torch.ops.sdtw.alignment_backward(G32.cuda(), D32.cuda(), 0.5, bandwidth, x_lengths, y_lengths)
    assert got.dtype == torch.float32
    scale = max(want.abs().max().item(), G32.abs().max().item() / 0.5)
    torch.testing.assert_close(got.cpu(), want, rtol=0, atol=1e-5 * scale)


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_alignment_backward_non_finite_pairs_are_nan_as_on_cpu():
    D, G = randn(3, 6, 5, seed=44).abs(), randn(3, 6, 5, seed=45)
    G[0, 2, 3] = float("nan")  # inside pair 0's lengths
    G[2, 5, 4] = float("inf")  # outside pair 2's lengths: ignored
    D[1, 0, 0] = float("inf")  # every path of pair 1 starts there: its value is infinite
    x_lengths, y_lengths = torch.tensor([6, 6, 4]), torch.tensor([5, 5, 3])
    want = torch.ops.sdtw.alignment_backward(G, D, 0.5, -1, x_lengths, y_lengths)
    got = torch.ops.sdtw.alignment_backward(G.cuda(), D.cuda(), 0.5, -1, x_lengths, y_lengths).cpu()
    assert torch.isnan(got[:2]).all() and torch.isfinite(got[2]).all()
    torch.testing.assert_close(got, want, rtol=0, atol=1e-10, equal_nan=True)


CUDA_SERIES_CASES = [SERIES_CASES[i] for i in (0, 1, 3, 5)]  # N != M, N = 1, lengths, band with lengths


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("x_shape,y_shape,keywords", CUDA_SERIES_CASES)
def test_cuda_gradgradcheck_fused(normalize, x_shape, y_shape, keywords):
    x, y = leaf(randn(*x_shape, seed=1).cuda()), leaf(randn(*y_shape, seed=2).cuda())

    def loss(x, y):
        return sdtw_torch.soft_dtw(x, y, gamma=0.7, fused=True, normalize=normalize, **keywords)

    assert gradgradcheck(loss, (x, y))


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("shape,keywords", COST_CASES)
def test_cuda_gradgradcheck_cost(shape, keywords):
    D = leaf(randn(*shape, seed=3).abs().cuda())
    assert gradgradcheck(lambda D: sdtw_torch.soft_dtw_cost(D, gamma=0.5, **keywords), (D,))
    assert gradcheck(lambda D: sdtw_torch.alignment_from_cost(D, gamma=0.5, **keywords), (D,))


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("fused", [True, False])
def test_cuda_double_backward_equals_cpu(fused):
    """Unfused, the cost is a leaf: the loss keeps it for the double backward."""
    x0, y0, u = randn(2, 6, 2, seed=46), randn(2, 5, 2, seed=47), randn(2, 6, 2, seed=48)
    results = []
    for device in ("cpu", "cuda"):
        x, y = leaf(x0.to(device)), leaf(y0.to(device))
        if fused:
            (gx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, gamma=0.5, fused=True).sum(), x, create_graph=True)
            (hvp,) = torch.autograd.grad(gx, x, u.to(device))
        else:
            D = leaf(sdtw_torch.pairwise_cost(x, y).detach())
            (gD,) = torch.autograd.grad(sdtw_torch.soft_dtw_cost(D, gamma=0.5).sum(), D, create_graph=True)
            (hvp,) = torch.autograd.grad(gD, D, torch.ones_like(D))
        results.append(hvp.cpu())
    torch.testing.assert_close(results[1], results[0], rtol=1e-9, atol=1e-10)
    assert results[0].abs().max() > 1e-3


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("dist", ["sqeuclidean", "euclidean", "cosine"])
@pytest.mark.parametrize("keywords", [{}, {"x_lengths": [37, 21, 30], "y_lengths": [29, 12, 25], "bandwidth": 20}])
def test_cuda_float32_double_backward_agrees_with_float64(dist, keywords):
    """float32 series on CUDA recompute E, and run the Hessian product, on a float32 cost (the fused
    DP's precision; cosine's stays float64): their gradient under create_graph is within the
    kernels' 1e-4 (relative L2) of the float64 gradient, as the plain backward's is, and their
    Hessian-vector product within 1e-4 of the float64 one's largest entry. That 1e-4 is empirical,
    five times what a CPU emulation of the float32 weights gives at these inputs (2.1e-5 for
    sqeuclidean); the documented bound is in cost space
    (test_cuda_alignment_backward_equals_cpu_for_float32_costs)."""
    x64, y64, u = randn(3, 37, 4, seed=49), randn(3, 29, 4, seed=50), randn(3, 37, 4, seed=51)
    grads, hvps = {}, {}
    for dtype in (F64, torch.float32):
        x, y = leaf(x64.to("cuda", dtype)), leaf(y64.to("cuda", dtype))
        loss = lambda: sdtw_torch.soft_dtw(x, y, gamma=0.5, dist=dist, **keywords).sum()  # noqa: E731
        (gx,) = torch.autograd.grad(loss(), x, create_graph=True)
        (plain,) = torch.autograd.grad(loss(), x)
        (hvp,) = torch.autograd.grad(gx, x, u.to("cuda", dtype))
        assert gx.dtype == plain.dtype == hvp.dtype == dtype
        grads[dtype] = (gx.detach().double().cpu(), plain.double().cpu())
        hvps[dtype] = hvp.double().cpu()
    exact = grads[F64][0]
    torch.testing.assert_close(grads[F64][1], exact, rtol=1e-12, atol=1e-12)
    for name, g in zip(("create_graph", "plain"), grads[torch.float32]):
        error = ((g - exact).norm() / exact.norm()).item()
        assert error <= 1e-4, f"{dist} float32 gradient ({name}): relative L2 error {error:.3g} > 1e-4"
    error = ((hvps[torch.float32] - hvps[F64]).abs().max() / hvps[F64].abs().max()).item()
    assert error <= 1e-4, f"{dist} float32 Hessian-vector product: error {error:.3g} of its largest entry > 1e-4"


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_double_backward_through_a_freed_cost_is_a_clear_error():
    """The unfused loss frees a cost computed from x and y after the forward (its first-order
    backward reads the state alone), so its double backward on CUDA is refused, naming the way out."""
    x, y = leaf(randn(2, 6, 2, seed=25).cuda()), randn(2, 5, 2, seed=26).cuda()
    with pytest.raises(NotImplementedError, match="needs the cost D, which the loss frees after the forward"):
        torch.autograd.grad(sdtw_torch.soft_dtw(x, y, fused=False).sum(), x, create_graph=True)


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_alignment_gradient_equals_cpu_and_passes_gradcheck():
    x0, y0, G = randn(2, 5, 3, seed=49), randn(2, 4, 3, seed=50), randn(2, 5, 4, seed=51)
    grads = []
    for device in ("cpu", "cuda"):
        x = leaf(x0.to(device))
        E = sdtw_torch.alignment(x, y0.to(device), gamma=0.5, x_lengths=[5, 3])
        grads.append(torch.autograd.grad((E * G.to(device)).sum(), x)[0].cpu())
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-9, atol=1e-10)
    assert grads[0].abs().max() > 1e-3
    x, y = leaf(x0.cuda()), leaf(y0.cuda())
    assert gradcheck(lambda x, y: sdtw_torch.alignment(x, y, gamma=0.5, bandwidth=1), (x, y))


@pytest.mark.skipif(not sdtw_torch.COMPILE_SUPPORTED, reason="torch.library.opcheck needs torch >= 2.4")
def test_opcheck_alignment_backward():
    D, G = randn(2, 5, 4, seed=30).abs(), randn(2, 5, 4, seed=31)
    torch.library.opcheck(torch.ops.sdtw.alignment_backward.default, (G, D, 0.5, 2, torch.tensor([5, 3]), None))


def test_alignment_backward_has_meta_shapes():
    D = randn(2, 4, 3, seed=27)
    out = torch.ops.sdtw.alignment_backward(torch.zeros_like(D).to("meta"), D.to("meta"), 1.0)
    assert out.shape == (2, 4, 3) and out.device.type == "meta" and out.dtype == F64
