"""Fake implementations of the value operators (torch >= 2.4: torch.compile and meta tensors; older
torch: Meta kernels, for meta tensors). The front's operators (sdtw::soft_dtw_loss and the like) are
composites of these and need none. Autograd (pytorch/src/autograd.cpp) and autocast
(pytorch/src/autocast.cpp) live in C++, so a training step runs no Python besides the call itself.
The fakes are here rather than C++ Meta kernels because the CUDA state has another shape than the
CPU one, and a Meta kernel sees neither device.
"""
import torch

from . import _library

NEW_API = hasattr(torch.library, "register_fake")


def _value_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def _values(a):
    return a.new_empty(() if a.dim() == 2 else (a.shape[0],), dtype=_value_dtype(a.dtype))


def _forward(a, n, m, dim, bandwidth):
    """values and state with the shapes, dtypes and devices of the real operators."""
    batch = 1 if a.dim() == 2 else a.shape[0]
    if a.device.type == "cuda":
        nbytes = _library.cuda_state_bytes(batch, n, m, dim, bandwidth, a.dtype == torch.float64)
        state = a.new_empty((nbytes,), dtype=torch.uint8)
    else:
        state = a.new_empty((batch, n, m), dtype=torch.float64)
    return _values(a), state


def _same_device(name, first, lengths=(), **others):
    """A fake runs whenever one argument is a meta tensor, and would return uninitialised memory for
    real inputs beside it: the operators' device rules (checks.cpp), with meta a device like any other."""
    for other, t in others.items():
        if t is not None and t.device != first.device:
            raise RuntimeError(f"{name} and {other} must be on the same device ({name}: {first.device}, "
                               f"{other}: {t.device})")
    for other, t in zip(("x_lengths", "y_lengths"), lengths):
        if t is not None and t.device.type != "cpu" and t.device != first.device:
            raise RuntimeError(f"{other} must be on the CPU or on the device of the inputs ({first.device}), "
                               f"but it is on {t.device}")


def _soft_dtw_sqeuclidean(x, y, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("x", x, (x_lengths, y_lengths), y=y)
    return _values(x)


def _soft_dtw_cost(D, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("D", D, (x_lengths, y_lengths))
    return _values(D)


def _cost_forward(D, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("D", D, (x_lengths, y_lengths))
    return _forward(D, D.shape[-2], D.shape[-1], 1, bandwidth)


def _sqeuclidean_cost(x, y):
    _same_device("x", x, y=y)
    return x.new_empty(x.shape[:-1] + y.shape[-2:-1], dtype=_value_dtype(x.dtype))


def _cost_backward(dvalues, D, state, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("D", D, (x_lengths, y_lengths), dvalues=dvalues, state=state)
    return torch.empty_like(D, memory_format=torch.contiguous_format)


def _sqeuclidean_forward(x, y, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("x", x, (x_lengths, y_lengths), y=y)
    return _forward(x, x.shape[-2], y.shape[-2], x.shape[-1], bandwidth)


def _sqeuclidean_backward(dvalues, x, y, state, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("x", x, (x_lengths, y_lengths), y=y, dvalues=dvalues, state=state)
    return (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        torch.empty_like(y, memory_format=torch.contiguous_format),
    )


def _fused_forward(x, y, dist, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("x", x, (x_lengths, y_lengths), y=y)
    return _forward(x, x.shape[-2], y.shape[-2], x.shape[-1], bandwidth)


def _fused_values(x, y, dist, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("x", x, (x_lengths, y_lengths), y=y)
    return _values(x)


def _fused_backward(dvalues, x, y, dist, state, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    return _sqeuclidean_backward(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths)


def _sqeuclidean_cost_backward(G, x, y):
    _same_device("x", x, y=y, G=G)
    return (
        torch.empty_like(x, memory_format=torch.contiguous_format),
        torch.empty_like(y, memory_format=torch.contiguous_format),
    )


def _alignment_backward(G, D, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("D", D, (x_lengths, y_lengths), G=G)
    return torch.empty_like(D, memory_format=torch.contiguous_format)


def _pairwise_soft_dtw_sqeuclidean(X, Y, x_index, y_index, gamma, bandwidth=-1, x_lengths=None, y_lengths=None,
        sakoe_chiba_radius=-1, itakura_max_slope=0.0):
    _same_device("X", X, (x_lengths, y_lengths), Y=Y, x_index=x_index, y_index=y_index)
    return X.new_empty((x_index.shape[0],), dtype=_value_dtype(X.dtype))


def _checkpoint_state(a, n, m, dim, bandwidth, band_rows):
    batch = 1 if a.dim() == 2 else a.shape[0]
    nbytes = _library.cuda_checkpoint_bytes(batch, n, m, dim, bandwidth, a.dtype == torch.float64, band_rows)
    return a.new_empty((nbytes,), dtype=torch.uint8)


def _sqeuclidean_checkpoint_forward(x, y, gamma, bandwidth, x_lengths, y_lengths, band_rows):
    _same_device("x", x, (x_lengths, y_lengths), y=y)
    return _values(x), _checkpoint_state(x, x.shape[-2], y.shape[-2], x.shape[-1], bandwidth, band_rows)


def _sqeuclidean_checkpoint_backward(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths, band_rows):
    return _sqeuclidean_backward(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths)


def _cost_checkpoint_forward(D, gamma, bandwidth, x_lengths, y_lengths, band_rows):
    _same_device("D", D, (x_lengths, y_lengths))
    return _values(D), _checkpoint_state(D, D.shape[-2], D.shape[-1], 1, bandwidth, band_rows)


def _cost_checkpoint_backward(dvalues, D, state, gamma, bandwidth, x_lengths, y_lengths, band_rows):
    return _cost_backward(dvalues, D, state, gamma, bandwidth, x_lengths, y_lengths)


_FAKES = {
    "soft_dtw_sqeuclidean": _soft_dtw_sqeuclidean,
    "soft_dtw_cost": _soft_dtw_cost,
    "cost_forward": _cost_forward,
    "sqeuclidean_cost": _sqeuclidean_cost,
    "cost_backward": _cost_backward,
    "sqeuclidean_forward": _sqeuclidean_forward,
    "sqeuclidean_backward": _sqeuclidean_backward,
    "fused_forward": _fused_forward,
    "fused_values": _fused_values,
    "fused_backward": _fused_backward,
    "pairwise_soft_dtw_sqeuclidean": _pairwise_soft_dtw_sqeuclidean,
    "sqeuclidean_cost_backward": _sqeuclidean_cost_backward,
    "alignment_backward": _alignment_backward,
    "sqeuclidean_checkpoint_forward": _sqeuclidean_checkpoint_forward,
    "sqeuclidean_checkpoint_backward": _sqeuclidean_checkpoint_backward,
    "cost_checkpoint_forward": _cost_checkpoint_forward,
    "cost_checkpoint_backward": _cost_checkpoint_backward,
}

if NEW_API:
    for _name, _fn in _FAKES.items():
        torch.library.register_fake(f"sdtw::{_name}", _fn)
else:
    # Older torch: the same functions as Meta kernels, so meta tensors work (no torch.compile).
    _meta = torch.library.Library("sdtw", "IMPL")
    for _name, _fn in _FAKES.items():
        _meta.impl(_name, _fn, "Meta")
