"""The functional API: soft_dtw, soft_dtw_cost, alignment, alignment_from_cost, pairwise_cost,
subsequence_end, subsequence_end_from_cost.

Each function converts its Python arguments (numbers, numpy and 0-d tensor scalars, lists of
lengths) and calls one operator, torch.ops.sdtw.soft_dtw_loss and the like, which validates the
options, names them and computes; the C++ module sdtw::nn::SoftDTW calls the same operators. A
callable dist cannot cross into C++: its cost tensors are computed here and handed to the
cost-tensor operator.
"""
import math
import numbers
from collections import namedtuple

import torch

_Options = namedtuple("_Options", "gamma bandwidth normalize dist fused reduction")
# tslearn's global constraints as the loss operators take them, after check_inputs.
_Constraint = namedtuple("_Constraint", "global_constraint sakoe_chiba_radius itakura_max_slope")
# The warp penalty and subsequence option as the loss operators take them, after the constraint.
_Variant = namedtuple("_Variant", "warp subsequence")
# Where a subsequence alignment ends: the weights over each pair's last row and sum_j j weight_j.
SubsequenceEnd = namedtuple("SubsequenceEnd", "end expected_end")
_INT64 = (-2**63, 2**63 - 1)


def _real(value, name):
    """A Python, numpy or 0-d tensor real number as a float; TypeError naming it otherwise."""
    if isinstance(value, torch.Tensor) and value.dim() == 0 and not value.dtype.is_complex \
            and value.dtype != torch.bool:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number (got {value!r})")
    return float(value)


def _bandwidth(bandwidth):
    """None, or a number as a float (an int past float's range as +-inf): the operator decides."""
    if bandwidth is None:
        return None
    if isinstance(bandwidth, numbers.Integral) and not isinstance(bandwidth, bool):
        return float(bandwidth) if abs(bandwidth) < 2**1000 else math.copysign(math.inf, bandwidth)
    return _real(bandwidth, "bandwidth")


def _fused(fused):
    if fused not in (None, True, False):
        raise TypeError(f"fused must be None, True or False (got {fused!r})")
    return None if fused is None else bool(fused)


def _text(value, name, also=""):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string{also} (got {value!r})")
    return value


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
        if not _INT64[0] <= v <= _INT64[1]:
            raise ValueError(f"{name}[{i}] = {v} does not fit in int64 (lengths are in [1, the series' length])")
    return torch.tensor(values, dtype=torch.int64)


def _constraint(global_constraint=None, sakoe_chiba_radius=None, itakura_max_slope=None):
    """tslearn's constraint keywords as the operators' types (the operator checks their values)."""
    if global_constraint is not None:
        global_constraint = _text(global_constraint, "global_constraint", " ('sakoe_chiba' or 'itakura') or None")
    if sakoe_chiba_radius is not None:
        if isinstance(sakoe_chiba_radius, torch.Tensor) and sakoe_chiba_radius.dim() == 0 \
                and not sakoe_chiba_radius.is_floating_point() and sakoe_chiba_radius.dtype != torch.bool:
            sakoe_chiba_radius = int(sakoe_chiba_radius)
        if not isinstance(sakoe_chiba_radius, numbers.Integral) or isinstance(sakoe_chiba_radius, bool):
            raise TypeError(f"sakoe_chiba_radius must be an integer or None (got {sakoe_chiba_radius!r})")
        if not _INT64[0] <= sakoe_chiba_radius <= _INT64[1]:
            raise ValueError(f"sakoe_chiba_radius {sakoe_chiba_radius} does not fit in int64")
        sakoe_chiba_radius = int(sakoe_chiba_radius)
    if itakura_max_slope is not None:
        itakura_max_slope = _real(itakura_max_slope, "itakura_max_slope")
    return _Constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)


def _variant(warp=0.0, subsequence=False):
    """warp as a float and subsequence as a bool (the operator checks their values and combinations)."""
    if subsequence not in (True, False):
        raise TypeError(f"subsequence must be True or False (got {subsequence!r})")
    return _Variant(_real(warp, "warp"), bool(subsequence))


def _check_tensor(t, name):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor (got {type(t).__name__}); convert it with torch.as_tensor")


def _convert(gamma, bandwidth, normalize, dist, fused, reduction):
    """The options as the operators' types, in their order; a callable dist stays as it is."""
    if not callable(dist):
        dist = _text(dist, "dist", " or a callable (x, y) -> cost")
    return _Options(_real(gamma, "gamma"), _bandwidth(bandwidth), bool(normalize), dist, _fused(fused),
                    _text(reduction, "reduction"))


def _check_not_fused(o):
    """A callable's cost is a tensor, which the fused kernel would not read."""
    if o.fused:
        raise ValueError(f"fused=True requires a named dist such as 'sqeuclidean' (got the callable {o.dist!r})")


