"""DILATE (Le Guen & Thome, NeurIPS 2019, "Shape and Time Distortion Loss for Training Deep Time
Series Forecasting Models"): a shape term, soft-DTW of the cost between outputs and targets, and
a temporal term <Omega, E>, E the expected alignment, which penalises alignments far from the
diagonal. The temporal term's gradient is a Hessian-vector product of soft-DTW (the alignment's
backward), on the CPU and on CUDA.
"""
import numbers
from collections import namedtuple

import torch

from .functional import _check_tensor, _lengths, _real, alignment_from_cost, pairwise_cost, soft_dtw_cost

DilateLoss = namedtuple("DilateLoss", "loss shape temporal")


def dilate_omega(n, m, *, lengths=None, dtype=torch.float32, device=None):
    """The temporal penalty (i - j)^2 / N^2, (N, M); with lengths (B,), (B, N, M) with pair b's own N.

    The reference implementation's Omega (i - j)^2 with its division by N_output^2 folded in.
    n, m: ints >= 1. lengths: a 1-D integer tensor (or list of ints) with entries in [1, n].
    """
    for name, size in (("n", n), ("m", m)):
        if isinstance(size, bool) or not isinstance(size, numbers.Integral):
            raise TypeError(f"{name} must be an int (got {size!r})")
        if size < 1:
            raise ValueError(f"{name} must be >= 1 (got {size})")
    lengths = _lengths(lengths, "lengths")
    if lengths is not None:
        if lengths.dim() != 1 or lengths.dtype.is_floating_point or lengths.dtype.is_complex \
                or lengths.dtype == torch.bool:
            raise ValueError(f"lengths must be a 1-D integer tensor (got dtype {lengths.dtype}, "
                             f"shape {tuple(lengths.shape)})")
        bad = ((lengths < 1) | (lengths > n)).nonzero()
        if bad.numel():
            k = int(bad[0, 0])
            raise ValueError(f"lengths[{k}] must be in [1, n] = [1, {n}] (got {int(lengths[k])})")
    return _omega(n, m, lengths, dtype, device)


def _omega(n, m, lengths, dtype, device):
    """dilate_omega without its checks, for dilate, whose operators check the lengths (the
    check of a CUDA tensor would wait for the device)."""
    i = torch.arange(n, dtype=dtype, device=device).view(n, 1)
    j = torch.arange(m, dtype=dtype, device=device).view(1, m)
    squared = (i - j).pow(2)
    if lengths is None:
        return squared / float(n) ** 2
    return squared / lengths.to(device=device, dtype=dtype).pow(2).view(-1, 1, 1)


def _reduce(values, reduction):
    if reduction == "mean":
        return values.mean()
    return values.sum() if reduction == "sum" else values


def dilate(outputs, targets, *, alpha=0.5, gamma=0.01, Omega=None, bandwidth=None, dist="sqeuclidean",
           reduction="mean", x_lengths=None, y_lengths=None, global_constraint=None, sakoe_chiba_radius=None,
           itakura_max_slope=None):
    """DILATE between outputs (B, N, D) and targets (B, M, D) (or unbatched (N, D), (M, D)).

    loss = alpha * soft_dtw(D) + (1 - alpha) * <Omega, E(D)>, D = pairwise_cost(outputs, targets, dist)
    (rows: the outputs' time steps). Returns DilateLoss(loss, shape, temporal), as the reference's
    dilate_loss returns (loss, loss_shape, loss_temporal); reduction 'mean' (the reference's
    batch average), 'sum' or 'none' applies to all three.

    alpha: weight of the shape term, in [0, 1]. gamma: soft-DTW smoothing (>= 0; at 0, exact DTW,
    whose alignment is piecewise constant in the cost, so the temporal term has no gradient).
    Omega: (N, M) or (B, N, M); default (i - j)^2 / N^2 (dilate_omega), N the pair's x_lengths
    when given. x_lengths, y_lengths: the true lengths of outputs and targets in a padded batch.
    bandwidth and tslearn's global_constraint, sakoe_chiba_radius, itakura_max_slope as in soft_dtw.
    """
    _check_tensor(outputs, "outputs")
    _check_tensor(targets, "targets")
    alpha = _real(alpha, "alpha")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1] (got {alpha})")
    xl, yl = _lengths(x_lengths, "x_lengths"), _lengths(y_lengths, "y_lengths")
    D = pairwise_cost(outputs, targets, dist)
    n, m = D.shape[-2:]
    if Omega is None:
        Omega = _omega(n, m, xl, D.dtype, D.device)
        if D.dim() == 2 and xl is not None:
            Omega = Omega[0]
    else:
        _check_tensor(Omega, "Omega")
        if tuple(Omega.shape) not in ((n, m), tuple(D.shape)):
            raise ValueError(f"Omega must have shape (N, M) = {(n, m)} or that of the cost {tuple(D.shape)} "
                             f"(got {tuple(Omega.shape)})")
        Omega = Omega.to(dtype=D.dtype, device=D.device)
    keywords = dict(gamma=gamma, bandwidth=bandwidth, x_lengths=xl, y_lengths=yl, global_constraint=global_constraint,
                    sakoe_chiba_radius=sakoe_chiba_radius, itakura_max_slope=itakura_max_slope)
    shape = soft_dtw_cost(D, reduction=reduction, **keywords)  # the operator validates reduction
    temporal = _reduce((alignment_from_cost(D, **keywords) * Omega).sum((-2, -1)), reduction)
    return DilateLoss(alpha * shape + (1.0 - alpha) * temporal, shape, temporal)
