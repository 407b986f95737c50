"""cdist_soft_dtw against soft_dtw of each pair and the numpy float64 reference; chunks, lengths,
normalize, gradients, errors. The `cuda` tests compare the CUDA matrix with the float64 CPU one."""
import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import sdtw, sqdist

skip_without_cuda = requires_cuda[1]


def rand(*shape, seed=0, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)


def numpy_matrix(X, Y, gamma, X_lengths=None, Y_lengths=None, bandwidth=None, normalize=False):
    """Entry [i, j] from the independent numpy float64 soft-DTW, pair by pair."""
    X, Y = X.double().cpu().numpy(), Y.double().cpu().numpy()
    nx = X_lengths if X_lengths is not None else [X.shape[1]] * len(X)
    ny = Y_lengths if Y_lengths is not None else [Y.shape[1]] * len(Y)

    def value(a, b):
        return sdtw(sqdist(a, b), gamma, bandwidth)[0]

    out = np.empty((len(X), len(Y)))
    for i in range(len(X)):
        for j in range(len(Y)):
            a, b = X[i, :nx[i]], Y[j, :ny[j]]
            out[i, j] = value(a, b) - (0.5 * (value(a, a) + value(b, b)) if normalize else 0.0)
    return torch.from_numpy(out)


@pytest.mark.parametrize("b1,b2,n,m,d", [(1, 1, 1, 1, 1), (3, 4, 5, 7, 2), (5, 2, 1, 9, 3), (4, 3, 12, 1, 1)])
def test_entries_equal_numpy_reference(b1, b2, n, m, d):
    X, Y = rand(b1, n, d, seed=1), rand(b2, m, d, seed=2)
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.3)
    assert C.shape == (b1, b2) and C.dtype == torch.float64
    torch.testing.assert_close(C, numpy_matrix(X, Y, 0.3), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chunk", [1, 3, 7, None])
def test_entries_equal_soft_dtw_of_each_pair_float32(chunk):
    X, Y = rand(6, 11, 3, seed=3, dtype=torch.float32), rand(5, 8, 3, seed=4, dtype=torch.float32)
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.5, bandwidth=4, pairs_per_chunk=chunk)
    expected = torch.stack([torch.stack([sdtw_torch.soft_dtw(X[i].double(), Y[j].double(), gamma=0.5, bandwidth=4)
                                         for j in range(5)]) for i in range(6)])
    assert C.dtype == torch.float32
    torch.testing.assert_close(C.double(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("normalize", [False, True])
def test_symmetric_each_pair_once(normalize):
    X = rand(7, 9, 2, seed=5)
    C = sdtw_torch.cdist_soft_dtw(X, gamma=0.2, normalize=normalize, pairs_per_chunk=4)
    torch.testing.assert_close(C, numpy_matrix(X, X, 0.2, normalize=normalize), rtol=1e-12, atol=1e-12)
    assert torch.equal(C, C.T)
    if normalize:
        assert torch.equal(C.diagonal(), torch.zeros(7, dtype=C.dtype))
        assert bool((C >= -1e-12).all())  # the divergence is non-negative (Blondel et al. 2021)


def test_lengths_and_normalize_against_reference():
    X, Y = rand(4, 10, 2, seed=6), rand(3, 8, 2, seed=7)
    xl, yl = [10, 3, 1, 7], [8, 2, 5]
    for normalize in (False, True):
        C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.4, normalize=normalize, X_lengths=xl, Y_lengths=yl,
                                      pairs_per_chunk=5)
        torch.testing.assert_close(C, numpy_matrix(X, Y, 0.4, xl, yl, normalize=normalize), rtol=1e-12,
                                   atol=1e-12)
    S = sdtw_torch.cdist_soft_dtw(X, gamma=0.4, X_lengths=torch.tensor(xl))
    torch.testing.assert_close(S, numpy_matrix(X, X, 0.4, xl, xl), rtol=1e-12, atol=1e-12)
    # The padding does not matter.
    Xp = X.clone()
    Xp[1, 3:] = 100.0
    torch.testing.assert_close(sdtw_torch.cdist_soft_dtw(Xp, Y, gamma=0.4, X_lengths=xl, Y_lengths=yl),
                               sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.4, X_lengths=xl, Y_lengths=yl))


