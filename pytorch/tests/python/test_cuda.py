"""sdtw_torch on CUDA: against the float64 CPU path (the reference), gradcheck, autocast, CUDA
graphs, torch.compile, no host sync. Every test here is marked `cuda` and skipped without a GPU."""

import pytest
import torch

import sdtw_torch
from conftest import requires_cuda

pytestmark = requires_cuda
needs_compile = pytest.mark.skipif(not sdtw_torch.COMPILE_SUPPORTED,
                                   reason="torch.compile support needs torch >= 2.4 (register_fake/register_autograd)")


def rand(*shape, dtype=torch.float32, device="cuda", seed=None):
    g = torch.Generator().manual_seed(seed if seed is not None else hash(shape) % 1000)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)


def value_and_grads(fn, x, y):
    x = x.detach().clone().requires_grad_(True)
    y = y.detach().clone().requires_grad_(True)
    values = fn(x, y)
    values.sum().backward()
    return values.detach(), x.grad, y.grad


def rel_l2(a, b):
    return ((a.double().cpu() - b.double().cpu()).norm() / b.double().cpu().norm()).item()


def reference(fn, x, y):
    """The same call in float64 on the CPU (the sdtw float64 reference)."""
    return value_and_grads(fn, x.double().cpu(), y.double().cpu())


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-4), (torch.float64, 1e-10)])
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("n,m", [(1, 1), (1, 33), (40, 1), (64, 64), (100, 37), (37, 130)])
def test_matches_float64_reference(dtype, tol, fused, n, m):
    x, y = rand(3, n, 4, dtype=dtype), rand(3, m, 4, dtype=dtype, seed=1)
    fn = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.1, fused=fused)  # noqa: E731
    v, gx, gy = value_and_grads(fn, x, y)
    rv, rgx, rgy = reference(fn, x, y)
    assert v.dtype == dtype and gx.dtype == dtype
    assert rel_l2(v, rv) < tol and rel_l2(gx, rgx) < tol and rel_l2(gy, rgy) < tol


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("lengths_device", ["cpu", "cuda"])
def test_lengths_bandwidth_normalize(fused, lengths_device):
    x, y = rand(4, 50, 3), rand(4, 45, 3, seed=2)
    xl = torch.tensor([50, 20, 33, 1], device=lengths_device)
    yl = torch.tensor([45, 17, 40, 1], device=lengths_device, dtype=torch.int32)
    for kw in ({}, {"bandwidth": 10}, {"normalize": True}):
        fn = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.3, fused=fused, x_lengths=xl, y_lengths=yl, **kw)  # noqa
        v, gx, gy = value_and_grads(fn, x, y)
        rv, rgx, rgy = value_and_grads(
            lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.3, fused=fused, x_lengths=xl.cpu(), y_lengths=yl.cpu(), **kw),
            x.double().cpu(), y.double().cpu())
        # The divergence is a difference of three fp32 values: a looser bound on the values there.
        assert rel_l2(v, rv) < (1e-3 if kw.get("normalize") else 1e-4)
        assert rel_l2(gx, rgx) < 1e-4 and rel_l2(gy, rgy) < 1e-4
        assert gx[1, 20:].abs().max().item() == 0 and gy[1, 17:].abs().max().item() == 0


def test_cost_tensor_and_alignment():
    D = rand(2, 70, 50).abs()
    E = sdtw_torch.alignment_from_cost(D, gamma=0.2)
    rE = sdtw_torch.alignment_from_cost(D.double().cpu(), gamma=0.2)
    assert rel_l2(E, rE) < 1e-4
    torch.testing.assert_close(sdtw_torch.soft_dtw_cost(D, gamma=0.2).double().cpu(),
                               sdtw_torch.soft_dtw_cost(D.double().cpu(), gamma=0.2), rtol=1e-5, atol=1e-4)
    x, y = rand(2, 30, 3), rand(2, 20, 3, seed=3)
    assert rel_l2(sdtw_torch.alignment(x, y, gamma=0.2), sdtw_torch.alignment(x.double().cpu(), y.double().cpu(),
                                                                                gamma=0.2)) < 1e-4


