"""The full state against a brute force over all alignment paths; the tiled scheme against the full
state, bit for bit with float64 borders; what the tiled scheme holds at once against model.py."""
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import full_state  # noqa: E402
import model  # noqa: E402
import tiled  # noqa: E402

GAMMAS = (1.0, 0.1, 0.01)


def brute_force(cost, gamma, bandwidth, n, m):
    """Value and E from every monotone path (0, 0) -> (n - 1, m - 1) inside the band: the value is
    the soft minimum of the path costs, E the paths' indicator averaged under their Gibbs weights."""
    def walk(i, j):
        if (i, j) == (n - 1, m - 1):
            yield [(i, j)]
            return
        for a, b in ((i + 1, j), (i, j + 1), (i + 1, j + 1)):
            if a < n and b < m and full_state.in_band(a, b, bandwidth):
                for rest in walk(a, b):
                    yield [(i, j)] + rest

    paths = list(walk(0, 0))
    costs = np.array([sum(cost[c] for c in p) for p in paths])
    low = costs.min()
    weights = np.exp(-(costs - low) / gamma)
    value = low - gamma * math.log(weights.sum())
    E = np.zeros(cost.shape)
    for p, w in zip(paths, weights / weights.sum()):
        for c in p:
            E[c] += w
    return value, E