def _resolve(gamma, bandwidth, normalize, dist, fused, reduction, c=_Constraint(None, None, None),
             v=_Variant(0.0, False)):
    """The options validated by the operator (with the constraint c, _constraint, and the variant v,
    _variant), with its band (-1: none), canonical dist and fused decided; a callable dist stays, and
    is never fused."""
    o = _convert(gamma, bandwidth, normalize, dist, fused, reduction)
    if callable(o.dist):
        _check_not_fused(o)
        return _Options(*torch.ops.sdtw.soft_dtw_options(*o._replace(dist="sqeuclidean", fused=False), *c,
                                                         *v))._replace(dist=o.dist)
    return _Options(*torch.ops.sdtw.soft_dtw_options(*o, *c, *v))


def _check_gamma(gamma, smooth_for=None):
    """gamma as the operator validates it (finite, >= 0); smooth_for names a caller whose gradient
    steps need a smooth objective, which gamma = 0 (exact DTW) is not."""
    gamma = _resolve(gamma, None, False, "sqeuclidean", None, "none").gamma
    if smooth_for is not None and gamma == 0:
        raise ValueError(f"gamma must be > 0 for {smooth_for} (got {gamma}): its gradient steps need the smooth "
                         "soft-DTW, and gamma = 0 is exact DTW")
    return gamma


def pairwise_cost(x, y, dist="sqeuclidean"):
    """Pairwise costs (B, N, M) (or (N, M)) between the rows of x and y, differentiable.

    dist: 'sqeuclidean', 'euclidean', 'cosine' (1 - cosine similarity), 'l1' or 'negative_dot'
    (-<x_i, y_j>). float16 and
    bfloat16 inputs give a float32 cost (autocast or not).
    """
    return torch.ops.sdtw.pairwise_cost(x, y, dist)


def _callable_cost(a, b, dist):
    """A callable's cost tensor of a and b, which must have the shape of pairwise_cost's."""
    D = dist(a, b)
    expected = tuple(a.shape[:-1]) + (b.shape[-2],)
    if not isinstance(D, torch.Tensor) or tuple(D.shape) != expected:
        got = tuple(D.shape) if isinstance(D, torch.Tensor) else type(D).__name__
        raise ValueError(f"dist: the callable's output must have shape {expected} (B, N, M) for x {tuple(a.shape)} "
                         f"and y {tuple(b.shape)} (got {got})")
    if D.device != a.device:
        # A meta (or other device's) cost beside real inputs would give a result with no data in it.
        raise ValueError(f"dist: the callable's output must be on the inputs' device ({a.device}), "
                         f"but it is on {D.device}")
    return D


def _memory(memory):
    """The memory mode as the operators take it ('auto', 'full' or 'checkpoint'; they check the value)."""
    return _text(memory, "memory", " ('auto', 'full' or 'checkpoint')")


def _callable_soft_dtw(x, y, xl, yl, o, check_inputs, c, v, memory="auto"):
    """The loss for a callable dist: its cost tensors (the self-costs too for normalize) go to the
    cost-tensor operator, which does the rest. Padding is zeroed first as the loss operator does."""
    _check_not_fused(o)
    x, y = torch.ops.sdtw.zero_padding(x, y, xl, yl)
    selves = (_callable_cost(x, x, o.dist), _callable_cost(y, y, o.dist)) if o.normalize else (None, None)
    return torch.ops.sdtw.soft_dtw_cost_loss(_callable_cost(x, y, o.dist), xl, yl, o.gamma, o.bandwidth, o.reduction,
                                             *selves, check_inputs, *c, *v, memory)


def _soft_dtw(x, y, o, x_lengths, y_lengths, check_inputs=False, c=_Constraint(None, None, None),
              v=_Variant(0.0, False), memory="auto"):
    """soft_dtw with converted options o (_convert), constraint c (_constraint), variant v (_variant) and
    memory mode."""
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    memory = _memory(memory)
    if callable(o.dist):
        return _callable_soft_dtw(x, y, xl, yl, o, bool(check_inputs), c, v, memory)
    return torch.ops.sdtw.soft_dtw_loss(x, y, xl, yl, *o, bool(check_inputs), *c, *v, memory)


def soft_dtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None,
             reduction="none", x_lengths=None, y_lengths=None, check_inputs=False, global_constraint=None,
             sakoe_chiba_radius=None, itakura_max_slope=None, warp=0.0, subsequence=False, memory="auto"):
    """Soft-DTW between x (B, N, D) and y (B, M, D) (or unbatched (N, D), (M, D)).

    Returns (B,) (or () unbatched) for reduction='none', else the mean or sum over the batch.
    Differentiable in x and y. See SoftDTW for the keywords.
    """
    options = _convert(gamma, bandwidth, normalize, dist, fused, reduction)
    c = _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)
    return _soft_dtw(x, y, options, x_lengths, y_lengths, check_inputs, c, _variant(warp, subsequence), memory)


