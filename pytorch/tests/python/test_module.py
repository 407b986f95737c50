"""sdtw_torch on the CPU (and the device-independent parts): values, gradients, keywords, errors."""
import inspect

import numpy as np
import pytest
import torch

import sdtw_torch
from reference import sdtw, sdtw_xy, sqdist

torch.manual_seed(0)
NEW_TORCH = sdtw_torch.COMPILE_SUPPORTED


def rand(*shape, dtype=torch.float64, requires_grad=False):
    return torch.randn(*shape, dtype=dtype).requires_grad_(requires_grad)


def grads(fn, *inputs):
    inputs = [t.detach().clone().requires_grad_(True) for t in inputs]
    fn(*inputs).sum().backward()
    return [t.grad for t in inputs]


# ---- values and gradients against the numpy float64 reference ----

@pytest.mark.parametrize("n,m", [(1, 1), (1, 6), (6, 1), (7, 7), (9, 4), (4, 11)])
@pytest.mark.parametrize("gamma", [1.0, 0.1, 0.01])
@pytest.mark.parametrize("fused", [True, False])
def test_values_and_gradients_match_reference(n, m, gamma, fused):
    x, y = rand(3, n, 2), rand(3, m, 2)
    values = sdtw_torch.soft_dtw(x, y, gamma=gamma, fused=fused)
    gx, gy = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=gamma, fused=fused), x, y)
    for b in range(3):
        v, rx, ry = sdtw_xy(x[b], y[b], gamma)
        assert values[b].item() == pytest.approx(v, rel=1e-10, abs=1e-10)
        np.testing.assert_allclose(gx[b].numpy(), rx, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(gy[b].numpy(), ry, rtol=1e-8, atol=1e-10)


def test_float32_inputs_give_float32_values_close_to_float64():
    x, y = rand(2, 8, 3), rand(2, 6, 3)
    v32 = sdtw_torch.soft_dtw(x.float(), y.float(), gamma=0.1)
    assert v32.dtype == torch.float32
    torch.testing.assert_close(v32.double(), sdtw_torch.soft_dtw(x, y, gamma=0.1), rtol=1e-5, atol=1e-5)
    gx32, _ = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.1), x.float(), y.float())
    gx64, _ = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.1), x, y)
    assert gx32.dtype == torch.float32
    torch.testing.assert_close(gx32.double(), gx64, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_compute_in_float32(dtype):
    x, y = rand(2, 5, 3).to(dtype), rand(2, 4, 3).to(dtype)
    values = sdtw_torch.soft_dtw(x, y)
    assert values.dtype == torch.float32
    torch.testing.assert_close(values, sdtw_torch.soft_dtw(x.float(), y.float()))
    gx, gy = grads(lambda a, b: sdtw_torch.soft_dtw(a, b), x, y)
    assert gx.dtype == dtype and gy.dtype == dtype


def test_cost_tensor_matches_reference_and_alignment():
    D = rand(2, 5, 7).abs()
    values = sdtw_torch.soft_dtw_cost(D, gamma=0.3)
    E = sdtw_torch.alignment_from_cost(D, gamma=0.3)
    (gD,) = grads(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.3), D)
    for b in range(2):
        v, rE = sdtw(D[b].numpy(), 0.3)
        assert values[b].item() == pytest.approx(v, rel=1e-12)
        np.testing.assert_allclose(E[b].numpy(), rE, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(gD[b].numpy(), rE, rtol=1e-9, atol=1e-12)
    assert E[:, 0, 0].tolist() == pytest.approx([1.0, 1.0]) and E[:, -1, -1].tolist() == pytest.approx([1.0, 1.0])
    assert E.min() >= 0 and E.max() <= 1 + 1e-12


def test_alignment_of_x_and_y():
    x, y = rand(2, 6, 3), rand(2, 5, 3)
    E = sdtw_torch.alignment(x, y, gamma=0.5)
    assert E.shape == (2, 6, 5)
    for b in range(2):
        np.testing.assert_allclose(E[b].numpy(), sdtw(sqdist(x[b], y[b]), 0.5)[1], rtol=1e-9, atol=1e-12)
    assert sdtw_torch.alignment(x[0], y[0], gamma=0.5).shape == (6, 5)


@pytest.mark.parametrize("dist", ["euclidean", "cosine", "l1", "manhattan", "SQ_EUCLIDEAN"])
def test_other_dists(dist):
    x, y = rand(2, 5, 3), rand(2, 6, 3)
    xs, ys = x.numpy(), y.numpy()
    costs = {
        "euclidean": lambda a, b: np.sqrt(sqdist(a, b)),
        "cosine": lambda a, b: 1 - (a / np.linalg.norm(a, axis=1, keepdims=True))
        @ (b / np.linalg.norm(b, axis=1, keepdims=True)).T,
        "l1": lambda a, b: np.abs(a[:, None] - b[None]).sum(-1),
        "manhattan": lambda a, b: np.abs(a[:, None] - b[None]).sum(-1),
        "SQ_EUCLIDEAN": sqdist,
    }
    values = sdtw_torch.soft_dtw(x, y, gamma=0.2, dist=dist, fused=False)
    for b in range(2):
        assert values[b].item() == pytest.approx(sdtw(costs[dist](xs[b], ys[b]), 0.2)[0], rel=1e-9)
    assert torch.autograd.gradcheck(lambda a, c: sdtw_torch.soft_dtw(a, c, gamma=0.2, dist=dist),
                                    (x.requires_grad_(), y.requires_grad_()))


def test_callable_dist():
    x, y = rand(2, 5, 3), rand(2, 6, 3)
    values = sdtw_torch.soft_dtw(x, y, dist=lambda a, b: torch.cdist(a, b) ** 2)
    torch.testing.assert_close(values, sdtw_torch.soft_dtw(x, y))
    with pytest.raises(ValueError, match="fused=True requires a named dist"):
        sdtw_torch.soft_dtw(x, y, dist=lambda a, b: torch.cdist(a, b), fused=True)


def test_large_unfused_cost_uses_expanded_form_accurately():
    # B*N*M*D above the broadcast limit (2^23): the centred matmul form.
    x, y = rand(2, 300, 64) + 5.0, rand(2, 256, 64) + 5.0
    D = sdtw_torch.pairwise_cost(x, y)
    torch.testing.assert_close(D, torch.cdist(x, y) ** 2, rtol=1e-10, atol=1e-9)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, fused=False), sdtw_torch.soft_dtw(x, y, fused=True))


