"""Soft-DTW on a cost matrix keeping the whole state: R for every cell, then the alignment E by the
backward recursion over successors (docs/DESIGN.md §1, §3.3-§3.4). The baseline that tiled.py must
equal. It repeats reference/src/soft_dtw.cpp's floating-point operations in the same order."""
import math

import numpy as np

INF = math.inf


def in_band(i, j, bandwidth):
    """Cell (i, j), 0-based, is kept: |i - j| <= bandwidth, as reference/src/problem.cpp defines it."""
    return bandwidth is None or abs(i - j) <= bandwidth


def check_problem(cost, gamma, bandwidth, n, m):
    """The lengths (n, m), None meaning the cost's whole size; a bad argument raises naming it."""
    if cost.ndim != 2 or cost.shape[0] < 1 or cost.shape[1] < 1:
        raise ValueError(f"cost must be a non-empty N x M matrix (got shape {cost.shape})")
    N, M = cost.shape
    n = N if n is None else n
    m = M if m is None else m
    if not 1 <= n <= N:
        raise ValueError(f"n must be in [1, N = {N}] (got {n})")
    if not 1 <= m <= M:
        raise ValueError(f"m must be in [1, M = {M}] (got {m})")
    if not (gamma > 0 and math.isfinite(gamma)):
        raise ValueError(f"gamma must be finite and > 0 (got {gamma})")
    if bandwidth is not None:
        if bandwidth < 0:
            raise ValueError(f"bandwidth must be >= 0 or None (got {bandwidth})")
        if abs(n - m) > bandwidth:
            raise ValueError(f"bandwidth {bandwidth} leaves no alignment path for lengths n = {n}, m = {m}: "
                             f"it needs bandwidth >= |n - m| = {abs(n - m)}")
    inside = cost[:n, :m]
    if np.isnan(inside).any() or (inside == -INF).any():
        raise ValueError("cost must be finite or +inf (a forbidden cell) within the lengths n, m")
    return n, m


def softmin(a, b, c, gamma):
    mn = min(a, b, c)
    if mn == INF:
        return INF
    s = math.exp(-(a - mn) / gamma) + math.exp(-(b - mn) / gamma) + math.exp(-(c - mn) / gamma)
    return mn - gamma * math.log(s)


def softmin_weights(a, b, c, gamma):
    """The normalised weights of the three predecessors (diagonal, upper, left) in a cell's softmin."""
    mn = min(a, b, c)
    wa, wb, wc = math.exp((mn - a) / gamma), math.exp((mn - b) / gamma), math.exp((mn - c) / gamma)
    s = wa + wb + wc
    return wa / s, wb / s, wc / s


def forward(cost, gamma, bandwidth, n, m):
    """R, 1-based like the reference: (n + 1) x (m + 1), row and column 0 the boundary."""
    R = np.full((n + 1, m + 1), INF)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if in_band(i - 1, j - 1, bandwidth):
                R[i, j] = cost[i - 1, j - 1] + softmin(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1], gamma)
    return R


def backward(R, gamma):
    """E over n x m: each reachable cell hands its E to its predecessors in proportion to their
    weights in its softmin, in the reference's order (rows and columns descending)."""
    n, m = R.shape[0] - 1, R.shape[1] - 1
    if not math.isfinite(R[n, m]):
        return np.full((n, m), math.nan)
    E = np.zeros((n + 1, m + 1))
    E[n, m] = 1.0
    for i in range(n, 0, -1):
        for j in range(m, 0, -1):
            if R[i, j] == INF:
                continue
            wd, wu, wl = softmin_weights(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1], gamma)
            E[i - 1, j - 1] += E[i, j] * wd
            E[i - 1, j] += E[i, j] * wu
            E[i, j - 1] += E[i, j] * wl
    return E[1:, 1:]


def soft_dtw(cost, gamma, bandwidth=None, n=None, m=None):
    """(R(n, m), E) with E of the cost's shape, zero past the lengths."""
    n, m = check_problem(cost, gamma, bandwidth, n, m)
    R = forward(cost, gamma, bandwidth, n, m)
    E = np.zeros(cost.shape)
    E[:n, :m] = backward(R, gamma)
    return R[n, m], E
