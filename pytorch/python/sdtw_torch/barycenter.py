"""softdtw_barycenter: the series Z minimising sum_b w_b soft_dtw(Z, X_b), for one or K groups at once."""
import math
import time

import torch

from .checks import _first_bad, integer_at_least, number_at_least
from .cdist import check_series_set, check_set_lengths
from .functional import _check_gamma, soft_dtw
from .lbfgs import minimize_lbfgs

METHODS = ("adam", "lbfgs")
DEFAULT_TOL = {"adam": 1e-5, "lbfgs": 1e-3}  # softdtw-cuda-torch's early stopping; tslearn's minimize(tol=)


def resample(X, lengths, size):
    """Each series' first lengths[b] rows linearly interpolated to size rows: (B, size, D).

    tslearn's TimeSeriesResampler: positions linspace(0, 1, size) over linspace(0, 1, length).
    Without lengths and with size = N, X itself (interpolation would not give its rows back exactly).
    """
    B, N, D = X.shape
    if lengths is None and size == N:
        return X
    if lengths is None:
        lengths = torch.full((B,), N, dtype=torch.int64, device=X.device)
    t = torch.linspace(0, 1, size, dtype=X.dtype, device=X.device)
    last = (lengths - 1).to(X.dtype).unsqueeze(1)
    position = t.unsqueeze(0) * last
    lo = position.floor().clamp(max=last).to(torch.int64)
    hi = torch.minimum(lo + 1, (lengths - 1).unsqueeze(1))
    frac = (position - lo.to(X.dtype)).unsqueeze(2)

    def rows(index):
        return X.gather(1, index.unsqueeze(2).expand(B, size, D))

    return rows(lo) * (1 - frac) + rows(hi) * frac


def _check_weights(weights, B, device, dtype):
    """(K, B) non-negative weights, each row normalised to sum 1; each row's sum as given (K,) (B for
    None: tslearn's weights are ones); and whether the caller gave one group."""
    if weights is None:
        return torch.full((1, B), 1.0 / B, device=device, dtype=dtype), torch.full((1,), float(B), dtype=dtype), True
    w = torch.as_tensor(weights).to(device=device, dtype=dtype)
    single = w.dim() == 1
    if single:
        w = w.unsqueeze(0)
    if w.dim() != 2 or w.shape[1] != B or w.shape[0] < 1:
        raise ValueError(f"weights must have shape ({B},) or (K, {B}) with K >= 1 for X with {B} series "
                         f"(got {tuple(torch.as_tensor(weights).shape)})")
    bad = (~torch.isfinite(w) | (w < 0)).nonzero()
    if bad.numel():
        k, b = bad[0].tolist()
        where = f"[{b}]" if single else f"[{k}, {b}]"
        raise ValueError(f"weights must be finite and >= 0 (weights{where} = {w[k, b].item()})")
    total = w.sum(1, keepdim=True)
    if bool((total <= 0).any()):
        empty = int((total.squeeze(1) <= 0).nonzero()[0])
        raise ValueError(f"weights must have a positive sum in every group (group {empty} sums to 0)")
    return w / total, total.squeeze(1).cpu(), single


def _check_init(init, K, single, X, device):
    _check_real(init, "init")
    D = X.shape[2]
    z = torch.as_tensor(init).detach().to(device=device, dtype=X.dtype)
    if z.dim() == 2:
        z = z.unsqueeze(0).expand(K, -1, -1)
    expected = f"(N_z, {D})" if single else f"(N_z, {D}) or ({K}, N_z, {D})"
    if z.dim() != 3 or z.shape[0] != K or z.shape[2] != D or z.shape[1] < 1:
        raise ValueError(f"init must have shape {expected} (got {tuple(torch.as_tensor(init).shape)})")
    if not bool(torch.isfinite(z).all()):
        raise ValueError("init must be finite")
    return z.clone()


def _check_real(t, name):
    """Optimising needs values: a meta tensor has none."""
    if isinstance(t, torch.Tensor) and t.device.type == "meta":
        raise ValueError(f"{name} is on the meta device, which holds no values: pass a tensor on the CPU or CUDA")


def check_finite_set(X, lengths, name):
    """A non-finite value inside the lengths would make its series' soft-DTW NaN, and with it a
    barycenter or a clustering, for no visible reason; padding is never read."""
    _check_real(X, name)
    position = _first_bad(X, {0: lengths})
    if position is not None:
        b, i, j = position
        raise ValueError(f"{name} must be finite: {name}[{b}, {i}, {j}] = {X[b, i, j].item()}")


