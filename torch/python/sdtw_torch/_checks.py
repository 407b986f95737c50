"""Validation of the tensor arguments in Python, before any sdtw operator runs.

The same checks (and messages, and exception types) as torch/src/checks.cpp: shapes, dtypes and
devices, and, for lengths given on the CPU, their values and the band. Doing them here first means
that a bad call never reaches an operator kernel (whichever autograd path torch takes: the
torch.library.register_autograd path of torch >= 2.4 redispatches straight to the kernel of the
highest backend among the arguments, CUDA for mixed CPU/CUDA inputs). Lengths on a CUDA device
are left to the operators' asynchronous checks (reading them here would sync with the host).

ValueError: bad shapes or values; TypeError: bad dtypes; RuntimeError: bad devices (as
TORCH_CHECK_VALUE, TORCH_CHECK_TYPE and TORCH_CHECK do in the operators).
"""
import torch


def _shape(t):
    return tuple(t.shape)


def _require_tensor(t, name):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor (got {type(t).__name__})")


def _check_floating(t, name):
    if not t.dtype.is_floating_point:
        raise TypeError(f"{name} must be a floating-point tensor (got {t.dtype})")


def check_xy(x, y):
    """Returns (batch, n, m, unbatched, device) for x (B, N, D) or (N, D) and y (B, M, D) or (M, D)."""
    _require_tensor(x, "x")
    _require_tensor(y, "y")
    if x.dim() not in (2, 3):
        raise ValueError(f"x must have shape (B, N, D) or (N, D) (got {_shape(x)})")
    if y.dim() not in (2, 3):
        raise ValueError(f"y must have shape (B, M, D) or (M, D) (got {_shape(y)})")
    if x.dim() != y.dim():
        raise ValueError(
            f"x and y must both be batched (3-D) or both unbatched (2-D) (got x: {_shape(x)}, y: {_shape(y)})"
        )
    _check_floating(x, "x")
    _check_floating(y, "y")
    if x.dtype != y.dtype:
        raise TypeError(f"x and y must have the same dtype (x: {x.dtype}, y: {y.dtype})")
    if x.device != y.device:
        raise RuntimeError(f"x and y must be on the same device (x: {x.device}, y: {y.device})")
    unbatched = x.dim() == 2
    a = x.unsqueeze(0) if unbatched else x
    b = y.unsqueeze(0) if unbatched else y
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"x and y must have the same batch size (x: {a.shape[0]}, y: {b.shape[0]})")
    if a.shape[2] != b.shape[2]:
        raise ValueError(f"x and y must have the same number of features (x: {a.shape[2]}, y: {b.shape[2]})")
    if a.shape[1] < 1:
        raise ValueError(f"x must have at least one time step (got shape {_shape(x)})")
    if b.shape[1] < 1:
        raise ValueError(f"y must have at least one time step (got shape {_shape(y)})")
    if a.shape[2] < 1:
        raise ValueError(f"x and y must have at least one feature (got x: {_shape(x)})")
    return a.shape[0], a.shape[1], b.shape[1], unbatched, x.device


def check_cost(D):
    """Returns (batch, n, m, unbatched, device) for D (B, N, M) or (N, M)."""
    _require_tensor(D, "D")
    if D.dim() not in (2, 3):
        raise ValueError(f"D must have shape (B, N, M) or (N, M) (got {_shape(D)})")
    _check_floating(D, "D")
    unbatched = D.dim() == 2
    a = D.unsqueeze(0) if unbatched else D
    if a.shape[1] < 1 or a.shape[2] < 1:
        raise ValueError(f"D must have at least one row and one column (got shape {_shape(D)})")
    return a.shape[0], a.shape[1], a.shape[2], unbatched, D.device


def _check_lengths(lengths, name, batch, unbatched, full, device):
    """The lengths as a list of ints when they can be read without a host sync, else None."""
    if lengths is None:
        return None
    _require_tensor(lengths, name)
    dtype = lengths.dtype
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        raise TypeError(f"{name} must be an integer tensor (got {dtype})")
    if unbatched:
        if lengths.numel() != 1:
            raise ValueError(f"{name} must hold one length for unbatched inputs (got shape {_shape(lengths)})")
        lengths = lengths.reshape(1)
    elif lengths.dim() != 1 or lengths.shape[0] != batch:
        raise ValueError(f"{name} must have shape (B,) = ({batch},) (got shape {_shape(lengths)})")
    if lengths.device.type != "cpu" and lengths.device != device:
        raise RuntimeError(
            f"{name} must be on the CPU or on the device of the inputs ({device}), but it is on {lengths.device}"
        )
    if lengths.device.type != "cpu":
        return None
    values = [int(v) for v in lengths.tolist()]
    for b, v in enumerate(values):
        if v < 1 or v > full:
            raise ValueError(f"{name}[{b}] = {v} is out of range [1, {full}]")
    return values


def check_common(shape, bandwidth, x_lengths, y_lengths):
    batch, n, m, unbatched, device = shape
    xl = _check_lengths(x_lengths, "x_lengths", batch, unbatched, n, device)
    yl = _check_lengths(y_lengths, "y_lengths", batch, unbatched, m, device)
    if bandwidth < 0:
        return
    if x_lengths is None and y_lengths is None:
        if abs(n - m) > bandwidth:
            raise ValueError(
                f"bandwidth {bandwidth} leaves no alignment path for N = {n}, M = {m}: "
                f"it must be >= |N - M| = {abs(n - m)}"
            )
        return
    if (x_lengths is not None and xl is None) or (y_lengths is not None and yl is None):
        return  # lengths on the device: the operators check them asynchronously
    for b in range(batch):
        nb = xl[b] if xl is not None else n
        mb = yl[b] if yl is not None else m
        if abs(nb - mb) > bandwidth:
            raise ValueError(
                f"bandwidth {bandwidth} leaves no alignment path for pair {b} (x_lengths = {nb}, "
                f"y_lengths = {mb}): it must be >= {abs(nb - mb)}"
            )


def check_sqeuclidean_call(x, y, bandwidth, x_lengths, y_lengths):
    check_common(check_xy(x, y), bandwidth, x_lengths, y_lengths)


def check_cost_call(D, bandwidth, x_lengths, y_lengths):
    check_common(check_cost(D), bandwidth, x_lengths, y_lengths)
