"""Would a Hessian-vector product built on the kernels' saved state be accurate enough? The state
keeps each cell's three softmin weights quantised as CellState<float>::encode does (two unorm16, the
third the remainder of 65535). This runs the second-order sweeps of reference/src/second_order.cpp
(Rdot forward, E and Edot back, Mensch & Blondel 2018) once with the exact float64 weights and once
with the quantised ones, on the same float64 cost, and prints the relative L2 error of E and of
H Z. CPU, numpy, small sizes. Run: python3 hvp_quantised.py [N ...]"""
import sys

import numpy as np


def weights_of(R, gamma):
    """Exact softmin weights of the predecessors (diag, up, left) of every cell (1-based R)."""
    N, M = R.shape[0] - 1, R.shape[1] - 1
    W = np.zeros((N + 1, M + 1, 3))
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            p = np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]])
            m = p.min()
            e = np.exp(-(p - m) / gamma)
            W[i, j] = e / e.sum()
    return W


def quantised(W):
    """CellState<float>::encode on the exact weights (the weights sum to 1, so inv_sum = 1)."""
    Q = np.empty_like(W)
    qd = np.minimum(np.rint(W[..., 0] * 65535.0), 65535.0)
    qu = np.rint(W[..., 1] * 65535.0)
    over = (W[..., 2] == 0) | (qd + qu > 65535.0)
    qu = np.where(over, 65535.0 - qd, qu)
    Q[..., 0], Q[..., 1], Q[..., 2] = qd / 65535.0, qu / 65535.0, (65535.0 - qd - qu) / 65535.0
    return Q


def soft_dtw_R(D, gamma):
    N, M = D.shape
    R = np.full((N + 1, M + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            p = np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]])
            m = p.min()
            R[i, j] = D[i - 1, j - 1] + m - gamma * np.log(np.exp(-(p - m) / gamma).sum())
    return R


def sweeps(W, Z, gamma):
    """E and Edot = H Z from the weights W (N+1, M+1, 3) and the direction Z (N, M)."""
    N, M = Z.shape
    Rdot = np.zeros((N + 1, M + 1))
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            Rdot[i, j] = Z[i - 1, j - 1] + W[i, j] @ [Rdot[i - 1, j - 1], Rdot[i - 1, j], Rdot[i, j - 1]]
    E = np.zeros((N + 2, M + 2))
    Edot = np.zeros((N + 1, M + 1))
    E[N, M] = 1.0
    for i in range(N, 0, -1):
        for j in range(M, 0, -1):
            if (i, j) != (N, M):
                E[i, j] = (E[i + 1, j + 1] * (W[i + 1, j + 1, 0] if i < N and j < M else 0)
                           + (E[i + 1, j] * W[i + 1, j, 1] if i < N else 0)
                           + (E[i, j + 1] * W[i, j + 1, 2] if j < M else 0))
            w = W[i, j]
            rdot = np.array([Rdot[i - 1, j - 1], Rdot[i - 1, j], Rdot[i, j - 1]])
            mean = w @ rdot
            term = Edot[i, j] * w + E[i, j] * w / gamma * (mean - rdot)
            Edot[i - 1, j - 1] += term[0]
            Edot[i - 1, j] += term[1]
            Edot[i, j - 1] += term[2]
    return E[1:N + 1, 1:M + 1], Edot[1:, 1:]


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [64, 128]
    rng = np.random.default_rng(1)
    for n in sizes:
        x, y = rng.normal(size=(n, 8)), rng.normal(size=(n - 7, 8))
        D = ((x[:, None] - y[None]) ** 2).sum(-1)
        Z = rng.normal(size=D.shape)
        for gamma in (10.0, 1.0, 0.1, 0.01):
            W = weights_of(soft_dtw_R(D, gamma), gamma)
            E, Edot = sweeps(W, Z, gamma)
            Eq, Edotq = sweeps(quantised(W), Z, gamma)
            # Where the weights are near 0 or 1 (small gamma) H Z itself vanishes: its size says whether
            # the relative error means anything.
            print(f"N {n} M {n - 7} D 8 gamma {gamma:g}: quantised weights, relative L2 error of E {rel(Eq, E):.2e}, "
                  f"of H Z {rel(Edotq, Edot):.2e} (|H Z| / |Z| = {np.linalg.norm(Edot) / np.linalg.norm(Z):.1e})")


if __name__ == "__main__":
    main()
