"""The functional API: soft_dtw, soft_dtw_cost, alignment, alignment_from_cost, pairwise_cost."""
import math
from collections import namedtuple

import torch

from . import _autograd

_SQEUCLIDEAN = ("sqeuclidean", "sq_euclidean", "squared_euclidean")
_DISTS = {name: "sqeuclidean" for name in _SQEUCLIDEAN}
_DISTS.update({"euclidean": "euclidean", "cosine": "cosine", "l1": "l1", "manhattan": "l1", "cityblock": "l1"})
_REDUCTIONS = ("none", "mean", "sum")

_Options = namedtuple("_Options", "gamma bandwidth normalize dist fused reduction")


def _check_gamma(gamma):
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not math.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"gamma must be a finite number > 0 (got {gamma!r})")
    return float(gamma)


def _check_bandwidth(bandwidth):
    """None, <= 0 or inf: no band (-1), as in softdtw-cuda-torch; otherwise floor(bandwidth)."""
    if bandwidth is None:
        return -1
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float)) or math.isnan(bandwidth):
        raise ValueError(f"bandwidth must be None or a number (got {bandwidth!r})")
    if bandwidth <= 0 or math.isinf(bandwidth):
        return -1
    return int(math.floor(bandwidth))


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be 'none', 'mean' or 'sum' (got {reduction!r})")
    return reduction


def _resolve(gamma, bandwidth, normalize, dist, fused, reduction):
    if callable(dist):
        canonical = dist
    elif isinstance(dist, str) and dist.lower() in _DISTS:
        canonical = _DISTS[dist.lower()]
    else:
        raise ValueError(
            "dist must be 'sqeuclidean' (or 'sq_euclidean', 'squared_euclidean'), 'euclidean', 'cosine', "
            f"'l1' (or 'manhattan', 'cityblock') or a callable (x, y) -> cost (got {dist!r})"
        )
    if fused not in (None, True, False):
        raise ValueError(f"fused must be None, True or False (got {fused!r})")
    if fused is True and canonical != "sqeuclidean":
        raise ValueError(f"fused=True requires dist='sqeuclidean' (got dist={dist!r})")
    use_fused = canonical == "sqeuclidean" if fused is None else fused
    return _Options(
        _check_gamma(gamma), _check_bandwidth(bandwidth), bool(normalize), canonical, use_fused,
        _check_reduction(reduction),
    )


def _lengths(lengths):
    if lengths is None or isinstance(lengths, torch.Tensor):
        return lengths
    return torch.as_tensor(lengths, dtype=torch.int64)


def _reduce(values, reduction):
    if reduction == "mean":
        return values.mean()
    if reduction == "sum":
        return values.sum()
    return values


def pairwise_cost(x, y, dist="sqeuclidean"):
    """Pairwise costs (B, N, M) (or (N, M)) between the rows of x and y, differentiable.

    dist: 'sqeuclidean', 'euclidean', 'cosine' (1 - cosine similarity) or 'l1'. float16 and
    bfloat16 inputs give a float32 cost (autocast or not).
    """
    return torch.ops.sdtw.pairwise_cost(x, y, dist)


def _pair(a, b, la, lb, o):
    if o.fused:
        return _autograd.sqeuclidean(a, b, o.gamma, o.bandwidth, la, lb)
    D = o.dist(a, b) if callable(o.dist) else torch.ops.sdtw.pairwise_cost(a, b, o.dist)
    return _autograd.cost(D, o.gamma, o.bandwidth, la, lb)


def _soft_dtw(x, y, o, x_lengths, y_lengths):
    xl, yl = _lengths(x_lengths), _lengths(y_lengths)
    values = _pair(x, y, xl, yl, o)
    if o.normalize:
        values = values - 0.5 * (_pair(x, x, xl, xl, o) + _pair(y, y, yl, yl, o))
    return _reduce(values, o.reduction)


def soft_dtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None,
             reduction="none", x_lengths=None, y_lengths=None):
    """Soft-DTW between x (B, N, D) and y (B, M, D) (or unbatched (N, D), (M, D)).

    Returns (B,) (or () unbatched) for reduction='none', else the mean or sum over the batch.
    Differentiable in x and y. See SoftDTW for the keywords.
    """
    return _soft_dtw(x, y, _resolve(gamma, bandwidth, normalize, dist, fused, reduction), x_lengths, y_lengths)


def softdtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None):
    """softdtw-cuda-torch's functional name and keywords (returns (B,))."""
    return soft_dtw(x, y, gamma=gamma, bandwidth=bandwidth, normalize=normalize, dist=dist, fused=fused)


def soft_dtw_cost(D, *, gamma=1.0, bandwidth=None, reduction="none", x_lengths=None, y_lengths=None):
    """Soft-DTW of a precomputed cost tensor D (B, N, M) (or (N, M)); differentiable in D."""
    values = _autograd.cost(
        D, _check_gamma(gamma), _check_bandwidth(bandwidth), _lengths(x_lengths), _lengths(y_lengths)
    )
    return _reduce(values, _check_reduction(reduction))


def alignment_from_cost(D, *, gamma=1.0, bandwidth=None, x_lengths=None, y_lengths=None):
    """The expected alignment E = d soft_dtw_cost(D) / d D, same shape as D, entries in [0, 1].

    Zero in padding and outside the band. Not differentiable.
    """
    gamma, bandwidth = _check_gamma(gamma), _check_bandwidth(bandwidth)
    xl, yl = _lengths(x_lengths), _lengths(y_lengths)
    with torch.no_grad():
        values, state = torch.ops.sdtw.cost_forward(D, gamma, bandwidth, xl, yl)
        return torch.ops.sdtw.cost_backward(torch.ones_like(values), D, state, gamma, bandwidth, xl, yl)


def alignment(x, y, *, gamma=1.0, bandwidth=None, dist="sqeuclidean", x_lengths=None, y_lengths=None):
    """The expected alignment E (B, N, M) (or (N, M)) of soft_dtw(x, y) for dist. Not differentiable."""
    o = _resolve(gamma, bandwidth, False, dist, False, "none")
    with torch.no_grad():
        D = o.dist(x, y) if callable(o.dist) else torch.ops.sdtw.pairwise_cost(x, y, o.dist)
        return alignment_from_cost(D, gamma=gamma, bandwidth=bandwidth, x_lengths=x_lengths, y_lengths=y_lengths)