# ---- gradcheck (float64) ----

@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("normalize", [False, True])
def test_gradcheck(fused, normalize):
    x, y = rand(2, 5, 3, requires_grad=True), rand(2, 4, 3, requires_grad=True)
    fn = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.5, fused=fused, normalize=normalize)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (x, y))


def test_gradcheck_cost_with_lengths_and_band():
    D = rand(3, 6, 5).abs().requires_grad_(True)
    xl, yl = torch.tensor([6, 3, 4]), torch.tensor([5, 4, 2])
    assert torch.autograd.gradcheck(
        lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.4, bandwidth=2, x_lengths=xl, y_lengths=yl), (D,))


def test_gradcheck_sqeuclidean_with_lengths_and_band():
    x, y = rand(2, 6, 2, requires_grad=True), rand(2, 5, 2, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.4, bandwidth=2, x_lengths=[6, 3], y_lengths=[5, 4]), (x, y))


# ---- keywords ----

def test_keywords_match_softdtw_cuda_torch():
    params = inspect.signature(sdtw_torch.SoftDTW.__init__).parameters
    # softdtw-cuda-torch's keywords, then ours, then tslearn's global constraints, then Parallel
    # Tacotron 2's warp penalty and subsequence soft-DTW, then the memory mode.
    assert [p for p in params if p != "self"] == ["gamma", "bandwidth", "normalize", "dist", "fused", "reduction",
                                                 "check_inputs", "global_constraint", "sakoe_chiba_radius",
                                                 "itakura_max_slope", "warp", "subsequence", "memory"]
    assert all(params[p].kind == inspect.Parameter.KEYWORD_ONLY for p in params if p != "self")
    assert [p for p in inspect.signature(sdtw_torch.SoftDTW.forward).parameters] == [
        "self", "x", "y", "x_lengths", "y_lengths"]
    x, y = rand(2, 5, 3), rand(2, 5, 3)
    torch.testing.assert_close(sdtw_torch.softdtw(x, y, gamma=0.1), sdtw_torch.SoftDTW(gamma=0.1)(x, y))


