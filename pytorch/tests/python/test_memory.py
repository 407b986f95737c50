"""The memory keyword: 'auto', 'full' or 'checkpoint'. On the CPU every mode takes the CPU path
(the value is still checked); on CUDA the checkpointed gradients against the full state's."""

import pytest
import torch

import sdtw_torch
from conftest import requires_cuda


def series(*shape, dtype=torch.float64, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(device=device, dtype=dtype)


def loss_and_grads(x, y, **options):
    x = x.detach().clone().requires_grad_(True)
    y = y.detach().clone().requires_grad_(True)
    values = sdtw_torch.soft_dtw(x, y, **options)
    (values * torch.arange(1, values.numel() + 1, dtype=values.dtype, device=values.device)).sum().backward()
    return values.detach(), x.grad, y.grad


def test_a_bad_memory_mode_is_named():
    x, y = series(2, 5, 3), series(2, 4, 3, seed=1)
    with pytest.raises(ValueError, match=r"memory must be 'auto', 'full' or 'checkpoint' \(got 'low'\)"):
        sdtw_torch.soft_dtw(x, y, memory="low")
    with pytest.raises(ValueError, match="got 'low'"):
        sdtw_torch.soft_dtw_cost(series(2, 5, 4), memory="low")
    with pytest.raises(TypeError, match="memory must be a string"):
        sdtw_torch.SoftDTW(memory=2)


def test_checkpoint_takes_the_squared_euclidean_fused_cost_or_a_cost_tensor():
    x, y = series(2, 5, 3), series(2, 4, 3, seed=1)
    with pytest.raises(ValueError, match="memory='checkpoint' takes dist='sqeuclidean' or fused=False"):
        sdtw_torch.soft_dtw(x, y, dist="l1", memory="checkpoint")
    sdtw_torch.soft_dtw(x, y, dist="l1", fused=False, memory="checkpoint")


@pytest.mark.parametrize("memory", ["full", "checkpoint"])
def test_every_mode_gives_the_cpu_path_on_the_cpu(memory):
    x, y = series(3, 9, 2), series(3, 7, 2, seed=1)
    options = dict(gamma=0.1, bandwidth=4, x_lengths=[9, 5, 7], y_lengths=[7, 6, 4])
    want = loss_and_grads(x, y, **options)
    got = loss_and_grads(x, y, memory=memory, **options)
    for a, b in zip(got, want):
        assert torch.equal(a, b)
    D = series(3, 9, 7, seed=2).abs().requires_grad_(True)
    sdtw_torch.soft_dtw_cost(D, memory=memory).sum().backward()
    E = D.grad.clone()
    D.grad = None
    sdtw_torch.soft_dtw_cost(D).sum().backward()
    assert torch.equal(E, D.grad)


def test_the_module_keeps_and_shows_its_mode():
    loss = sdtw_torch.SoftDTW(memory="checkpoint")
    assert loss.memory == "checkpoint"
    assert "memory='checkpoint'" in repr(loss)
    x, y = series(2, 6, 2), series(2, 5, 2, seed=1)
    assert torch.equal(loss(x, y), sdtw_torch.soft_dtw(x, y))


def low_level_pair(x, y, gamma, bandwidth, xl, yl, band_rows, dvalues):
    """Values and gradients of the checkpointed operators with bands of band_rows rows."""
    values, state = torch.ops.sdtw.sqeuclidean_checkpoint_forward(x, y, gamma, bandwidth, xl, yl, band_rows)
    gx, gy = torch.ops.sdtw.sqeuclidean_checkpoint_backward(dvalues, x, y, state, gamma, bandwidth, xl, yl, band_rows)
    return values, gx, gy


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is False)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("B, N, M, D, bandwidth, lengths",
                         [(3, 300, 200, 4, -1, None), (2, 517, 260, 8, 300, ([517, 300], [260, 100])), (1, 1, 40, 3, -1, None)])
def test_checkpointed_operators_match_the_full_state(dtype, B, N, M, D, bandwidth, lengths):
    """Bands of 128 rows (several per pair) against the full state: values and grad_x bit for bit
    (each row's E comes from one band), grad_y to rounding (the bands' shares summed in float64)."""
    x, y = series(B, N, D, dtype=dtype, device="cuda"), series(B, M, D, dtype=dtype, device="cuda", seed=1)
    xl, yl = (torch.tensor(lengths[0], device="cuda"), torch.tensor(lengths[1], device="cuda")) if lengths else (None, None)
    dvalues = series(B, dtype=dtype, device="cuda", seed=3)
    values, state = torch.ops.sdtw.sqeuclidean_forward(x, y, 0.5, bandwidth, xl, yl)
    gx, gy = torch.ops.sdtw.sqeuclidean_backward(dvalues, x, y, state, 0.5, bandwidth, xl, yl)
    cvalues, cgx, cgy = low_level_pair(x, y, 0.5, bandwidth, xl, yl, 128, dvalues)
    assert torch.equal(cvalues, values)
    assert torch.equal(cgx, gx)
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    assert ((cgy - gy).double().norm() / gy.double().norm()).item() <= tol


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is False)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_checkpoint_gradients_match_full_through_the_loss(dtype):
    x, y = series(4, 260, 6, dtype=dtype, device="cuda"), series(4, 190, 6, dtype=dtype, device="cuda", seed=1)
    options = dict(gamma=0.3, bandwidth=100, x_lengths=[260, 200, 150, 231], y_lengths=[190, 180, 120, 150])
    full = loss_and_grads(x, y, memory="full", **options)
    checkpoint = loss_and_grads(x, y, memory="checkpoint", **options)
    assert torch.equal(checkpoint[0], full[0])
    for a, b in zip(checkpoint[1:], full[1:]):
        assert ((a - b).double().norm() / b.double().norm()).item() <= (1e-6 if dtype == torch.float32 else 1e-13)
    D = series(3, 150, 140, dtype=dtype, device="cuda", seed=4).abs()
    grads = []
    for memory in ("full", "checkpoint"):
        Dm = D.clone().requires_grad_(True)
        sdtw_torch.soft_dtw_cost(Dm, memory=memory).sum().backward()
        grads.append(Dm.grad)
    assert torch.equal(grads[0], grads[1])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is False)")
def test_a_checkpointed_state_serves_a_second_backward():
    x = series(2, 300, 4, dtype=torch.float32, device="cuda").requires_grad_(True)
    y = series(2, 280, 4, dtype=torch.float32, device="cuda", seed=1)
    values = sdtw_torch.soft_dtw(x, y, memory="checkpoint")
    (first,) = torch.autograd.grad(values.sum(), x, retain_graph=True)
    (second,) = torch.autograd.grad(values.sum(), x)
    assert torch.equal(first, second)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (torch.cuda.is_available() is False)")
def test_auto_names_both_modes_when_neither_fits():
    # N = M = 2^23: 281 TB in full, at least 275 GB checkpointed (kept rows and a band together).
    x = torch.zeros(1, 1 << 23, 1, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"fits in neither mode: the full state needs [0-9.]+ GB, the checkpointed"):
        sdtw_torch.soft_dtw(x, x.detach(), memory="auto")
