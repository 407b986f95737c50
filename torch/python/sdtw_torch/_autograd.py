"""Autograd (and, on torch >= 2.4, fake tensors for torch.compile) for the sdtw operators.

torch >= 2.4: torch.library.register_autograd + register_fake on the operators themselves, so
that torch.compile traces models that use them. Older torch (Debian's 1.13): autograd.Function.
Either way the backward is once-differentiable (double backward raises), and a second backward
through the same call on CUDA (retain_graph=True, gradcheck) recomputes the forward first,
because the CUDA backward overwrites the saved state.
"""
import torch
from torch.autograd.function import once_differentiable

from . import _library

NEW_API = hasattr(torch.library, "register_autograd") and hasattr(torch.library, "register_fake")
_ops = torch.ops.sdtw


def _state_for_backward(ctx, state, recompute):
    if not state.is_cuda:
        return state
    if getattr(ctx, "_sdtw_consumed", False):
        return recompute()
    ctx._sdtw_consumed = True
    return state


def _cost_backward(ctx, dvalues, *_):
    D, state, x_lengths, y_lengths = ctx.saved_tensors
    args = (ctx.gamma, ctx.bandwidth, x_lengths, y_lengths)
    state = _state_for_backward(ctx, state, lambda: _ops.cost_forward(D, *args)[1])
    return (_ops.cost_backward(dvalues, D, state, *args), None, None, None, None)


def _sqeuclidean_backward(ctx, dvalues, *_):
    x, y, state, x_lengths, y_lengths = ctx.saved_tensors
    args = (ctx.gamma, ctx.bandwidth, x_lengths, y_lengths)
    state = _state_for_backward(ctx, state, lambda: _ops.sqeuclidean_forward(x, y, *args)[1])
    grad_x, grad_y = _ops.sqeuclidean_backward(dvalues, x, y, state, *args)
    return (grad_x, grad_y, None, None, None, None)


def _cost_setup(ctx, inputs, output):
    D, gamma, bandwidth, x_lengths, y_lengths = inputs
    ctx.save_for_backward(D, output[1], x_lengths, y_lengths)
    ctx.gamma, ctx.bandwidth = gamma, bandwidth


def _sqeuclidean_setup(ctx, inputs, output):
    x, y, gamma, bandwidth, x_lengths, y_lengths = inputs
    ctx.save_for_backward(x, y, output[1], x_lengths, y_lengths)
    ctx.gamma, ctx.bandwidth = gamma, bandwidth


def _non_differentiable_state(setup):
    def wrapped(ctx, inputs, output):
        setup(ctx, inputs, output)
        ctx.mark_non_differentiable(output[1])

    return wrapped


def _value_dtype(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def _fake_forward(a, n, m, dim, bandwidth):
    """values and state with the shapes, dtypes and devices of the real operators."""
    unbatched = a.dim() == 2
    batch = 1 if unbatched else a.shape[0]
    values = a.new_empty(() if unbatched else (batch,), dtype=_value_dtype(a.dtype))
    if a.device.type == "cuda":
        nbytes = _library.cuda_state_bytes(batch, n, m, dim, bandwidth, a.dtype == torch.float64)
        state = a.new_empty((nbytes,), dtype=torch.uint8)
    else:
        state = a.new_empty((batch, n, m), dtype=torch.float64)
    return values, state


if NEW_API:
    torch.library.register_autograd(
        "sdtw::cost_forward", once_differentiable(_cost_backward), setup_context=_non_differentiable_state(_cost_setup)
    )
    torch.library.register_autograd(
        "sdtw::sqeuclidean_forward", once_differentiable(_sqeuclidean_backward), setup_context=_non_differentiable_state(_sqeuclidean_setup)
    )

    @torch.library.register_fake("sdtw::cost_forward")
    def _(D, gamma, bandwidth=-1, x_lengths=None, y_lengths=None):
        return _fake_forward(D, D.shape[-2], D.shape[-1], 1, bandwidth)

    @torch.library.register_fake("sdtw::sqeuclidean_cost")
    def _(x, y):
        return x.new_empty(x.shape[:-1] + y.shape[-2:-1], dtype=_value_dtype(x.dtype))

    @torch.library.register_fake("sdtw::cost_backward")
    def _(dvalues, D, state, gamma, bandwidth=-1, x_lengths=None, y_lengths=None):
        return torch.empty_like(D, memory_format=torch.contiguous_format)

    @torch.library.register_fake("sdtw::sqeuclidean_forward")
    def _(x, y, gamma, bandwidth=-1, x_lengths=None, y_lengths=None):
        return _fake_forward(x, x.shape[-2], y.shape[-2], x.shape[-1], bandwidth)

    @torch.library.register_fake("sdtw::sqeuclidean_backward")
    def _(dvalues, x, y, state, gamma, bandwidth=-1, x_lengths=None, y_lengths=None):
        return (
            torch.empty_like(x, memory_format=torch.contiguous_format),
            torch.empty_like(y, memory_format=torch.contiguous_format),
        )

    # Under torch.autocast on CUDA, float16/bfloat16 inputs (a model's output next to a float32
    # target) are cast to float32 before the operators see them; outside autocast x and y must agree.
    if hasattr(torch.library, "register_autocast"):
        for _name in ("sdtw::cost_forward", "sdtw::sqeuclidean_forward", "sdtw::pairwise_cost"):
            torch.library.register_autocast(_name, "cuda", torch.float32)

    def cost(D, gamma, bandwidth, x_lengths, y_lengths):
        return _ops.cost_forward(D, gamma, bandwidth, x_lengths, y_lengths)[0]

    def sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths):
        return _ops.sqeuclidean_forward(x, y, gamma, bandwidth, x_lengths, y_lengths)[0]

else:

    class _CostFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, D, gamma, bandwidth, x_lengths, y_lengths):
            output = _ops.cost_forward(D, gamma, bandwidth, x_lengths, y_lengths)
            _cost_setup(ctx, (D, gamma, bandwidth, x_lengths, y_lengths), output)
            return output[0]

        @staticmethod
        @once_differentiable
        def backward(ctx, dvalues):
            return _cost_backward(ctx, dvalues)

    class _SqEuclideanFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, gamma, bandwidth, x_lengths, y_lengths):
            output = _ops.sqeuclidean_forward(x, y, gamma, bandwidth, x_lengths, y_lengths)
            _sqeuclidean_setup(ctx, (x, y, gamma, bandwidth, x_lengths, y_lengths), output)
            return output[0]

        @staticmethod
        @once_differentiable
        def backward(ctx, dvalues):
            return _sqeuclidean_backward(ctx, dvalues)

    def cost(D, gamma, bandwidth, x_lengths, y_lengths):
        return _CostFunction.apply(D, gamma, bandwidth, x_lengths, y_lengths)

    def sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths):
        return _SqEuclideanFunction.apply(x, y, gamma, bandwidth, x_lengths, y_lengths)