def check_optimisable(X, name, caller):
    """The optimisers' matrix products have no float16 kernels on the CPU (bfloat16 has them)."""
    if X.dtype == torch.float16 and X.device.type == "cpu":
        raise ValueError(f"{name} is float16 on the CPU, where {caller} cannot run (torch has no float16 matrix "
                         f"products there): pass {name}.float(), or a float32, float64 or bfloat16 tensor")


def _check_options(max_iter, lr, patience, tol, method):
    integer_at_least(max_iter, 0, "max_iter")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not math.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be a finite number > 0 (got {lr!r})")
    integer_at_least(patience, 1, "patience")
    if tol is not None:
        number_at_least(tol, 0, "tol")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(repr(m) for m in METHODS)} (got {method!r})")


class _Objective:
    """Per group k: sum_b W[k, b] soft_dtw(Z[k], X[b]) over the pairs with W[k, b] > 0."""

    def __init__(self, X, W, lengths, gamma, fused):
        self.group, self.series = W.nonzero(as_tuple=True)
        self.weight = W[self.group, self.series]
        self.X = X.index_select(0, self.series)
        self.lengths = None if lengths is None else lengths.index_select(0, self.series)
        self.K, self.gamma, self.fused = W.shape[0], gamma, fused

    def keep_groups(self, active):
        """Drop the pairs of groups that stopped."""
        keep = active.index_select(0, self.group).nonzero().squeeze(1)
        self.group, self.series, self.weight = (t.index_select(0, keep) for t in (self.group, self.series, self.weight))
        self.X = self.X.index_select(0, keep)
        self.lengths = None if self.lengths is None else self.lengths.index_select(0, keep)

    def __call__(self, Z):
        values = soft_dtw(Z.index_select(0, self.group), self.X, gamma=self.gamma, fused=self.fused,
                          y_lengths=self.lengths)
        return values.new_zeros(self.K).index_add(0, self.group, self.weight.to(values.dtype) * values)


def _clip_per_group(grad, max_norm=1.0):
    """clip_grad_norm_(max_norm) applied to each group's barycenter on its own."""
    norms = grad.flatten(1).norm(dim=1)
    grad.mul_((max_norm / (norms + 1e-6)).clamp(max=1.0).view(-1, 1, 1))


def _adam(Z, objective, max_iter, lr, early_stopping, patience, tol, verbose):
    """softdtw-cuda-torch's schedule: Adam, cosine-annealed lr (to lr/10), gradient clipped to norm 1,
    early stopping once past half of max_iter after patience steps without an improvement > tol;
    here each group keeps its own clip, best loss and patience, and a stopped group stays put."""
    K = Z.shape[0]
    optimizer = torch.optim.Adam([Z], lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_iter, eta_min=lr * 0.1)
    active = [True] * K
    best = [math.inf] * K
    waited = [0] * K
    moving = None  # (K, 1, 1) bool once a group has stopped: the groups still moving
    start = time.time()
    for iteration in range(max_iter):
        optimizer.zero_grad()
        losses = objective(Z)
        losses.sum().backward()
        _clip_per_group(Z.grad)
        frozen = None if moving is None else Z.detach().clone()
        optimizer.step()
        scheduler.step()
        if frozen is not None:
            Z.data.copy_(torch.where(moving, Z.data, frozen))
        # The losses reach the host only when something reads them (a sync per iteration otherwise).
        values = losses.tolist() if early_stopping or verbose else None
        stopped = []
        for k in range(K):
            if not active[k] or not early_stopping:
                continue
            if best[k] - values[k] > tol:
                best[k], waited[k] = values[k], 0
            else:
                waited[k] += 1
            if waited[k] >= patience and iteration > max_iter // 2:
                active[k] = False
                stopped.append(k)
        if verbose and stopped:
            print(f"softdtw_barycenter: early stopping at iteration {iteration + 1} for group(s) {stopped} "
                  f"(no improvement > {tol} for {patience} iterations)")
        if verbose and ((iteration + 1) % 20 == 0 or iteration + 1 == max_iter):
            print(f"softdtw_barycenter: iteration {iteration + 1:4d}/{max_iter} | loss {sum(values):.6g} | "
                  f"lr {optimizer.param_groups[0]['lr']:.2e} | active groups {sum(active)}/{K} | "
                  f"{time.time() - start:.2f} s")
        if not any(active):
            break
        if stopped:
            moving = torch.tensor(active, device=Z.device).view(-1, 1, 1)
            objective.keep_groups(moving.view(-1))


