"""NaN and infinite costs: the value (and the alignment, NaN where the value is not finite) on
CUDA equals the CPU operator's, at gamma = 0 and gamma > 0, including where a NaN has one
predecessor path to the end: a pair of one row or one column, a length of 1, a band of 0, and a
cell behind a wall of +inf costs. The CPU's own semantics are pinned by the tests not marked cuda."""
import math

import pytest
import torch

import sdtw_torch
from conftest import requires_cuda

NAN, INF = math.nan, math.inf


def costs(b, n, m, seed):
    return torch.rand(b, n, m, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 4


def with_entries(D, entries):
    D = D.clone()
    for (b, i, j), value in entries.items():
        D[b, i, j] = value
    return D


# (shape, lengths, bandwidth, entries {(pair, i, j): cost}); the seed of costs() is the case's index.
CASES = [
    ((2, 1, 40), None, None, {(0, 0, 3): NAN}),
    ((2, 70, 1), None, None, {(0, 5, 0): NAN, (1, 40, 0): NAN}),
    ((3, 6, 9), ([1, 6, 1], [9, 1, 1]), None, {(0, 0, 4): NAN, (1, 2, 0): NAN, (2, 0, 0): NAN}),
    ((1, 40, 40), None, 0, {(0, 10, 10): NAN}),
    ((2, 40, 40), None, None, {**{(0, 20, j): INF for j in range(40)}, (0, 30, 5): NAN}),
    ((2, 10, 12), None, None, {(0, 3, 4): -INF, (1, 9, 11): -INF}),
    ((1, 1, 40), None, None, {(0, 0, 7): -INF}),
    ((1, 40, 40), None, None, {**{(0, 20, j): INF for j in range(40)}, (0, 30, 5): -INF}),
]
IDS = ["1xM", "Nx1", "lengths-1", "band-0", "behind-inf", "-inf", "-inf-1xM", "-inf-behind-inf"]


def case_inputs(index):
    shape, lengths, bandwidth, entries = CASES[index]
    D = with_entries(costs(*shape, seed=index), entries)
    xl, yl = (None, None) if lengths is None else (torch.tensor(lengths[0]), torch.tensor(lengths[1]))
    return D, dict(bandwidth=bandwidth, x_lengths=xl, y_lengths=yl)


@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_cpu_nan_cost_makes_the_pair_nan(gamma):
    # The semantics CUDA must match: a NaN cost on a single row, column or diagonal, or behind +inf costs.
    for index in range(IDS.index("behind-inf") + 1):
        D, keywords = case_inputs(index)
        values = sdtw_torch.soft_dtw_cost(D, gamma=gamma, reduction="none", **keywords)
        assert torch.isnan(values[0]).item(), (IDS[index], values)


def test_cpu_minus_inf_cost_is_nan_at_gamma_zero():
    for index in range(IDS.index("-inf"), len(CASES)):
        D, keywords = case_inputs(index)
        assert torch.isnan(sdtw_torch.soft_dtw_cost(D, gamma=0, reduction="none", **keywords)).all(), IDS[index]


def assert_same_values(got, want, tol):
    assert torch.equal(torch.isnan(got), torch.isnan(want)), (got, want)
    finite = torch.isfinite(want)
    assert torch.equal(got[~finite & ~torch.isnan(want)], want[~finite & ~torch.isnan(want)]), (got, want)
    torch.testing.assert_close(got[finite], want[finite], rtol=tol, atol=0)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@pytest.mark.parametrize("gamma", [0.0, 0.5])
@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("values_only", [pytest.param(v, marks=requires_cuda) for v in (False, True)])
def test_cuda_matches_the_cpu(index, gamma, dtype, tol, values_only):
    D, keywords = case_inputs(index)
    D = D.to(dtype)
    on = {k: (v.cuda() if isinstance(v, torch.Tensor) else v) for k, v in keywords.items()}
    want = sdtw_torch.soft_dtw_cost(D, gamma=gamma, reduction="none", **keywords)
    if values_only:
        with torch.no_grad():
            got = sdtw_torch.soft_dtw_cost(D.cuda(), gamma=gamma, reduction="none", **on).cpu()
        assert_same_values(got, want, tol)
        return
    want_E = sdtw_torch.alignment_from_cost(D, gamma=gamma, **keywords)
    leaf = D.cuda().requires_grad_(True)
    got = sdtw_torch.soft_dtw_cost(leaf, gamma=gamma, reduction="none", **on)
    (got_E,) = torch.autograd.grad(got.sum(), leaf)
    assert_same_values(got.detach().cpu(), want, tol)
    for b in range(D.shape[0]):
        if torch.isfinite(want[b]):
            torch.testing.assert_close(got_E[b].cpu(), want_E[b], rtol=0, atol=1e-4 if dtype == torch.float32 else 1e-10)
        else:
            # NaN inside the pair's lengths, 0 beyond them (the padding), on both devices.
            n = D.shape[1] if keywords["x_lengths"] is None else int(keywords["x_lengths"][b])
            m = D.shape[2] if keywords["y_lengths"] is None else int(keywords["y_lengths"][b])
            for E in (got_E[b].cpu(), want_E[b]):
                assert torch.isnan(E[:n, :m]).all(), (IDS[index], b)
                assert E[n:].eq(0).all() and E[:, m:].eq(0).all(), (IDS[index], b)