def test_lengths_equal_truncated_pairs_and_zero_padding_gradient():
    x, y = rand(3, 7, 2), rand(3, 6, 2)
    xl, yl = [7, 3, 5], [6, 6, 2]
    for fused in (True, False):
        loss = sdtw_torch.SoftDTW(gamma=0.2, fused=fused)
        values = loss(x, y, xl, yl)
        gx, gy = grads(lambda a, b: loss(a, b, torch.tensor(xl), torch.tensor(yl, dtype=torch.int32)), x, y)
        for b in range(3):
            v, rx, ry = sdtw_xy(x[b, :xl[b]], y[b, :yl[b]], 0.2)
            assert values[b].item() == pytest.approx(v, rel=1e-10)
            np.testing.assert_allclose(gx[b, :xl[b]].numpy(), rx, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(gy[b, :yl[b]].numpy(), ry, rtol=1e-8, atol=1e-10)
            assert gx[b, xl[b]:].abs().max().item() == 0 if xl[b] < 7 else True
            assert gy[b, yl[b]:].abs().max().item() == 0 if yl[b] < 6 else True


def test_bandwidth_matches_reference_and_none_or_nonpositive_disables_it():
    x, y = rand(2, 8, 2), rand(2, 6, 2)
    values = sdtw_torch.soft_dtw(x, y, gamma=0.3, bandwidth=2)
    for b in range(2):
        assert values[b].item() == pytest.approx(sdtw_xy(x[b], y[b], 0.3, bandwidth=2)[0], rel=1e-10)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, bandwidth=2.7), sdtw_torch.soft_dtw(x, y, bandwidth=2))
    full = sdtw_torch.soft_dtw(x, y)
    for off in (None, 0, -3, float("inf")):
        torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, bandwidth=off), full)


def test_normalize_with_n_different_from_m():
    x, y = rand(2, 7, 3), rand(2, 4, 3)
    for fused in (True, False):
        div = sdtw_torch.SoftDTW(gamma=0.5, normalize=True, fused=fused)(x, y)
        f = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.5)  # noqa: E731
        torch.testing.assert_close(div, f(x, y) - 0.5 * (f(x, x) + f(y, y)))
    assert sdtw_torch.soft_dtw(x, x, gamma=0.5, normalize=True).abs().max() < 1e-12


def test_reductions():
    x, y = rand(4, 5, 3), rand(4, 6, 3)
    none = sdtw_torch.SoftDTW()(x, y)
    assert none.shape == (4,)
    torch.testing.assert_close(sdtw_torch.SoftDTW(reduction="mean")(x, y), none.mean())
    torch.testing.assert_close(sdtw_torch.SoftDTW(reduction="sum")(x, y), none.sum())
    torch.testing.assert_close(sdtw_torch.soft_dtw_cost(sdtw_torch.pairwise_cost(x, y), reduction="sum"), none.sum())


def test_unbatched_inputs():
    x, y = rand(5, 3), rand(6, 3)
    for fused in (True, False):
        value = sdtw_torch.soft_dtw(x, y, fused=fused)
        assert value.shape == ()
        torch.testing.assert_close(value, sdtw_torch.soft_dtw(x[None], y[None], fused=fused)[0])
        gx, gy = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, fused=fused), x, y)
        assert gx.shape == x.shape and gy.shape == y.shape
    assert sdtw_torch.soft_dtw(x, y, x_lengths=[3], y_lengths=torch.tensor(4)).shape == ()


def test_non_contiguous_inputs():
    x, y = rand(3, 2, 6).transpose(1, 2), rand(3, 2, 5).transpose(1, 2)
    assert not x.is_contiguous()
    for fused in (True, False):
        torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, fused=fused),
                                   sdtw_torch.soft_dtw(x.contiguous(), y.contiguous(), fused=fused))
        gx, _ = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, fused=fused), x, y)
        gxc, _ = grads(lambda a, b: sdtw_torch.soft_dtw(a, b, fused=fused), x.contiguous(), y.contiguous())
        torch.testing.assert_close(gx, gxc)
    D = rand(2, 6, 5).transpose(1, 2)
    torch.testing.assert_close(sdtw_torch.soft_dtw_cost(D), sdtw_torch.soft_dtw_cost(D.contiguous()))