def test_other_dist():
    X, Y = rand(3, 6, 2, seed=8), rand(2, 5, 2, seed=9)
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.5, dist="l1")
    expected = torch.stack([torch.stack([sdtw_torch.soft_dtw(X[i], Y[j], gamma=0.5, dist="l1") for j in range(2)])
                            for i in range(3)])
    torch.testing.assert_close(C, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("normalize", [False, True])
def test_gradient_in_chunks_equals_pairwise_gradient(symmetric, normalize):
    X, Y = rand(4, 7, 2, seed=10).requires_grad_(), rand(3, 6, 2, seed=11).requires_grad_()
    weights = rand(4, 4 if symmetric else 3, seed=12)
    C = sdtw_torch.cdist_soft_dtw(X, None if symmetric else Y, gamma=0.3, normalize=normalize, pairs_per_chunk=2)
    grads = torch.autograd.grad((C * weights).sum(), [X] if symmetric else [X, Y])
    other = X if symmetric else Y
    expected = torch.stack([torch.stack([sdtw_torch.soft_dtw(X[i], other[j], gamma=0.3, normalize=normalize)
                                         for j in range(len(other))]) for i in range(4)])
    if symmetric and normalize:
        expected = expected - torch.diag(expected.diagonal())  # exactly zero: no gradient on the diagonal
    expected_grads = torch.autograd.grad((expected * weights).sum(), [X] if symmetric else [X, Y])
    for g, e in zip(grads, expected_grads):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-10)


def test_gradcheck_small():
    X, Y = rand(2, 3, 2, seed=13).requires_grad_(), rand(3, 4, 2, seed=14).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda a, b: sdtw_torch.cdist_soft_dtw(a, b, gamma=0.5, pairs_per_chunk=2), (X, Y))


def test_no_grad_needed_returns_plain_tensor():
    C = sdtw_torch.cdist_soft_dtw(rand(3, 4, 2), rand(2, 4, 2))
    assert not C.requires_grad


def test_integer_sets_are_promoted_as_tslearn_converts_them():
    """tslearn's cdist_soft_dtw takes integer arrays; here an integer set takes the other's floating
    dtype, or torch's default dtype when both are integers, and gives what the float input gives."""
    g = torch.Generator().manual_seed(11)
    X, Y = torch.randint(-3, 4, (4, 6, 2), generator=g), torch.randint(-3, 4, (3, 5, 2), generator=g)
    want = sdtw_torch.cdist_soft_dtw(X.double(), Y.double(), gamma=0.5)
    got = sdtw_torch.cdist_soft_dtw(X, Y.double(), gamma=0.5)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    both = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.5)
    assert both.dtype == torch.get_default_dtype()
    torch.testing.assert_close(both, want.to(both.dtype), rtol=1e-5, atol=1e-5)
    symmetric = sdtw_torch.cdist_soft_dtw(X.bool(), gamma=0.5)
    torch.testing.assert_close(symmetric, sdtw_torch.cdist_soft_dtw(X.bool().to(torch.get_default_dtype()), gamma=0.5))


