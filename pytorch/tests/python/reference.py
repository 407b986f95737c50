"""A small, independent float64 soft-DTW in numpy (Cuturi & Blondel 2017, Algorithms 1 and 2)."""
import numpy as np


def softmin(a, b, c, gamma):
    m = min(a, b, c)
    if np.isinf(m):
        return np.inf
    return m - gamma * np.log(np.exp(-(a - m) / gamma) + np.exp(-(b - m) / gamma) + np.exp(-(c - m) / gamma))


def sdtw(D, gamma, bandwidth=None):
    """value and E = d value / d D for one cost matrix D (N, M); bandwidth None or k >= 0."""
    D = np.asarray(D, dtype=np.float64)
    N, M = D.shape
    R = np.full((N + 2, M + 2), np.inf)
    R[0, 0] = 0.0
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            if bandwidth is None or abs(i - j) <= bandwidth:
                R[i, j] = D[i - 1, j - 1] + softmin(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1], gamma)
    E = np.zeros((N + 2, M + 2))
    E[N, M] = 1.0

    def weight(i, j, si, sj):
        if si > N or sj > M or np.isinf(R[si, sj]):
            return 0.0
        return np.exp((R[si, sj] - D[si - 1, sj - 1] - R[i, j]) / gamma)

    for i in range(N, 0, -1):
        for j in range(M, 0, -1):
            if (i, j) == (N, M) or np.isinf(R[i, j]):
                continue
            E[i, j] = (E[i + 1, j] * weight(i, j, i + 1, j) + E[i, j + 1] * weight(i, j, i, j + 1)
                       + E[i + 1, j + 1] * weight(i, j, i + 1, j + 1))
    return R[N, M], E[1:N + 1, 1:M + 1]


def sqdist(x, y):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    return ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)


def sdtw_xy(x, y, gamma, bandwidth=None):
    """value, grad_x, grad_y for the squared Euclidean cost."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    value, E = sdtw(sqdist(x, y), gamma, bandwidth)
    gx = 2 * (x * E.sum(1)[:, None] - E @ y)
    gy = 2 * (y * E.sum(0)[:, None] - E.T @ x)
    return value, gx, gy


def hard_dtw(D, bandwidth=None):
    """Exact DTW (gamma = 0): value and the 0/1 alignment of one optimal path, walking back from the
    end and preferring the diagonal, then (i-1, j), then (i, j-1) on ties, as the C++ reference's
    hard_dtw does."""
    D = np.asarray(D, dtype=np.float64)
    N, M = D.shape
    R = np.full((N + 1, M + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            if bandwidth is None or abs(i - j) <= bandwidth:
                R[i, j] = D[i - 1, j - 1] + min(R[i - 1, j - 1], R[i - 1, j], R[i, j - 1])
    E = np.zeros((N, M))
    i, j = N, M
    while True:
        E[i - 1, j - 1] = 1.0
        if (i, j) == (1, 1):
            break
        diag, up, left = R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]
        if diag <= up and diag <= left:
            i, j = i - 1, j - 1
        elif up <= left:
            i -= 1
        else:
            j -= 1
    return R[N, M], E


def all_paths(N, M, bandwidth=None):
    """Every alignment path from (0, 0) to (N-1, M-1) with moves (1, 0), (0, 1), (1, 1), each as a
    list of cells, keeping |i - j| <= bandwidth when given."""
    def extend(path):
        i, j = path[-1]
        if (i, j) == (N - 1, M - 1):
            yield path
            return
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            a, b = i + di, j + dj
            if a < N and b < M and (bandwidth is None or abs(a - b) <= bandwidth):
                yield from extend(path + [(a, b)])
    yield from extend([(0, 0)])


def sdtw_variant(D, gamma, warp=0.0, subsequence=False):
    """The C++ reference's soft_dtw_variant (reference/.../variants.hpp) in numpy: value, E = d value /
    d D, the end's weights over the last row and the expected end column (0-based). warp is added to
    the vertical and horizontal moves; subsequence sets R(0, j) = 0, bars the vertical move out of
    row 0 and takes the softmin over the last row. gamma = 0 is the hard min, the first minimum (the
    diagonal, then up, then left; the first end column) taking all the weight."""
    D = np.asarray(D, dtype=np.float64)
    N, M = D.shape

    def smin(a):
        m = min(a)
        if gamma == 0 or np.isinf(m):
            return m
        return m - gamma * np.log(sum(np.exp(-(v - m) / gamma) for v in a))

    def weights(a):
        if gamma == 0:
            w = np.zeros(len(a))
            w[int(np.argmin(a))] = 1.0
            return w
        w = np.exp(-(np.asarray(a) - min(a)) / gamma)
        return w / w.sum()

    R = np.full((N + 1, M + 1), np.inf)
    R[0, 0] = 0.0
    if subsequence:
        R[0, :] = 0.0

    def moves(i, j):
        up = np.inf if subsequence and i == 1 else R[i - 1, j] + warp
        return [R[i - 1, j - 1], up, R[i, j - 1] + warp]

    for i in range(1, N + 1):
        for j in range(1, M + 1):
            R[i, j] = D[i - 1, j - 1] + smin(moves(i, j))
    first = 1 if subsequence else M
    value = smin(list(R[N, first:]))
    end = np.zeros(M)
    end[first - 1:] = weights(list(R[N, first:]))
    E = np.zeros((N + 1, M + 1))
    E[N, 1:] = end
    for i in range(N, 0, -1):
        for j in range(M, 0, -1):
            if np.isinf(R[i, j]) or E[i, j] == 0.0:
                continue
            w = weights(moves(i, j))
            E[i - 1, j - 1] += E[i, j] * w[0]
            E[i - 1, j] += E[i, j] * w[1]
            E[i, j - 1] += E[i, j] * w[2]
    return value, E[1:, 1:], end, float(np.arange(M) @ end)


def variant_paths(N, M, subsequence=False):
    """Every path of sdtw_variant's definition as (cells, number of vertical and horizontal moves):
    from (0, 0) to (N-1, M-1), or with subsequence from any (0, a) to any (N-1, b)."""
    def extend(path, turns):
        i, j = path[-1]
        if i == N - 1 and (subsequence or j == M - 1):
            yield path, turns
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            a, b = i + di, j + dj
            if a < N and b < M:
                yield from extend(path + [(a, b)], turns + (di + dj == 1))
    for start in range(M if subsequence else 1):
        yield from extend([(0, start)], 0)