@pytest.mark.parametrize("fused", [True, False])
def test_gradcheck_cuda_float64(fused):
    x = rand(2, 6, 3, dtype=torch.float64).requires_grad_(True)
    y = rand(2, 5, 3, dtype=torch.float64, seed=4).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.5, fused=fused, normalize=True),
                                    (x, y))
    D = rand(2, 6, 5, dtype=torch.float64).abs().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda d: sdtw_torch.soft_dtw_cost(d, gamma=0.5, bandwidth=2), (D,))


def test_gradient_accuracy_n2048_gamma001():
    """The acceptance bar: rel. L2 error of the fp32 gradient vs float64 below 1e-4 at N = 2048, gamma = 0.01."""
    x, y = rand(2, 2048, 8, seed=5), rand(2, 2048, 8, seed=6)
    loss = sdtw_torch.SoftDTW(gamma=0.01)
    _, gx, gy = value_and_grads(loss, x, y)
    _, rgx, rgy = reference(loss, x, y)
    assert rel_l2(gx, rgx) < 1e-4 and rel_l2(gy, rgy) < 1e-4


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_and_autocast(dtype):
    x, y = rand(2, 40, 8, dtype=dtype), rand(2, 30, 8, dtype=dtype, seed=7)
    v, gx, gy = value_and_grads(sdtw_torch.SoftDTW(gamma=0.1), x, y)
    assert v.dtype == torch.float32 and gx.dtype == dtype and gy.dtype == dtype
    rv, rgx, _ = reference(sdtw_torch.SoftDTW(gamma=0.1), x, y)
    assert rel_l2(v, rv) < 1e-4 and rel_l2(gx, rgx) < 1e-2
    model = torch.nn.Linear(8, 8).cuda()
    for fused in (True, False):
        with torch.autocast("cuda", dtype=dtype):
            out = model(x.float())
            assert out.dtype == dtype
            loss = sdtw_torch.SoftDTW(gamma=0.1, fused=fused, reduction="mean")(out, y.float())
        assert loss.dtype == torch.float32 and torch.isfinite(loss)
        loss.backward()
        assert torch.isfinite(model.weight.grad).all()
        model.zero_grad()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("n,m,d", [(1, 1, 3), (40, 30, 8), (70, 33, 5), (129, 64, 64)])
@pytest.mark.parametrize("autocast", [False, True])
def test_reduced_inputs_are_read_as_float32(dtype, fused, n, m, d, autocast):
    """The kernels read bfloat16 / float16 x and y as they are and compute in float32: values and
    gradients equal the float32 call on the same (widened) numbers, bit for bit, with the gradients
    rounded to the inputs' dtype. Odd D takes the scalar loads, D = 8 and 64 the 16-byte ones."""
    x, y = rand(3, n, d, dtype=dtype), rand(3, m, d, dtype=dtype, seed=4)
    fn = lambda a, b: sdtw_torch.soft_dtw(a, b, gamma=0.1, fused=fused)  # noqa: E731
    with torch.autocast("cuda", dtype=dtype, enabled=autocast):
        v, gx, gy = value_and_grads(fn, x, y)
    v32, gx32, gy32 = value_and_grads(fn, x.float(), y.float())
    assert v.dtype == torch.float32 and gx.dtype == dtype and gy.dtype == dtype
    assert torch.equal(v, v32)
    assert torch.equal(gx, gx32.to(dtype)) and torch.equal(gy, gy32.to(dtype))
    rv, rgx, rgy = reference(fn, x, y)
    assert rel_l2(v, rv) < 1e-5 and rel_l2(gx32, rgx) < 1e-4 and rel_l2(gy32, rgy) < 1e-4


