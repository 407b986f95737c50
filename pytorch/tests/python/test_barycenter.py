"""softdtw_barycenter: its objective and gradient against the numpy float64 reference, the optimum
against scipy's L-BFGS-B on that reference, softdtw-cuda-torch's Adam schedule, K groups in one
call against K calls, weights, lengths, errors. The `cuda` tests compare CUDA with the CPU."""
import math

import numpy as np
import pytest
import torch

import sdtw_torch
from conftest import requires_cuda
from reference import sdtw_xy
from sdtw_torch.barycenter import _Objective, resample

skip_without_cuda = requires_cuda[1]


def rand(*shape, seed=0, dtype=torch.float64, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)


def reference_objective(z, X, weights, gamma, lengths=None):
    """sum_b w_b sdtw(z, X_b) and its gradient in z, from the independent numpy reference."""
    z, X = np.asarray(z, np.float64), np.asarray(X, np.float64)
    lengths = lengths if lengths is not None else [X.shape[1]] * len(X)
    value, grad = 0.0, np.zeros_like(z)
    for b, w in enumerate(weights):
        v, gz, _ = sdtw_xy(z, X[b, :lengths[b]], gamma)
        value, grad = value + w * v, grad + w * gz
    return value, grad


def objective(Z, X, gamma, weights=None, lengths=None):
    w = np.full(len(X), 1.0 / len(X)) if weights is None else np.asarray(weights) / np.sum(weights)
    return reference_objective(Z.double().cpu().numpy(), X.double().cpu().numpy(), w, gamma, lengths)