@pytest.mark.parametrize("call,match", [
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4)), r"X must have shape \(B, N, D\)"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), torch.randn(2, 4, 3)), "same number of features"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), torch.randn(2, 4)), r"Y must have shape"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), gamma=-0.5), r"gamma must be finite and >= 0 \(got -0.5\)"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), dist="foo"), "dist must be"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), X_lengths=[4, 5, 1]),
     r"X_lengths\[1\] = 5 is out of range \[1, 4\]"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), X_lengths=[4, 4]), "X_lengths must be 3 integers"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), Y_lengths=[4, 4, 4]), "Y_lengths needs Y"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), torch.randn(2, 4, 2), Y_lengths=[0, 4]),
     r"Y_lengths\[0\] = 0 is out of range \[1, "),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(2, 6, 1), torch.randn(2, 6, 1), bandwidth=1, X_lengths=[6, 2]),
     r"bandwidth 1 is narrower than the largest \|length of X\[i\] - length of Y\[j\]\| = 4"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), pairs_per_chunk=0), "pairs_per_chunk must be"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2).to(torch.complex64)), "X must be a floating-point tensor"),
    (lambda: sdtw_torch.cdist_soft_dtw(torch.randn(3, 4, 2), X_lengths=torch.tensor([4, 4, 4], device="meta")),
     r"X_lengths must be on the CPU or on the device of the series \(cpu\), but it is on meta"),
])
def test_bad_arguments_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("b1,b2,n,m,d", [(8, 5, 17, 23, 3), (16, None, 32, 32, 8), (3, 4, 1, 40, 1)])
def test_cuda_matches_float64_cpu(dtype, tol, normalize, b1, b2, n, m, d):
    X = rand(b1, n, d, seed=20, dtype=dtype, device="cuda")
    Y = None if b2 is None else rand(b2, m, d, seed=21, dtype=dtype, device="cuda")
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.5, normalize=normalize, pairs_per_chunk=7)
    expected = sdtw_torch.cdist_soft_dtw(X.double().cpu(), None if Y is None else Y.double().cpu(), gamma=0.5,
                                         normalize=normalize)
    assert C.is_cuda and C.dtype == dtype
    # Relative to the soft-DTW values' scale: divergence entries are differences of three of them.
    scale = sdtw_torch.cdist_soft_dtw(X.double().cpu(), None if Y is None else Y.double().cpu(),
                                      gamma=0.5).abs().max()
    assert ((C.double().cpu() - expected).abs().max() / scale).item() < tol


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_gradient_and_lengths():
    X = rand(6, 20, 4, seed=22, device="cuda").requires_grad_()
    Y = rand(5, 15, 4, seed=23, device="cuda")
    xl, yl = torch.tensor([20, 5, 1, 9, 13, 20]), torch.tensor([15, 2, 7, 15, 1])
    C = sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.3, X_lengths=xl.cuda(), Y_lengths=yl.cuda(), pairs_per_chunk=4)
    (gx,) = torch.autograd.grad(C.sum(), X)
    Xc = X.detach().cpu().requires_grad_()
    Cc = sdtw_torch.cdist_soft_dtw(Xc, Y.cpu(), gamma=0.3, X_lengths=xl, Y_lengths=yl)
    (gc,) = torch.autograd.grad(Cc.sum(), Xc)
    torch.testing.assert_close(C.cpu(), Cc.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gx.cpu(), gc, rtol=1e-10, atol=1e-10)



def _pairs(b1, b2, count, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, b1, (count,), generator=g), torch.randint(0, b2, (count,), generator=g)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=requires_cuda)])
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("lengths", [False, True])
def test_pairs_operator_equals_soft_dtw_of_gathered_pairs(device, dtype, tol, lengths):
    X, Y = rand(6, 13, 3, seed=30, dtype=dtype, device=device), rand(4, 9, 3, seed=31, dtype=dtype, device=device)
    i, j = (t.to(device) for t in _pairs(6, 4, 17, seed=32))
    xl = torch.tensor([13, 1, 7, 13, 2, 10], device=device) if lengths else None
    yl = torch.tensor([9, 3, 1, 8], device=device) if lengths else None
    got = torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, j, 0.7, -1, xl, yl)
    want = sdtw_torch.soft_dtw(X[i].double().cpu(), Y[j].double().cpu(), gamma=0.7,
                               x_lengths=None if xl is None else xl[i].cpu(),
                               y_lengths=None if yl is None else yl[j].cpu())
    assert got.shape == (17,) and got.device.type == device and got.dtype == dtype
    # Per pair: a wrong short pair (lengths 1 to 3, small values) must not hide under the largest value.
    assert ((got.double().cpu() - want).abs() / want.abs().clamp(min=1)).max().item() < tol