def test_non_contiguous_and_unbatched():
    x, y = rand(3, 4, 60).transpose(1, 2), rand(3, 4, 50, seed=8).transpose(1, 2)
    for fused in (True, False):
        f = lambda a, b: sdtw_torch.soft_dtw(a, b, fused=fused)  # noqa: E731
        v, gx, _ = value_and_grads(f, x, y)
        vc, gxc, _ = value_and_grads(f, x.contiguous(), y.contiguous())
        if fused:
            # The kernels see the same bytes either way and are deterministic.
            assert torch.equal(v, vc) and torch.equal(gx, gxc)
        else:
            # The cost tensor and its gradient come from torch reductions whose summation order
            # depends on the layout, so only the documented float32 accuracy holds between the two.
            torch.testing.assert_close(v, vc, rtol=1e-5, atol=0)
            assert rel_l2(gx, gxc) < 1e-4
        assert f(x[0], y[0]).shape == ()


def test_device_and_dtype_mismatch_are_rejected():
    with pytest.raises(RuntimeError, match="same device"):
        sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3, device="cpu"))
    with pytest.raises(TypeError, match="same dtype"):
        sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"x_lengths\[0\] = 9"):
        sdtw_torch.soft_dtw(rand(2, 5, 3), rand(2, 4, 3), x_lengths=[9, 1])


@pytest.mark.parametrize("fused", [True, False])
def test_retain_graph_second_backward_recomputes_state(fused):
    """Fused: the second backward recomputes the state the first overwrote with E. Unfused: the
    state is intact and D is not kept (only its shape)."""
    x = rand(2, 64, 4).requires_grad_(True)
    out = sdtw_torch.soft_dtw(x, rand(2, 50, 4, seed=9), fused=fused).sum()
    (g1,) = torch.autograd.grad(out, x, retain_graph=True)
    (g2,) = torch.autograd.grad(out, x)
    torch.testing.assert_close(g1, g2)


def test_no_host_sync_with_device_lengths():
    x = rand(4, 64, 4).requires_grad_(True)
    y = rand(4, 48, 4, seed=10)
    xl = torch.tensor([64, 10, 30, 5], device="cuda")
    yl = torch.tensor([48, 12, 20, 7], device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for fused in (True, False):
            loss = sdtw_torch.SoftDTW(gamma=0.1, fused=fused, bandwidth=40)(x, y, xl, yl).sum()
            loss.backward()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()


def test_cuda_graph_capture_and_replay_forward_backward():
    model = torch.nn.Linear(4, 4).cuda()
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, reduction="sum")
    static_x, static_y = rand(3, 80, 4), rand(3, 70, 4, seed=11)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    model.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
    for seed in (12, 13):
        new_x = rand(3, 80, 4, seed=seed)
        static_x.copy_(new_x)
        graph.replay()
        torch.cuda.synchronize()
        replay_loss, replay_grad = static_loss.clone(), model.weight.grad.clone()
        eager_model = torch.nn.Linear(4, 4).cuda()
        eager_model.load_state_dict(model.state_dict())
        eager_loss = loss_fn(eager_model(new_x), static_y)
        eager_loss.backward()
        torch.testing.assert_close(replay_loss, eager_loss)
        torch.testing.assert_close(replay_grad, eager_model.weight.grad)


@needs_compile
@pytest.mark.parametrize("memory", ["full", "checkpoint"])
@pytest.mark.parametrize("fused", [True, False])
def test_torch_compile_small_model(fused, memory):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4)).cuda()
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, fused=fused, reduction="mean", memory=memory)
    x, y = rand(4, 64, 4), rand(4, 48, 4, seed=14)

    def step(inp, target):
        return loss_fn(model(inp), target)

    eager = step(x, y)
    eager.backward()
    g_eager = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(step, fullgraph=True)
    out = compiled(x, y)
    out.backward()
    torch.testing.assert_close(out, eager)
    for p, g in zip(model.parameters(), g_eager):
        torch.testing.assert_close(p.grad, g, rtol=1e-4, atol=1e-5)


@needs_compile
@pytest.mark.parametrize("fused", [True, False])
def test_torch_compile_under_bf16_autocast(fused):
    """The C++ autocast rule (pytorch/src/autocast.cpp) under torch.compile: a bfloat16 model output
    and a bfloat16 target reach the operators uncast in the traced graph as in eager."""
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4).cuda()
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1, fused=fused, reduction="mean")
    x, y = rand(4, 64, 4), rand(4, 48, 4, seed=16)

    def step(inp, target):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_fn(model(inp), target.to(torch.bfloat16))

    eager = step(x, y)
    eager.backward()
    g_eager = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    out = torch.compile(step, fullgraph=True)(x, y)
    out.backward()
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, eager, rtol=2e-2, atol=1e-3)
    for p, g in zip(model.parameters(), g_eager):
        torch.testing.assert_close(p.grad, g, rtol=5e-2, atol=1e-3)