def test_empty_batch():
    x, y = rand(0, 5, 3, requires_grad=True), rand(0, 4, 3, requires_grad=True)
    values = sdtw_torch.soft_dtw(x, y)
    assert values.shape == (0,)
    values.sum().backward()
    assert x.grad.shape == x.shape


def test_retain_graph_backward_twice_gives_the_same_gradient():
    x = rand(2, 5, 3, requires_grad=True)
    y = rand(2, 4, 3)
    out = sdtw_torch.soft_dtw(x, y).sum()
    (g1,) = torch.autograd.grad(out, x, retain_graph=True)
    (g2,) = torch.autograd.grad(out, x)
    torch.testing.assert_close(g1, g2)


def test_operators_are_registered():
    for name in ("cost_forward", "cost_backward", "sqeuclidean_forward", "sqeuclidean_backward", "pairwise_cost"):
        assert hasattr(torch.ops.sdtw, name)
    values, state = torch.ops.sdtw.sqeuclidean_forward(rand(2, 5, 3), rand(2, 4, 3), 1.0)
    assert values.shape == (2,) and state.shape == (2, 5, 4) and state.dtype == torch.float64


# ---- errors name the argument ----

@pytest.mark.parametrize("make,exc,match", [
    (lambda: sdtw_torch.soft_dtw(rand(2, 5), rand(2, 4, 3)), ValueError, "both be batched"),
    (lambda: sdtw_torch.soft_dtw(rand(5), rand(4, 3)), ValueError, "x must have shape"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3, 1)), ValueError, "y must have shape"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(3, 4, 3)), ValueError, "same batch size"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 2)), ValueError, "same number of features"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3).float()), TypeError, "same dtype"),
    (lambda: torch.ops.sdtw.soft_dtw_sqeuclidean(rand(2, 5, 3), rand(2, 4, 3).long(), 1.0), TypeError,
     "y must be a floating"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3).to(torch.complex128)), TypeError, "y must be a floating"),
    (lambda: sdtw_torch.soft_dtw_cost(rand(2, 5, 3).long()), TypeError, "D .* must be a floating"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 0, 3), rand(2, 4, 3)), ValueError, "x must have at least one time step"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 0, 3)), ValueError, "y must have at least one time step"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 0), rand(2, 4, 0)), ValueError, "at least one feature"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), gamma=-0.1), ValueError,
     r"gamma must be finite and >= 0 \(got -0.1\)"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), gamma=float("nan")), ValueError, "gamma"),
    (lambda: torch.ops.sdtw.cost_forward(rand(2, 5, 4), float("inf")), ValueError, "gamma"),
    (lambda: torch.ops.sdtw.cost_forward(rand(2, 5, 4), 1.0, -2), ValueError, "bandwidth must be >= 0"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 9, 3), rand(2, 4, 3), bandwidth=2), ValueError, "bandwidth 2"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 5, 3), bandwidth=1, x_lengths=[5, 2]), ValueError,
     "bandwidth 1 leaves no alignment path for pair 1"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), bandwidth="2"), TypeError, "bandwidth"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), x_lengths=[5, 0]), ValueError, r"x_lengths\[1\] = 0"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), y_lengths=[5, 1]), ValueError, r"y_lengths\[0\] = 5"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), x_lengths=[5]), ValueError, r"x_lengths must have shape"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), x_lengths=torch.ones(2)), TypeError,
     "x_lengths must be an integer tensor"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), dist="chebyshev"), ValueError, "dist must be"),
    (lambda: sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), reduction="max"), ValueError, "reduction"),
    (lambda: sdtw_torch.SoftDTW(gamma=-1.0), ValueError, "gamma"),
    (lambda: sdtw_torch.SoftDTW(reduction="avg"), ValueError, "reduction"),
    (lambda: sdtw_torch.SoftDTW(fused="yes"), TypeError, "fused"),
    (lambda: sdtw_torch.SoftDTW(gamma="1.0"), TypeError, "gamma must be a real number"),
    (lambda: sdtw_torch.SoftDTW(reduction=None), TypeError, "reduction must be a string"),
    (lambda: sdtw_torch.SoftDTW(dist=3), TypeError, "dist must be a string or a callable"),
    (lambda: sdtw_torch.SoftDTW(bandwidth=float("nan")), ValueError, r"bandwidth must be None or a number \(got nan\)"),
    (lambda: torch.ops.sdtw.soft_dtw_cost_loss(rand(2, 5, 4), D_xx=rand(2, 5, 5)), ValueError, "D_xx and D_yy"),
    (lambda: sdtw_torch.soft_dtw_cost(rand(5)), ValueError, "D must have shape"),
    (lambda: sdtw_torch.soft_dtw_cost(rand(2, 0, 3)), ValueError, "D must have at least one row"),
    (lambda: torch.ops.sdtw.cost_backward(rand(3), rand(2, 5, 4), rand(2, 5, 4), 1.0), ValueError, "dvalues"),
    (lambda: torch.ops.sdtw.cost_backward(rand(2), rand(2, 5, 4), rand(2, 4, 4), 1.0), ValueError, "state"),
])
def test_bad_inputs_are_rejected_with_the_argument_name(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def integer_target(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-3, 4, shape, generator=g)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("options", [dict(), dict(fused=False), dict(dist="l1"), dict(normalize=True),
                                     dict(dist=lambda a, b: torch.cdist(a, b) ** 2), dict(bandwidth=3, gamma=0.1)])
@pytest.mark.parametrize("target", ["int64", "int32", "bool"])
def test_an_integer_or_bool_target_is_promoted_to_the_other_dtype(dtype, options, target):
    """tslearn's SoftDTWLossPyTorch-style call loss(prediction, target) with an integer target: the
    value and the prediction's gradient are those of the call with the target converted."""
    x = torch.randn(3, 6, 2, generator=torch.Generator().manual_seed(1), dtype=dtype)
    y = integer_target(3, 5, 2, seed=2)
    y = y > 0 if target == "bool" else y.to(getattr(torch, target))
    for promoted_first, call in ((False, lambda a, b: sdtw_torch.soft_dtw(a, b, x_lengths=[6, 4, 5], **options)),
                                 (True, lambda a, b: sdtw_torch.SoftDTW(**options)(b, a))):
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        value, expected = call(xa, y), call(xb, y.to(dtype))
        assert value.dtype == expected.dtype == dtype
        torch.testing.assert_close(value, expected, rtol=0, atol=0)
        value.sum().backward()
        expected.sum().backward()
        torch.testing.assert_close(xa.grad, xb.grad, rtol=0, atol=0)
        assert xa.grad.abs().sum() > 0


def test_two_integer_series_take_torchs_default_dtype_and_alignment_promotes():
    x, y = integer_target(2, 5, 3, seed=3), integer_target(2, 4, 3, seed=4)
    value = sdtw_torch.soft_dtw(x, y)
    assert value.dtype == torch.get_default_dtype() == torch.float32
    torch.testing.assert_close(value, sdtw_torch.soft_dtw(x.float(), y.float()), rtol=0, atol=0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        value64 = sdtw_torch.soft_dtw(x, y)
    finally:
        torch.set_default_dtype(previous)
    assert value64.dtype == torch.float64
    torch.testing.assert_close(value64, sdtw_torch.soft_dtw(x.double(), y.double()), rtol=0, atol=0)
    xf = x.double()
    for dist in ("sqeuclidean", lambda a, b: torch.cdist(a, b) ** 2):
        torch.testing.assert_close(sdtw_torch.alignment(xf, y, dist=dist), sdtw_torch.alignment(xf, y.double(), dist=dist),
                                   rtol=0, atol=1e-15)


# ---- torch.compile and opcheck on the CPU (torch >= 2.4) ----

@pytest.mark.skipif(not NEW_TORCH, reason="torch.compile support needs torch >= 2.4 (register_fake/register_autograd)")
def test_opcheck_cpu():
    # The low-level operators have no derivative of their own (their inputs need none); the loss
    # operators carry the C++ autograd, checked with inputs that require gradients.
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    torch.library.opcheck(torch.ops.sdtw.sqeuclidean_forward.default, (x, y, 0.5, -1, None, None))
    D = rand(2, 5, 4).abs()
    torch.library.opcheck(torch.ops.sdtw.cost_forward.default, (D, 0.5, 2, torch.tensor([5, 3]), None))
    torch.library.opcheck(torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean.default,
                          (x, y, torch.tensor([0, 1, 1]), torch.tensor([1, 0, 1]), 0.5, -1, None, None))
    xg, yg = x.clone().requires_grad_(), y.clone().requires_grad_()
    torch.library.opcheck(torch.ops.sdtw.soft_dtw_sqeuclidean.default, (xg, yg, 0.5, -1, None, None))
    torch.library.opcheck(torch.ops.sdtw.soft_dtw_cost.default, (D.clone().requires_grad_(), 0.5, 2,
                                                                 torch.tensor([5, 3]), None))


@pytest.mark.skipif(not NEW_TORCH, reason="torch.compile support needs torch >= 2.4 (register_fake/register_autograd)")
def test_compile_cpu():
    model = torch.nn.Linear(3, 3).double()
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, reduction="mean")
    x, y = rand(2, 6, 3), rand(2, 5, 3)

    def step(inp):
        return loss_fn(model(inp), y)

    compiled = torch.compile(step, fullgraph=True)
    eager = step(x)
    eager.backward()
    g_eager = model.weight.grad.clone()
    model.zero_grad()
    out = compiled(x)
    out.backward()
    torch.testing.assert_close(out, eager)
    torch.testing.assert_close(model.weight.grad, g_eager)


@pytest.mark.skipif(not NEW_TORCH, reason="torch.compile support needs torch >= 2.4 (register_fake/register_autograd)")
@pytest.mark.parametrize("options", [dict(normalize=True, bandwidth=3), dict(dist="l1", reduction="sum")])
def test_compile_cpu_with_lengths_and_options(options):
    """The loss operator (a composite of the value operators) traced whole, lengths included."""
    x, y = rand(3, 6, 2, requires_grad=True), rand(3, 5, 2)
    loss_fn = sdtw_torch.SoftDTW(gamma=0.2, **options)

    def step(a, b):
        return loss_fn(a, b, x_lengths=[6, 4, 5], y_lengths=[5, 5, 3]).sum()

    eager = step(x, y)
    (g_eager,) = torch.autograd.grad(eager, x)
    out = torch.compile(step, fullgraph=True)(x, y)
    (g,) = torch.autograd.grad(out, x)
    torch.testing.assert_close(out, eager)
    torch.testing.assert_close(g, g_eager)


def test_options_are_resolved_by_the_operator():
    """One place decides the dist aliases, the fused default and the band: the operator."""
    resolve = torch.ops.sdtw.soft_dtw_options
    assert resolve(0.5, None, False, "Manhattan", None, "mean") == (0.5, -1, False, "l1", True, "mean")
    assert resolve(0.5, None, False, "cosine", False, "mean") == (0.5, -1, False, "cosine", False, "mean")
    assert resolve(0.5, 2.7, True, "sq_euclidean", None, "none") == (0.5, 2, True, "sqeuclidean", True, "none")
    for no_band in (0.0, -3.0, 2.0**62, float("inf")):
        assert resolve(1.0, no_band, False, "sqeuclidean", None, "none")[1] == -1
    assert resolve(1.0, 0.5, False, "sqeuclidean", None, "none")[1] == 0  # the diagonal


# Meta tensors: shapes without data, on every torch.

@pytest.mark.parametrize("fused", [True, False])
def test_meta_tensors_give_shapes(fused):
    x = torch.empty(4, 7, 3, device="meta", requires_grad=True)
    y = torch.empty(4, 5, 3, device="meta")
    values = sdtw_torch.soft_dtw(x, y, fused=fused, x_lengths=[7, 6, 5, 4])
    assert values.shape == (4,) and values.device.type == "meta" and values.dtype == torch.float32
    values.sum().backward()
    assert x.grad.shape == x.shape and x.grad.device.type == "meta"
    D = torch.empty(2, 7, 5, device="meta", dtype=torch.float64)
    assert sdtw_torch.soft_dtw_cost(D).shape == (2,) and sdtw_torch.soft_dtw_cost(D).dtype == torch.float64
    assert sdtw_torch.alignment_from_cost(D).shape == (2, 7, 5)
    assert sdtw_torch.alignment(x[0], y[0]).shape == (7, 5)


# ---- arguments named or accepted ----

def test_callable_dist_output_shape_is_checked():
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    for wrong in ((2, 4, 5), (3, 5, 4), (5, 4)):
        for f in (sdtw_torch.soft_dtw, sdtw_torch.alignment):
            with pytest.raises(ValueError, match=r"dist: the callable's output must have shape \(2, 5, 4\)"):
                f(x, y, dist=lambda a, b, s=wrong: torch.zeros(s, dtype=a.dtype))


def test_callable_dist_output_on_another_device_is_refused():
    """A meta cost beside CPU inputs would give a result with no data: refused, naming dist."""
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    for f in (sdtw_torch.soft_dtw, sdtw_torch.alignment):
        with pytest.raises(ValueError, match=r"dist: the callable's output must be on the inputs' device \(cpu\), "
                                             r"but it is on meta"):
            f(x, y, dist=lambda a, b: torch.cdist(a, b).to("meta"))


def test_lengths_must_be_integers():
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    with pytest.raises(TypeError, match=r"x_lengths must be an integer tensor or a list of integers"):
        sdtw_torch.soft_dtw(x, y, x_lengths=[5, 3.5])
    with pytest.raises(TypeError, match=r"x_lengths must be an integer tensor"):
        sdtw_torch.soft_dtw(x, y, x_lengths=torch.tensor([5.0, 3.0]))


def test_numpy_and_tensor_scalars_and_huge_bandwidths_are_accepted():
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    ref = sdtw_torch.soft_dtw(x, y, gamma=0.5)
    for gamma in (np.float32(0.5), np.float64(0.5), torch.tensor(0.5)):
        torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, gamma=gamma), ref, rtol=0, atol=0)
    unbanded = sdtw_torch.soft_dtw(x, y)
    for bandwidth in (2**63, 1e300, np.int64(2**62)):
        torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, bandwidth=bandwidth), unbanded, rtol=0, atol=0)
    for not_a_tensor in (x.tolist(), x.numpy()):
        with pytest.raises(TypeError, match=r"x must be a torch.Tensor"):
            sdtw_torch.soft_dtw(not_a_tensor, y)


