"""The functional API: soft_dtw, soft_dtw_cost, alignment, alignment_from_cost, pairwise_cost."""
import math
import numbers
from collections import namedtuple

import torch

from .checks import check_finite_inputs

_SQEUCLIDEAN = ("sqeuclidean", "sq_euclidean", "squared_euclidean")
_DISTS = {name: "sqeuclidean" for name in _SQEUCLIDEAN}
_DISTS.update({"euclidean": "euclidean", "cosine": "cosine", "l1": "l1", "manhattan": "l1", "cityblock": "l1"})
_REDUCTIONS = ("none", "mean", "sum")

_Options = namedtuple("_Options", "gamma bandwidth normalize dist fused reduction")
# A band at least this wide keeps every cell of any tensor that fits in memory: no band.
_NO_BAND_FROM = 2**62


def _real(value):
    """A Python, numpy or 0-d tensor real number as a float; None if it is not one."""
    if isinstance(value, torch.Tensor) and value.dim() == 0 and not value.dtype.is_complex:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _check_gamma(gamma):
    value = _real(gamma)
    if value is None or not math.isfinite(value) or value <= 0:
        raise ValueError(f"gamma must be a finite real number > 0 (got {gamma!r})")
    return value


def _check_bandwidth(bandwidth):
    """None, <= 0 or inf: no band (-1), as in softdtw-cuda-torch; otherwise floor(bandwidth)."""
    if bandwidth is None:
        return -1
    value = _real(bandwidth)
    if value is None or math.isnan(value):
        raise ValueError(f"bandwidth must be None or a real number (got {bandwidth!r})")
    if value <= 0 or value >= _NO_BAND_FROM:
        return -1
    return int(bandwidth) if isinstance(bandwidth, numbers.Integral) else int(math.floor(value))


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


def _lengths(lengths, name):
    """None, an integer tensor (as it is: the operator checks it), or integers given as a list, a
    tuple, a numpy array or one int (an unbatched pair): an int64 tensor on the CPU."""
    if lengths is None or isinstance(lengths, torch.Tensor):
        return lengths
    if isinstance(lengths, numbers.Integral) and not isinstance(lengths, bool):
        lengths = [lengths]
    elif type(lengths).__module__ == "numpy" and hasattr(lengths, "tolist"):  # an array; numpy is optional
        lengths = lengths.tolist()
    values = list(lengths) if isinstance(lengths, (list, tuple, range)) else None
    if values is not None:
        values = [int(v) if isinstance(v, torch.Tensor) and v.dim() == 0 and not v.is_floating_point()
                  and v.dtype != torch.bool else v for v in values]
    if values is None or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{name} must be an integer tensor or a list of integers (got {lengths!r})")
    for i, v in enumerate(values):
        if not 1 <= v < 2**63:
            raise ValueError(f"{name}[{i}] = {v} is out of range [1, the series' length]")
    return torch.tensor(values, dtype=torch.int64)


def _zero_padding(t, lengths):
    """x or y (B, N, D) or unbatched with its time steps past `lengths` set to 0. The gradient
    products multiply padding by E = 0, which a NaN there would turn into NaN for the whole pair;
    a cost tensor D needs none of this (its padding is never read). Lengths the operator will
    refuse (count, dtype, device) are left to it."""
    if lengths is None or not t.is_floating_point() or lengths.is_floating_point() or lengths.dtype == torch.bool:
        return t
    if lengths.device != t.device and lengths.device.type != "cpu":
        return t
    batched = t.dim() == 3 and t.shape[0] == lengths.numel()
    if not batched and not (t.dim() == 2 and lengths.numel() == 1):
        return t
    series = t if batched else t.unsqueeze(0)
    past = torch.arange(series.shape[1], device=t.device) >= lengths.to(t.device).reshape(-1, 1)
    masked = series.masked_fill(past.unsqueeze(2), 0)
    return masked if batched else masked.squeeze(0)


def _check_tensor(t, name):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor (got {type(t).__name__}); convert it with torch.as_tensor")


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


