"""check_inputs=True: the data checks that the operators leave out (they would synchronise).

By default non-finite values propagate to their pair's result, as in torch's own losses; with
check_inputs=True a non-finite value, or a length on the device out of range, raises ValueError
naming the argument, the batch index and the position.
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


_AXES = {"x": ("time step", "feature"), "y": ("time step", "feature"), "D": ("row", "column")}


def _first_bad(t, lengths_by_axis):
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


def _check_band(xl, yl, n, m, bandwidth):
    """Every pair's lengths must fit the band (what the operators check for lengths on the CPU)."""
    if bandwidth < 0 or (xl is None and yl is None):
        return
    gap = ((xl if xl is not None else torch.tensor([n])) - (yl if yl is not None else torch.tensor([m]))).abs()
    wide = (gap > bandwidth).nonzero()
    if wide.numel():
        b = int(wide[0, 0])
        raise ValueError(f"bandwidth {bandwidth} is narrower than |x_lengths[{b}] - y_lengths[{b}]| = {int(gap[b])}: "
                         "no alignment fits the band")


def check_finite_inputs(x=None, y=None, D=None, x_lengths=None, y_lengths=None, bandwidth=-1):
    """Raise ValueError at the first non-finite value of x, y or D inside the lengths, or at a
    length out of range or out of the band (lengths on the device, which the operators do not read)."""
    first = x if D is None else D
    n = first.shape[-2]
    m = (y.shape[-2] if y is not None else D.shape[-1])
    # The operator has checked lengths given on the CPU; those on the device it does not read.
    if any(t is not None and t.device.type != "cpu" for t in (x_lengths, y_lengths)):
        _check_band(_check_lengths(x_lengths, "x_lengths", n), _check_lengths(y_lengths, "y_lengths", m), n, m,
                    bandwidth)
    xl, yl = x_lengths, y_lengths
    named = {"D": (D, {0: xl, 1: yl})} if D is not None else {"x": (x, {0: xl}), "y": (y, {0: yl})}
    for name, (t, lengths) in named.items():
        if not t.is_floating_point():
            continue
        position = _first_bad(t, lengths)
        if position is None:
            continue
        b, i, j = position
        value = (t[b, i, j] if t.dim() == 3 else t[i, j]).item()
        where = f"batch index {b}, " if t.dim() == 3 else ""
        raise ValueError(f"{name} has a non-finite value ({value}) at {where}{_AXES[name][0]} {i}, "
                         f"{_AXES[name][1]} {j} (check_inputs=True)")