def _lbfgs(z, objective, total, max_iter, tol, verbose, group):
    """One group's barycenter by minimize_lbfgs from z (N_z, D), as tslearn's scipy call: the
    objective is scaled back to tslearn's sum_b w_b soft_dtw(z, X_b) with the weights as given,
    whose size the stopping thresholds see."""
    shape = (1,) + tuple(z.shape)

    def f_and_grad(x):
        zk = x.detach().view(shape).requires_grad_()
        value = objective(zk)[0] * total
        (grad,) = torch.autograd.grad(value, zk)
        return float(value), grad.reshape(-1)

    start = time.time()
    x, iterations, evaluations, reason = minimize_lbfgs(f_and_grad, z.reshape(-1), max_iter, tol)
    if verbose:
        print(f"softdtw_barycenter: L-BFGS of group {group} stopped ({reason}) after {iterations} iterations, "
              f"{evaluations} evaluations, {time.time() - start:.2f} s")
    return x.view(z.shape)


def softdtw_barycenter(X, *, gamma=1.0, weights=None, max_iter=100, lr=0.1, init=None, device=None,
                       verbose=False, fused=None, early_stopping=True, patience=10, tol=None,
                       X_lengths=None, method="adam"):
    """Soft-DTW barycenter: argmin_Z sum_b w_b soft_dtw(Z, X[b]) (Cuturi & Blondel 2017, section 4).

    softdtw-cuda-torch's keywords, defaults and result: X (B, N, D) -> Z (N, D), weights (B,)
    (normalised to sum 1; None: uniform), init (N_z, D) (None: the weighted mean of X), device
    (None: X's device; X, weights and init are moved there), fused as for soft_dtw, and the Adam
    schedule: lr cosine-annealed to lr / 10 over max_iter steps, gradient norm clipped to 1,
    early stopping (once past max_iter // 2) after patience steps without an improvement > tol.
    verbose prints the loss every 20 iterations and when a group stops.

    Beyond it:
      X_lengths (B,): the true lengths of padded series; the default init then averages each
        series linearly resampled to N rows (tslearn's initialisation).
      weights (K, B): K barycenters in one call, row k weighting group k (zero: not a member);
        returns (K, N_z, D). init may then be (K, N_z, D). Adam runs the K groups batched, each
        with its own clip, early stopping and result; L-BFGS runs them one after the other. Either
        way the result is that of K separate calls.
      method='lbfgs': tslearn's method, scipy's L-BFGS-B as tslearn calls it (minimize(tol=tol,
        options=dict(maxiter=max_iter))), rewritten in torch (lbfgs.py): each group on its own,
        on tslearn's objective (the weights as given, ones for None), stopping once
        max |gradient| <= tol or the objective's relative reduction (f_old - f) / max(|f_old|, |f|, 1)
        <= tol, or after max_iter iterations. The iterates are L-BFGS-B's up to rounding (the same
        iterations and evaluations on test problems); the difference left is that the objective
        is computed in X's dtype where tslearn's is float64. lr, early_stopping and patience
        apply to Adam only.
      tol: None is the method's default, 1e-5 for Adam (softdtw-cuda-torch's) and 1e-3 for
        L-BFGS (tslearn's).
    """
    check_series_set(X, "X")
    gamma = _check_gamma(gamma, smooth_for="softdtw_barycenter")
    _check_options(max_iter, lr, patience, tol, method)
    device = torch.device(device) if device is not None else X.device
    _check_real(X, "X")
    X = X.detach().to(device)
    check_optimisable(X, "X", "softdtw_barycenter")
    B, N, _ = X.shape
    lengths, _ = check_set_lengths(X_lengths, X, "X_lengths")
    check_finite_set(X, lengths, "X")
    W, totals, single = _check_weights(weights, B, device, X.dtype)
    K = W.shape[0]
    if init is None:
        series = resample(X, lengths, N)
        Z = (W @ series.reshape(B, -1)).view(K, N, -1)
    else:
        Z = _check_init(init, K, single, X, device)
    tol = DEFAULT_TOL[method] if tol is None else tol
    if method == "adam":
        Z.requires_grad_(True)
        _adam(Z, _Objective(X, W, lengths, gamma, fused), max_iter, lr, early_stopping, patience, tol, verbose)
        Z = Z.detach()
    else:
        Z = torch.stack([_lbfgs(Z[k], _Objective(X, W[k:k + 1], lengths, gamma, fused), float(totals[k]), max_iter,
                                tol, verbose, k) for k in range(K)])
    return Z[0] if single else Z