@needs_compile
def test_opcheck_cuda_forward_ops():
    x, y = rand(2, 40, 3).requires_grad_(True), rand(2, 30, 3, seed=15).requires_grad_(True)
    # test_schema is left out: on CUDA the backward overwrites the state (documented, see pytorch/src/autograd.cpp).
    utils = ("test_autograd_registration", "test_faketensor")
    torch.library.opcheck(torch.ops.sdtw.sqeuclidean_forward.default, (x, y, 0.5, -1, None, None), test_utils=utils)
    D = rand(2, 40, 30).abs().requires_grad_(True)
    torch.library.opcheck(torch.ops.sdtw.cost_forward.default, (D, 0.5, 12, None, None), test_utils=utils)


def test_sqeuclidean_cost_operator():
    x, y = rand(3, 40, 5), rand(3, 33, 5, seed=3)
    want = ((x.double()[:, :, None] - y.double()[:, None]) ** 2).sum(-1)
    torch.testing.assert_close(torch.ops.sdtw.sqeuclidean_cost(x, y).double(), want, rtol=1e-5, atol=1e-5)
    assert torch.ops.sdtw.sqeuclidean_cost(x[0], y[0]).shape == (40, 33)
    assert torch.ops.sdtw.sqeuclidean_cost(x.half(), y.half()).dtype == torch.float32
    with pytest.raises(TypeError, match="same dtype"):
        torch.ops.sdtw.sqeuclidean_cost(x, y.double())
    with pytest.raises(ValueError, match="same number of features"):
        torch.ops.sdtw.sqeuclidean_cost(x, y[..., :4])


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("shape", [(3, 40, 33, 5), (2, 1, 70, 130), (1, 129, 1, 17)])
def test_cost_backward_kernel_equals_the_torch_ops_formula(dtype, tol, shape):
    """The unfused cost's backward is one kernel; its CPU twin (and the create_graph path) is the
    formula in torch ops, computed here in float64."""
    b, n, m, d = shape
    x, y, G = rand(b, n, d, dtype=dtype), rand(b, m, d, dtype=dtype, seed=4), rand(b, n, m, dtype=dtype, seed=5)
    gx, gy = torch.ops.sdtw.sqeuclidean_cost_backward(G, x, y)
    wx, wy = torch.ops.sdtw.sqeuclidean_cost_backward(G.double().cpu(), x.double().cpu(), y.double().cpu())
    assert gx.dtype == dtype and gx.is_cuda
    assert rel_l2(gx.double().cpu(), wx) < tol and rel_l2(gy.double().cpu(), wy) < tol
    ux, uy = torch.ops.sdtw.sqeuclidean_cost_backward(G[0], x[0], y[0])  # unbatched
    assert ux.shape == (n, d) and rel_l2(ux.double().cpu(), wx[0]) < tol


def test_unfused_step_gradient_through_the_cost_kernel_and_with_create_graph():
    x, y = rand(4, 50, 6).requires_grad_(), rand(4, 45, 6, seed=6)
    (gx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, fused=False).sum(), x)
    (fx,) = torch.autograd.grad(sdtw_torch.soft_dtw(x, y, fused=True).sum(), x)
    assert rel_l2(gx, fx) < 1e-4
    D = sdtw_torch.pairwise_cost(x, y)
    (g_kernel,) = torch.autograd.grad(D.sum(), x, retain_graph=True)
    (g,) = torch.autograd.grad(D.sum(), x, create_graph=True)  # the torch ops formula
    assert rel_l2(g, g_kernel) < 1e-6
    # d/dx_id of sum_ij,d 2 (x_id - y_jd) is 2 M for every element.
    (h,) = torch.autograd.grad(g.sum(), x)
    assert torch.equal(h, torch.full_like(h, 2.0 * 45))