BRUTE_CASES = [  # N, M, bandwidth, n, m
    (1, 1, None, None, None), (1, 4, None, None, None), (4, 1, None, None, None),
    (2, 3, None, None, None), (3, 3, None, None, None), (4, 4, None, None, None), (4, 3, None, None, None),
    (4, 4, 1, None, None), (4, 3, 1, None, None), (4, 4, 0, None, None), (4, 4, None, 3, 2), (4, 4, 1, 2, 3),
]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("N, M, bandwidth, n, m", BRUTE_CASES)
def test_full_state_equals_brute_force(N, M, bandwidth, n, m, gamma):
    cost = np.random.default_rng(7).random((N, M))
    value, E = full_state.soft_dtw(cost, gamma, bandwidth, n, m)
    n, m = n or N, m or M
    want_value, want_E = brute_force(cost[:n, :m], gamma, bandwidth, n, m)
    assert value == pytest.approx(want_value, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(E[:n, :m], want_E, rtol=0, atol=1e-12)
    assert not E[n:, :].any() and not E[:, m:].any()


TILED_CASES = [  # N, M, S, bandwidth, n, m
    (12, 12, 4, None, None, None),   # S divides both
    (13, 9, 4, None, None, None),    # N != M, S divides neither
    (9, 13, 5, None, None, None),
    (1, 11, 3, None, None, None),    # N = 1
    (11, 1, 3, None, None, None),    # M = 1
    (1, 1, 2, None, None, None),
    (7, 10, 16, None, None, None),   # S larger than N and M
    (7, 10, 8, None, None, None),    # S between N and M
    (17, 17, 1, None, None, None),   # one cell per tile
    (20, 20, 8, 2, None, None),      # band narrower than a tile
    (20, 17, 4, 3, None, None),      # band with N != M
    (24, 24, 3, 5, None, None),
    (20, 20, 6, 0, None, None),      # the diagonal alone
    (16, 14, 4, None, 11, 9),        # lengths n < N, m < M
    (16, 14, 5, 3, 13, 12),          # lengths and band
    (16, 14, 32, None, 5, 14),
]


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("N, M, S, bandwidth, n, m", TILED_CASES)
def test_tiled_equals_full_state_bit_for_bit(N, M, S, bandwidth, n, m, gamma):
    cost = np.random.default_rng(N * 100 + M).random((N, M)) * 2
    value, E = full_state.soft_dtw(cost, gamma, bandwidth, n, m)
    tiled_value, tiled_E = tiled.soft_dtw(cost, gamma, S, bandwidth, n, m)
    assert tiled_value == value
    assert np.array_equal(tiled_E, E)
    n, m = n or N, m or M
    assert E[n - 1, m - 1] == 1.0 and np.all(E[:n, :m] >= 0) and np.all(E <= 1 + 1e-12)


def test_forbidden_cells_and_no_path():
    cost = np.random.default_rng(3).random((9, 8))
    cost[2, 1:6] = np.inf  # forbids a run of cells: paths go round them
    value, E = full_state.soft_dtw(cost, 0.1)
    tiled_value, tiled_E = tiled.soft_dtw(cost, 0.1, 3)
    assert math.isfinite(value) and tiled_value == value and np.array_equal(tiled_E, E)
    assert not E[2, 1:6].any()
    cost[4, :] = np.inf  # a whole row forbidden: no path, +inf and a NaN alignment in both
    value, E = full_state.soft_dtw(cost, 0.1)
    tiled_value, tiled_E = tiled.soft_dtw(cost, 0.1, 3)
    assert value == tiled_value == math.inf and np.isnan(E).all() and np.isnan(tiled_E).all()


@pytest.mark.parametrize("gamma", GAMMAS)
def test_float32_borders_stay_close(gamma):
    """Rounding the kept R to float32 moves the answer (measured at most 9.5e-6 relative L2 on E here,
    at gamma 0.01); a wrong hand-over would move it by O(1)."""
    rng = np.random.default_rng(11)
    for N, S in ((40, 8), (64, 16)):
        cost = rng.random((N, N))
        value, E = full_state.soft_dtw(cost, gamma)
        tiled_value, tiled_E = tiled.soft_dtw(cost, gamma, S, border_dtype=np.float32)
        assert abs(tiled_value - value) <= 1e-7 * abs(value)
        assert np.linalg.norm(tiled_E - E) <= 3e-5 * np.linalg.norm(E)


def in_band_cells(n, m, bandwidth):
    return sum(full_state.in_band(i, j, bandwidth) for i, j in itertools.product(range(n), range(m)))


@pytest.mark.parametrize("n, m, S", [(32, 32, 4), (30, 21, 4), (21, 30, 8), (9, 40, 4), (12, 12, 16), (25, 25, 1)])
def test_held_values_match_the_model(n, m, S):
    cost = np.random.default_rng(5).random((n, m))
    ledger = tiled.Ledger()
    tiled.soft_dtw(cost, 0.1, S, ledger=ledger)
    assert ledger.peak["R border"] == model.border_values(n, m, S)
    assert ledger.peak["tile cells"] <= model.tile_cells(n, m, S)
    if n % S == 0 and m % S == 0:
        assert ledger.peak["tile cells"] == model.tile_cells(n, m, S)
    assert ledger.peak["products"] <= model.product_values(n, m, S)
    assert not any(ledger.live.values())  # everything held was given back
    assert ledger.cells_computed == 2 * n * m  # one forward, one recomputation


@pytest.mark.parametrize("n, m, S, bandwidth", [(32, 32, 4, 2), (30, 27, 4, 3), (24, 24, 8, 0)])
def test_band_holds_no_more_than_the_model(n, m, S, bandwidth):
    cost = np.random.default_rng(6).random((n, m))
    ledger = tiled.Ledger()
    tiled.soft_dtw(cost, 1.0, S, bandwidth, ledger=ledger)
    assert ledger.peak["R border"] < model.border_values(n, m, S)
    assert ledger.peak["tile cells"] <= model.tile_cells(n, m, S)
    assert ledger.peak["products"] <= model.product_values(n, m, S)
    assert not any(ledger.live.values())
    assert ledger.cells_computed == 2 * in_band_cells(n, m, bandwidth)


@pytest.mark.parametrize("kwargs, match", [
    (dict(S=0), "tile size S must be >= 1 \\(got 0\\)"),
    (dict(gamma=0.0), "gamma must be finite and > 0 \\(got 0.0\\)"),
    (dict(bandwidth=-1), "bandwidth must be >= 0 or None \\(got -1\\)"),
    (dict(bandwidth=1), "bandwidth 1 leaves no alignment path for lengths n = 6, m = 4"),
    (dict(n=7), "n must be in \\[1, N = 6\\] \\(got 7\\)"),
    (dict(m=0), "m must be in \\[1, M = 4\\] \\(got 0\\)"),
])
def test_bad_arguments_are_refused(kwargs, match):
    args = dict(cost=np.ones((6, 4)), gamma=1.0, S=2) | kwargs
    with pytest.raises(ValueError, match=match):
        tiled.soft_dtw(**args)


def test_nan_cost_inside_the_lengths_is_refused_and_outside_ignored():
    cost = np.ones((5, 5))
    cost[4, 4] = np.nan
    with pytest.raises(ValueError, match="cost must be finite or \\+inf"):
        full_state.soft_dtw(cost, 1.0)
    value, E = tiled.soft_dtw(cost, 1.0, 2, n=4, m=4)
    assert value == full_state.soft_dtw(cost, 1.0, n=4, m=4)[0] and E[4, 4] == 0.0