@pytest.mark.parametrize("call,error,match", [
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, i[:2], 1.0), ValueError, "y_index must have shape"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i.int(), i, 1.0), TypeError, "x_index must be an int64"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i + 5, i, 1.0), IndexError, r"x_index holds an index out of \[0, 6\)"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y[..., :2], i, i, 1.0), ValueError, "same number of features"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X[0], Y, i, i, 1.0), ValueError, r"X must have shape \(B1, N, D\)"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, i, -1.0), ValueError, r"gamma must be finite and >= 0 \(got -1\)"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, i, 1.0, 2), ValueError, "bandwidth 2 leaves no"),
    (lambda X, Y, i: torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, i, 1.0, -1, torch.tensor([1, 2])), ValueError,
     r"x_lengths must have shape \(B,\) = \(6,\)"),
])
def test_pairs_operator_bad_arguments_name_the_parameter(call, error, match):
    X, Y, i = rand(6, 13, 3, seed=33), rand(4, 9, 3, seed=34), torch.tensor([0, 1, 3])
    with pytest.raises(error, match=match):
        call(X, Y, i)


def test_pairs_operator_has_no_gradient_and_meta_shapes():
    X, Y, i = rand(6, 13, 3, seed=35).requires_grad_(), rand(4, 9, 3, seed=36), torch.tensor([0, 1, 3])
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i, i, 1.0).sum().backward()
    meta = torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X.detach().to("meta").half(), Y.to("meta").half(),
                                                       i.to("meta"), i.to("meta"), 1.0)
    assert meta.shape == (3,) and meta.dtype == torch.float32


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_values_keep_no_state_and_equal_the_training_forward_bit_for_bit():
    """Without a gradient the loss and cdist run the values-only kernels: the same values as the
    forward that saves state, and a peak far below that state (4 bytes per DP cell)."""
    x, y = rand(16, 512, 8, seed=37, dtype=torch.float32, device="cuda"), rand(16, 512, 8, seed=38,
                                                                              dtype=torch.float32, device="cuda")
    trained = sdtw_torch.soft_dtw(x.clone().requires_grad_(), y).detach()
    x_leaf = x.clone().requires_grad_()

    def peak_of(fn):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        with torch.no_grad():
            result = fn()
        torch.cuda.synchronize()
        return result, torch.cuda.max_memory_allocated() - before

    values, loss_peak = peak_of(lambda: sdtw_torch.soft_dtw(x_leaf, y))
    C, cdist_peak = peak_of(lambda: sdtw_torch.cdist_soft_dtw(x, y))
    assert torch.equal(values, trained)
    assert torch.equal(C.diagonal(), trained)
    state_per_pair = 512 * 512 * 4  # what the forward that saves state keeps
    assert loss_peak < 16 * state_per_pair / 8, loss_peak
    assert cdist_peak < 16 * 16 * state_per_pair / 8, cdist_peak


@pytest.mark.parametrize("normalize", [False, True])
def test_one_series_with_itself(normalize):
    """Y=None with one series: no pair off the diagonal; the divergence is [[0]], the value [[sdtw(x, x)]]."""
    X = rand(1, 6, 2, seed=40)
    C = sdtw_torch.cdist_soft_dtw(X, normalize=normalize)
    want = 0.0 if normalize else sdtw_torch.soft_dtw(X, X).item()
    assert C.shape == (1, 1) and abs(C.item() - want) < 1e-12


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_gradient_of_more_pairs_than_one_grid_holds():
    """300 x 300 short series: 90000 pairs in one chunk, beyond the 65535 pairs a grid holds in z."""
    X = rand(300, 4, 2, seed=41, dtype=torch.float32, device="cuda").requires_grad_()
    Y = rand(300, 3, 2, seed=42, dtype=torch.float32, device="cuda")
    (gx,) = torch.autograd.grad(sdtw_torch.cdist_soft_dtw(X, Y, gamma=0.5).sum(), X)
    Xc = X.detach().double().cpu().requires_grad_()
    (gc,) = torch.autograd.grad(sdtw_torch.cdist_soft_dtw(Xc, Y.double().cpu(), gamma=0.5).sum(), Xc)
    assert ((gx.double().cpu() - gc).norm() / gc.norm()).item() < 1e-4