def test_lengths_as_numpy_arrays_ints_and_0d_tensors():
    x, y = rand(2, 5, 3), rand(2, 4, 3)
    ref = sdtw_torch.soft_dtw(x, y, x_lengths=[5, 3])
    for lengths in (np.array([5, 3]), (5, 3), [np.int64(5), np.int64(3)], [torch.tensor(5), torch.tensor(3)]):
        torch.testing.assert_close(sdtw_torch.soft_dtw(x, y, x_lengths=lengths), ref, rtol=0, atol=0)
    torch.testing.assert_close(sdtw_torch.soft_dtw(x[1], y[1], x_lengths=3), ref[1], rtol=0, atol=0)
    with pytest.raises(ValueError, match=r"x_lengths must have shape \(B,\)"):
        sdtw_torch.soft_dtw(x, y, x_lengths=3)
    with pytest.raises(TypeError, match="x_lengths must be an integer tensor"):
        sdtw_torch.soft_dtw(x, y, x_lengths=np.array([5.0, 3.0]))


def test_cost_backward_operator_is_the_gradient_of_the_cost():
    """sdtw::sqeuclidean_cost_backward(G, x, y) = d sum(G * pairwise_cost(x, y)) / d (x, y), batched and not."""
    x, y, G = rand(3, 7, 4, requires_grad=True), rand(3, 5, 4, requires_grad=True), rand(3, 7, 5)
    want = torch.autograd.grad((G * sdtw_torch.pairwise_cost(x, y)).sum(), (x, y))
    got = torch.ops.sdtw.sqeuclidean_cost_backward(G, x.detach(), y.detach())
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-12, atol=1e-12)
    one = torch.ops.sdtw.sqeuclidean_cost_backward(G[1], x[1].detach(), y[1].detach())
    torch.testing.assert_close(one[0], want[0][1], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match=r"G must have the shape of the cost of x and y \(3, 7, 5\)"):
        torch.ops.sdtw.sqeuclidean_cost_backward(G[:, :6], x.detach(), y.detach())
