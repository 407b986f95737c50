"""Checks of the arguments of the Python-only features (cdist_soft_dtw, k-means, barycenters).

The loss's own arguments, check_inputs=True included, are checked by its operators
(pytorch/src/loss.cpp and input_checks.cpp).
"""
import torch


def integer_at_least(value, low, name):
    """value, an int (not a bool) >= low; else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low} (got {value!r})")
    return value


def number_at_least(value, low, name):
    """value, an int or float (not a bool) >= low (NaN is not); else ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ValueError(f"{name} must be a number >= {low} (got {value!r})")
    return value


def _first_bad(t, lengths_by_axis):
    """The index of t's first non-finite entry inside the lengths ((B, N, M) or one (N, M) series;
    lengths_by_axis maps axis 0 or 1 of a series to its lengths), or None."""
    bad = ~torch.isfinite(t.detach())
    batched = t.dim() == 3
    view = bad if batched else bad.unsqueeze(0)
    for axis, lengths in lengths_by_axis.items():
        if lengths is None:
            continue
        steps = torch.arange(view.shape[1 + axis], device=view.device)
        inside = steps.unsqueeze(0) < lengths.to(view.device).reshape(-1, 1)  # (B, steps)
        view = view & (inside.unsqueeze(2) if axis == 0 else inside.unsqueeze(1))
    where = view.nonzero()
    return None if where.numel() == 0 else where[0].tolist()


def _check_lengths(lengths, name, full):
    if lengths is None:
        return None
    host = lengths.detach().to("cpu", torch.int64).reshape(-1)
    out = ((host < 1) | (host > full)).nonzero()
    if out.numel():
        b = int(out[0, 0])
        raise ValueError(f"{name}[{b}] = {int(host[b])} is out of range [1, {full}]")
    return host