def softdtw(x, y, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None):
    """softdtw-cuda-torch's functional name and keywords (returns (B,))."""
    return soft_dtw(x, y, gamma=gamma, bandwidth=bandwidth, normalize=normalize, dist=dist, fused=fused)


def soft_dtw_cost(D, *, gamma=1.0, bandwidth=None, reduction="none", x_lengths=None, y_lengths=None,
                  check_inputs=False, global_constraint=None, sakoe_chiba_radius=None, itakura_max_slope=None,
                  warp=0.0, subsequence=False, memory="auto"):
    """Soft-DTW of a precomputed cost tensor D (B, N, M) (or (N, M)); differentiable in D.
    warp and subsequence as in SoftDTW; memory as SoftDTW's (the state of the CUDA backward; E is
    (B, N, M) whatever the mode)."""
    _check_tensor(D, "D")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    o = _convert(gamma, bandwidth, False, "sqeuclidean", None, reduction)
    c = _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)
    return torch.ops.sdtw.soft_dtw_cost_loss(D, xl, yl, o.gamma, o.bandwidth, o.reduction, None, None,
                                             bool(check_inputs), *c, *_variant(warp, subsequence), _memory(memory))


def alignment_from_cost(D, *, gamma=1.0, bandwidth=None, x_lengths=None, y_lengths=None, check_inputs=False,
                        global_constraint=None, sakoe_chiba_radius=None, itakura_max_slope=None):
    """The expected alignment E = d soft_dtw_cost(D) / d D, same shape as D, entries in [0, 1].

    Zero in padding and outside the band. Differentiable in D: the gradient of <G, E> is the
    Hessian-vector product H G of soft_dtw_cost (0 at gamma = 0, where E is piecewise constant).
    """
    _check_tensor(D, "D")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    o = _convert(gamma, bandwidth, False, "sqeuclidean", None, "none")
    c = _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)
    return torch.ops.sdtw.alignment_from_cost(D, xl, yl, o.gamma, o.bandwidth, bool(check_inputs), *c)


def alignment(x, y, *, gamma=1.0, bandwidth=None, dist="sqeuclidean", x_lengths=None, y_lengths=None,
              check_inputs=False, global_constraint=None, sakoe_chiba_radius=None, itakura_max_slope=None):
    """The expected alignment E (B, N, M) (or (N, M)) of soft_dtw(x, y) for dist.

    Differentiable in x and y (the Hessian-vector product chained through the cost).
    gamma=0 gives the hard path: the 0/1 indicator of one optimal DTW path (ties: the diagonal, then
    (i-1, j), then (i, j-1)), on the CPU and on CUDA."""
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    o = _convert(gamma, bandwidth, False, dist, None, "none")
    c = _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)
    if callable(o.dist):
        x, y = torch.ops.sdtw.zero_padding(x, y, xl, yl)  # the loss's first step: integer series promoted
        return torch.ops.sdtw.alignment_from_cost(_callable_cost(x, y, o.dist), xl, yl, o.gamma, o.bandwidth,
                                                  bool(check_inputs), *c)
    return torch.ops.sdtw.alignment(x, y, xl, yl, o.gamma, o.bandwidth, o.dist, bool(check_inputs), *c)


def subsequence_end_from_cost(D, *, gamma=1.0, warp=0.0, x_lengths=None, y_lengths=None):
    """Where the subsequence alignment of D's rows in its columns ends (soft_dtw_cost(D,
    subsequence=True)): SubsequenceEnd(end, expected_end), end (B, M) (or (M,)) the end's weights
    over each pair's last row (d value / d R there; 0 past y_lengths, one-hot on the first optimal
    column at gamma = 0, NaN where no path is finite), expected_end (B,) = sum_j j end_j, 0-based:
    at gamma = 0 the optimal end column, tslearn's argmin of the last row. Differentiable in D."""
    _check_tensor(D, "D")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    v = _variant(warp, True)
    return SubsequenceEnd(*torch.ops.sdtw.subsequence_end_from_cost(D, xl, yl, _real(gamma, "gamma"), v.warp))


def subsequence_end(x, y, *, gamma=1.0, dist="sqeuclidean", warp=0.0, x_lengths=None, y_lengths=None):
    """Where the subsequence alignment of x (B, N, D) in y (B, M, D) ends (soft_dtw(x, y,
    subsequence=True)): SubsequenceEnd(end, expected_end) as subsequence_end_from_cost gives it."""
    _check_tensor(x, "x")
    _check_tensor(y, "y")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    o, v = _convert(gamma, None, False, dist, None, "none"), _variant(warp, True)
    if callable(o.dist):
        x, y = torch.ops.sdtw.zero_padding(x, y, xl, yl)
        return SubsequenceEnd(*torch.ops.sdtw.subsequence_end_from_cost(_callable_cost(x, y, o.dist), xl, yl, o.gamma,
                                                                         v.warp))
    return SubsequenceEnd(*torch.ops.sdtw.subsequence_end(x, y, xl, yl, o.gamma, o.dist, v.warp))