def _cost(a, b, dist):
    """The cost tensor of a and b; a callable's output must have the shape of pairwise_cost's."""
    if not callable(dist):
        return torch.ops.sdtw.pairwise_cost(a, b, dist)
    D = dist(a, b)
    expected = tuple(a.shape[:-1]) + (b.shape[-2],)
    if not isinstance(D, torch.Tensor) or tuple(D.shape) != expected:
        got = tuple(D.shape) if isinstance(D, torch.Tensor) else type(D).__name__
        raise ValueError(f"dist: the callable's output must have shape {expected} (B, N, M) for x {tuple(a.shape)} "
                         f"and y {tuple(b.shape)} (got {got})")
    return D


def _pair(a, b, la, lb, o):
    if o.fused:
        return torch.ops.sdtw.soft_dtw_sqeuclidean(a, b, o.gamma, o.bandwidth, la, lb)
    return torch.ops.sdtw.soft_dtw_cost(_cost(a, b, o.dist), o.gamma, o.bandwidth, la, lb)


def _soft_dtw(x, y, o, x_lengths, y_lengths, check_inputs=False):
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    x, y = _zero_padding(x, xl), _zero_padding(y, yl)
    values = _pair(x, y, xl, yl, o)
    if check_inputs:  # after the operator, which names bad shapes, dtypes and devices first
        check_finite_inputs(x=x, y=y, x_lengths=xl, y_lengths=yl, bandwidth=o.bandwidth)
    if o.normalize:
        values = values - 0.5 * (_pair(x, x, xl, xl, o) + _pair(y, y, yl, yl, o))
    return _reduce(values, o.reduction)


def soft_dtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None,
             reduction="none", x_lengths=None, y_lengths=None, check_inputs=False):
    """Soft-DTW between x (B, N, D) and y (B, M, D) (or unbatched (N, D), (M, D)).

    Returns (B,) (or () unbatched) for reduction='none', else the mean or sum over the batch.
    Differentiable in x and y. See SoftDTW for the keywords.
    """
    options = _resolve(gamma, bandwidth, normalize, dist, fused, reduction)
    return _soft_dtw(x, y, options, x_lengths, y_lengths, check_inputs)


def softdtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None):
    """softdtw-cuda-torch's functional name and keywords (returns (B,))."""
    return soft_dtw(x, y, gamma=gamma, bandwidth=bandwidth, normalize=normalize, dist=dist, fused=fused)


def soft_dtw_cost(D, *, gamma=1.0, bandwidth=None, reduction="none", x_lengths=None, y_lengths=None,
                  check_inputs=False):
    """Soft-DTW of a precomputed cost tensor D (B, N, M) (or (N, M)); differentiable in D."""
    _check_tensor(D, "D")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    bandwidth = _check_bandwidth(bandwidth)
    values = torch.ops.sdtw.soft_dtw_cost(D, _check_gamma(gamma), bandwidth, xl, yl)
    if check_inputs:
        check_finite_inputs(D=D, x_lengths=xl, y_lengths=yl, bandwidth=bandwidth)
    return _reduce(values, _check_reduction(reduction))


def alignment_from_cost(D, *, gamma=1.0, bandwidth=None, x_lengths=None, y_lengths=None, check_inputs=False):
    """The expected alignment E = d soft_dtw_cost(D) / d D, same shape as D, entries in [0, 1].

    Zero in padding and outside the band. Not differentiable.
    """
    _check_tensor(D, "D")
    gamma, bandwidth = _check_gamma(gamma), _check_bandwidth(bandwidth)
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    with torch.no_grad():
        values, state = torch.ops.sdtw.cost_forward(D, gamma, bandwidth, xl, yl)
        if check_inputs:
            check_finite_inputs(D=D, x_lengths=xl, y_lengths=yl, bandwidth=bandwidth)
        return torch.ops.sdtw.cost_backward(torch.ones_like(values), D, state, gamma, bandwidth, xl, yl)


def alignment(x, y, *, gamma=1.0, bandwidth=None, dist="sqeuclidean", x_lengths=None, y_lengths=None,
              check_inputs=False):
    """The expected alignment E (B, N, M) (or (N, M)) of soft_dtw(x, y) for dist. Not differentiable."""
    o = _resolve(gamma, bandwidth, False, dist, False, "none")
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    with torch.no_grad():
        E = alignment_from_cost(_cost(x, y, o.dist), gamma=gamma, bandwidth=bandwidth, x_lengths=xl, y_lengths=yl)
    if check_inputs:
        check_finite_inputs(x=x, y=y, x_lengths=xl, y_lengths=yl, bandwidth=o.bandwidth)
    return E