@pytest.mark.parametrize("nz,n,d", [(1, 1, 1), (6, 9, 2), (10, 4, 3), (1, 7, 2)])
def test_objective_and_gradient_match_reference(nz, n, d):
    """The batched objective (groups, weights, lengths) against the numpy reference, per group."""
    X = rand(5, n, d, seed=1)
    lengths = torch.tensor([n, max(1, n - 2), 1, n, max(1, n // 2)])
    W = torch.tensor([[1.0, 0.0, 2.0, 0.5, 0.0], [0.0, 1.0, 1.0, 0.0, 3.0]])
    Z = rand(2, nz, d, seed=2).requires_grad_()
    values = _Objective(X, W, lengths, 0.7, None)(Z)
    (grad,) = torch.autograd.grad(values.sum(), Z)
    for k in range(2):
        value, g = reference_objective(Z[k].detach().numpy(), X.numpy(), W[k].numpy(), 0.7, lengths.tolist())
        assert abs(values[k].item() - value) <= 1e-12 * max(1.0, abs(value))
        np.testing.assert_allclose(grad[k].numpy(), g, rtol=1e-10, atol=1e-12)


def test_objective_gradient_matches_finite_differences():
    X, Z = rand(3, 6, 2, seed=3), rand(1, 5, 2, seed=4).requires_grad_()
    f = _Objective(X, torch.tensor([[0.2, 0.5, 0.3]], dtype=torch.float64), None, 0.5, None)
    assert torch.autograd.gradcheck(lambda z: f(z), (Z,), eps=1e-6, atol=1e-7)


def test_lbfgs_reaches_a_stationary_point_no_worse_than_scipy():
    minimize = pytest.importorskip("scipy.optimize").minimize  # a test oracle, not a dependency
    X = rand(4, 8, 2, seed=5)
    weights = [0.1, 0.4, 0.3, 0.2]
    init = X.mean(0)
    Z = sdtw_torch.softdtw_barycenter(X, gamma=0.5, weights=torch.tensor(weights), init=init, method="lbfgs",
                                      max_iter=300, tol=1e-14)
    value, grad = objective(Z, X, 0.5, weights)
    start_value, start_grad = objective(init, X, 0.5, weights)
    assert np.linalg.norm(grad) < 1e-5 * np.linalg.norm(start_grad)

    def fun(z):
        v, g = objective(torch.from_numpy(z.reshape(8, 2)), X, 0.5, weights)
        return v, g.ravel()

    scipy_value = minimize(fun, init.numpy().ravel(), jac=True, method="L-BFGS-B",
                           options={"maxiter": 300}).fun
    assert value < start_value
    assert value <= scipy_value + 1e-9 * abs(scipy_value)


def test_lbfgs_reproduces_tslearns_documented_barycenters():
    """tslearn's softdtw_barycenter docstring examples (max_iter=5, its tol=1e-3; the second pair
    of unequal lengths, which tslearn resamples for the init as X_lengths does here)."""
    X = torch.tensor([[1.0, 2, 3, 4], [1, 2, 4, 5]], dtype=torch.float64).unsqueeze(2)
    Z = sdtw_torch.softdtw_barycenter(X, method="lbfgs", max_iter=5)
    np.testing.assert_allclose(Z.squeeze(1).numpy(), [1.25161574, 2.03821705, 3.5101956, 4.36140605], atol=1e-8)
    X = torch.tensor([[1.0, 2, 3, 4, 0], [1, 2, 3, 4, 5]], dtype=torch.float64).unsqueeze(2)
    Z = sdtw_torch.softdtw_barycenter(X, X_lengths=[4, 5], method="lbfgs", max_iter=5)
    np.testing.assert_allclose(Z.squeeze(1).numpy(), [1.21349933, 1.8932251, 2.67573269, 3.51057026, 4.33645802],
                               atol=1e-8)


@pytest.mark.parametrize("seed,max_iter", [(20, 50), (21, 100), (22, 3)])
def test_lbfgs_stops_where_scipys_lbfgsb_stops_as_tslearn_calls_it(seed, max_iter):
    """tslearn's call, minimize(method='L-BFGS-B', tol=1e-3, options=dict(maxiter=max_iter)) on
    sum_b w_b sdtw(z, X_b) with the weights as given, on the numpy reference: the same point.
    A long run (tol=0) gives the optimum, which tol=1e-3 stops short of by tslearn's own margin."""
    minimize = pytest.importorskip("scipy.optimize").minimize
    X = rand(5, 9, 2, seed=seed)
    weights = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    init = rand(7, 2, seed=seed + 100)

    def fun(z):
        v, g = reference_objective(z.reshape(7, 2), X.numpy(), weights, 0.4)
        return v, g.ravel()

    expected = minimize(fun, init.numpy().ravel(), jac=True, method="L-BFGS-B", tol=1e-3,
                        options=dict(maxiter=max_iter))
    Z = sdtw_torch.softdtw_barycenter(X, gamma=0.4, weights=torch.from_numpy(weights), init=init, method="lbfgs",
                                      max_iter=max_iter)
    np.testing.assert_allclose(Z.numpy().ravel(), expected.x, rtol=0, atol=1e-7)
    value = fun(Z.numpy())[0]
    optimum = sdtw_torch.softdtw_barycenter(X, gamma=0.4, weights=torch.from_numpy(weights), init=init,
                                            method="lbfgs", max_iter=1000, tol=0.0)
    best, grad = fun(optimum.numpy())
    assert np.abs(grad).max() < 1e-6
    assert best <= value
    if expected.nit < max_iter:  # stopped by tol: within 1e-3 relative of the optimum (2e-4 and 8e-5 measured)
        assert value <= best + 1e-3 * abs(best)


@pytest.mark.parametrize("method", ["adam", "lbfgs"])
def test_objective_decreases_float32(method):
    X = rand(6, 12, 3, seed=6, dtype=torch.float32)
    Z = sdtw_torch.softdtw_barycenter(X, gamma=1.0, method=method)
    assert Z.shape == (12, 3) and Z.dtype == torch.float32 and not Z.requires_grad
    assert objective(Z, X, 1.0)[0] < objective(X.mean(0), X, 1.0)[0] - 1e-3


def schedule_of_softdtw_cuda_torch(X, gamma, weights, max_iter, lr, patience, tol):
    """The documented softdtw-cuda-torch schedule written out plainly for one barycenter."""
    w = weights / weights.sum()
    z = (X * w.view(-1, 1, 1)).sum(0).clone().requires_grad_()
    opt = torch.optim.Adam([z], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max_iter, eta_min=lr * 0.1)
    best, waited = float("inf"), 0
    for it in range(max_iter):
        opt.zero_grad()
        loss = (w * sdtw_torch.soft_dtw(z.expand(len(X), -1, -1), X, gamma=gamma)).sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([z], max_norm=1.0)
        opt.step()
        sched.step()
        if best - loss.item() > tol:
            best, waited = loss.item(), 0
        else:
            waited += 1
        if waited >= patience and it > max_iter // 2:
            return z.detach(), it + 1
    return z.detach(), max_iter


@pytest.mark.parametrize("patience,tol", [(3, 1e-3), (2, 1e3)])  # tol=1e3: stops right after max_iter // 2
def test_adam_follows_softdtw_cuda_torch_schedule(patience, tol):
    X = rand(5, 10, 2, seed=7)
    weights = torch.tensor([1.0, 2.0, 1.0, 0.5, 1.5], dtype=torch.float64)
    expected, iterations = schedule_of_softdtw_cuda_torch(X, 0.5, weights, 60, 0.1, patience, tol)
    assert iterations < 60  # early stopping did trigger
    Z = sdtw_torch.softdtw_barycenter(X, gamma=0.5, weights=weights, max_iter=60, patience=patience, tol=tol)
    torch.testing.assert_close(Z, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("early_stopping", [True, False])
def test_k_groups_batched_equal_k_calls(early_stopping):
    X = rand(9, 8, 2, seed=8)
    W = torch.zeros(3, 9, dtype=torch.float64)
    W[0, :4] = torch.tensor([1.0, 2.0, 3.0, 4.0])
    W[1, 4:7] = 1.0
    W[2, 6:] = torch.tensor([0.5, 1.0, 2.0])  # series 6 belongs to two groups
    kw = dict(gamma=0.3, max_iter=50, patience=2, tol=1e-2, early_stopping=early_stopping)
    Z = sdtw_torch.softdtw_barycenter(X, weights=W, **kw)
    assert Z.shape == (3, 8, 2)
    for k in range(3):
        members = W[k].nonzero().squeeze(1)
        single = sdtw_torch.softdtw_barycenter(X[members], weights=W[k, members], **kw)
        torch.testing.assert_close(Z[k], single, rtol=1e-12, atol=1e-12)


def test_k_groups_lbfgs_each_reach_their_optimum():
    X = rand(6, 7, 2, seed=9)
    W = torch.tensor([[1.0, 1.0, 1.0, 0, 0, 0], [0, 0, 0, 1.0, 2.0, 1.0]], dtype=torch.float64)
    Z = sdtw_torch.softdtw_barycenter(X, weights=W, method="lbfgs", max_iter=300, tol=1e-14, gamma=0.5)
    for k in range(2):
        single = sdtw_torch.softdtw_barycenter(X, weights=W[k], method="lbfgs", max_iter=300, tol=1e-14, gamma=0.5)
        joint_value, grad = objective(Z[k], X, 0.5, W[k].numpy())
        single_value, _ = objective(single, X, 0.5, W[k].numpy())
        assert np.linalg.norm(grad) < 1e-5
        assert abs(joint_value - single_value) < 1e-9 * abs(single_value)


def test_weights_scale_free_and_zero_weight_excludes():
    X = rand(4, 6, 2, seed=10)
    w = torch.tensor([1.0, 0.0, 2.0, 1.0], dtype=torch.float64)
    a = sdtw_torch.softdtw_barycenter(X, weights=w, max_iter=30)
    torch.testing.assert_close(sdtw_torch.softdtw_barycenter(X, weights=3 * w, max_iter=30), a, rtol=1e-12, atol=1e-12)
    b = sdtw_torch.softdtw_barycenter(X[[0, 2, 3]], weights=w[[0, 2, 3]], max_iter=30)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    # A single series with all the weight: its barycenter stays near it (soft-DTW smooths it).
    c = sdtw_torch.softdtw_barycenter(X, weights=torch.tensor([0.0, 0.0, 1.0, 0.0]), method="lbfgs", gamma=0.01)
    assert (c - X[2]).abs().max() < 0.05


def test_resample_matches_numpy_interp():
    X = rand(3, 9, 2, seed=11)
    lengths = torch.tensor([9, 4, 1])
    out = resample(X, lengths, 7)
    for b, n in enumerate(lengths.tolist()):
        for f in range(2):
            expected = np.interp(np.linspace(0, 1, 7), np.linspace(0, 1, n), X[b, :n, f].numpy())
            np.testing.assert_allclose(out[b, :, f].numpy(), expected, rtol=1e-12, atol=1e-12)


def test_lengths_ignore_padding_and_match_reference():
    X = rand(4, 10, 2, seed=12)
    lengths = [10, 6, 3, 8]
    padded = X.clone()
    for b, n in enumerate(lengths):
        padded[b, n:] = 50.0
    Z = sdtw_torch.softdtw_barycenter(X, X_lengths=lengths, method="lbfgs", max_iter=200, tol=1e-14, gamma=0.5)
    Zp = sdtw_torch.softdtw_barycenter(padded, X_lengths=torch.tensor(lengths), method="lbfgs", max_iter=200,
                                       tol=1e-14, gamma=0.5)
    torch.testing.assert_close(Z, Zp, rtol=1e-10, atol=1e-10)
    _, grad = objective(Z, X, 0.5, lengths=lengths)
    assert np.linalg.norm(grad) < 1e-5
    # The default start is the mean of the series resampled to N rows.
    Z0 = sdtw_torch.softdtw_barycenter(padded, X_lengths=lengths, max_iter=0)
    torch.testing.assert_close(Z0, resample(X, torch.tensor(lengths), 10).mean(0), rtol=1e-12, atol=1e-12)


def test_init_sets_the_barycenter_length():
    X = rand(3, 8, 2, seed=13)
    Z = sdtw_torch.softdtw_barycenter(X, init=torch.zeros(5, 2, dtype=torch.float64), max_iter=20)
    assert Z.shape == (5, 2)
    Zk = sdtw_torch.softdtw_barycenter(X, weights=torch.eye(3, dtype=torch.float64), init=X[:, :4], max_iter=5)
    assert Zk.shape == (3, 4, 2)
    # An init (or X) that requires grad is only a starting point: the result is a detached leaf.
    start = X.mean(0).requires_grad_()
    Zg = sdtw_torch.softdtw_barycenter(X.clone().requires_grad_(), init=start * 1.0, max_iter=3)
    assert not Zg.requires_grad and start.grad is None


def test_verbose_prints_progress(capsys):
    X = rand(3, 6, 1, seed=14)
    sdtw_torch.softdtw_barycenter(X, max_iter=40, verbose=True, early_stopping=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "iteration   40/40" in lines[1] and "loss" in lines[1]
    sdtw_torch.softdtw_barycenter(X, max_iter=40, verbose=True, method="lbfgs")
    assert "L-BFGS of group 0 stopped (reduction) after" in capsys.readouterr().out


@pytest.mark.parametrize("kwargs,match", [
    (dict(X=torch.randn(4, 3)), r"X must have shape \(B, N, D\)"),
    (dict(gamma=-1.0), "gamma must be"),
    (dict(weights=torch.ones(3)), r"weights must have shape \(4,\) or \(K, 4\)"),
    (dict(weights=torch.ones(0, 4)), r"weights must have shape \(4,\) or \(K, 4\) with K >= 1 .*got \(0, 4\)"),
    (dict(X=torch.randn(4, 4, 2).half()), r"X is float16 on the CPU, where softdtw_barycenter cannot run"),
    (dict(X=torch.randn(4, 4, 2).index_fill_(2, torch.tensor(1), math.inf)), r"X must be finite: X\[0, 0, 1\] = inf"),
    (dict(X=torch.randn(4, 4, 2).index_fill_(1, torch.tensor(3), math.nan), X_lengths=[3, 3, 3, 3]), None),
    (dict(weights=torch.tensor([1.0, -1.0, 1.0, 1.0])), r"weights must be finite and >= 0 \(weights\[1\] = -1.0\)"),
    (dict(weights=torch.ones(2, 4).index_fill_(1, torch.tensor(3), math.nan)), r"weights\[0, 3\] = nan"),
    (dict(init=torch.zeros(4, 2, device="meta")), "init is on the meta device, which holds no values"),
    (dict(X=torch.randn(4, 4, 2, device="meta")), "X is on the meta device, which holds no values"),
    (dict(weights=torch.tensor([[1.0, 1, 1, 1], [0, 0, 0, 0]])), "weights must have a positive sum.*group 1"),
    (dict(max_iter=-1), "max_iter must be"),
    (dict(lr=0.0), "lr must be"),
    (dict(patience=0), "patience must be"),
    (dict(tol=-1.0), "tol must be"),
    (dict(method="sgd"), "method must be one of 'adam', 'lbfgs'"),
    (dict(init=torch.zeros(5, 3)), r"init must have shape \(N_z, 2\)"),
    (dict(init=torch.zeros(2, 5, 2), weights=torch.ones(3, 4)), r"init must have shape .*\(3, N_z, 2\)"),
    (dict(X_lengths=[5, 5, 5, 5]), r"X_lengths\[\d\] = 5 is out of range \[1, 4\]"),
    (dict(fused=True, X=torch.randn(4, 4, 2)), None),
])
def test_bad_arguments_name_the_parameter(kwargs, match):
    kwargs = dict(kwargs)
    X = kwargs.pop("X", torch.randn(4, 4, 2))
    if match is None:
        sdtw_torch.softdtw_barycenter(X, max_iter=2, **kwargs)  # valid: fused=True is the sqeuclidean kernel
        return
    with pytest.raises((ValueError, TypeError), match=match):
        sdtw_torch.softdtw_barycenter(X, **kwargs)


@pytest.mark.cuda
@skip_without_cuda
@pytest.mark.parametrize("method", ["adam", "lbfgs"])
@pytest.mark.parametrize("fused", [None, False])
def test_cuda_matches_cpu(method, fused):
    X = rand(8, 30, 3, seed=20)
    W = torch.zeros(2, 8, dtype=torch.float64)
    W[0, :5], W[1, 4:] = 1.0, 2.0
    # A small tol: L-BFGS's stop at tol=1e-3 could fall one iteration apart on rounding.
    kw = dict(gamma=0.5, weights=W, method=method, fused=fused, max_iter=60, tol=1e-9)
    cpu = sdtw_torch.softdtw_barycenter(X, **kw)
    gpu64 = sdtw_torch.softdtw_barycenter(X, device="cuda", **kw)
    assert gpu64.is_cuda and gpu64.shape == (2, 30, 3)
    gpu32 = sdtw_torch.softdtw_barycenter(X.float().cuda(), **kw)
    for k in range(2):
        ref = objective(cpu[k], X, 0.5, W[k].numpy())[0]
        # L-BFGS may stop one iteration apart on rounding: compare its objectives, Adam's points.
        if method == "adam":
            torch.testing.assert_close(gpu64[k].cpu(), cpu[k], rtol=1e-6, atol=1e-6)
        else:
            assert abs(objective(gpu64[k], X, 0.5, W[k].numpy())[0] - ref) <= 1e-6 * abs(ref)
        assert abs(objective(gpu32[k], X, 0.5, W[k].numpy())[0] - ref) <= 1e-3 * abs(ref)


@pytest.mark.cuda
@skip_without_cuda
def test_cuda_lengths_k_groups_equal_k_calls():
    X = rand(6, 25, 2, seed=21, device="cuda")
    lengths = torch.tensor([25, 10, 3, 25, 17, 1], device="cuda")
    W = torch.tensor([[1.0, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=torch.float64, device="cuda")
    Z = sdtw_torch.softdtw_barycenter(X, weights=W, X_lengths=lengths, max_iter=40, patience=2, tol=1e-2)
    for k in range(2):
        members = W[k].nonzero().squeeze(1)
        single = sdtw_torch.softdtw_barycenter(X[members], X_lengths=lengths[members], max_iter=40, patience=2,
                                               tol=1e-2)
        torch.testing.assert_close(Z[k], single, rtol=1e-10, atol=1e-10)
