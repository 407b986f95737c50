"""Would a Hessian-vector product built on saved weights be accurate enough? The first order's state
keeps each cell's three softmin weights quantised as CellState<float>::encode does (two unorm16, the
third the remainder of 65535); the second order's float32 state keeps them as float32 ("float32",
all three; "float32 two", diag and up alone, left derived), computed as the float32 forward does
(the difference to the smallest predecessor rounded to float32, base-2 exponent, float32 sum and
reciprocal). This runs the second-order sweeps of reference/src/second_order.cpp (Rdot forward, E
and Edot back, Mensch & Blondel 2018) with the exact float64 weights and with each of those, on the
same float64 cost, and prints the relative L2 error of E and of H Z, and H Z's largest error over
its largest entry (the kernel test's measure). CPU, numpy, small sizes. Run: python3
hvp_quantised.py [N ...]"""
import sys

import numpy as np


def weights_of(R, gamma, float32=False):
    """Softmin weights of the predecessors (diag, up, left) of every cell (1-based R): exact, or as the
    float32 forward computes them (exp2 of the float32 difference times a float32 scale, normalised
    by a float32 reciprocal of the float32 sum)."""
    N, M = R.shape[0] - 1, R.shape[1] - 1
    W = np.zeros((N + 1, M + 1, 3))
    scale = np.float32(-1.4426950408889634 / gamma)
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            p = np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]])
            m = p.min()
            if float32:
                e = np.exp2((p - m).astype(np.float32) * scale).astype(np.float32)
                W[i, j] = e * (np.float32(1) / e.sum(dtype=np.float32))
            else:
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


def float32_two_weights(W32):
    """Eight bytes a cell: diag and up as float32, left what is left of them in float64, 0 where the
    float32 left was 0 (a flag bit would carry that)."""
    Q = W32.copy()
    left = np.maximum(0.0, 1.0 - W32[..., 0] - W32[..., 1])
    Q[..., 2] = np.where(W32[..., 2] == 0, 0.0, left)
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
        for gamma in (10.0, 1.0, 0.1, 0.05, 0.01):
            R = soft_dtw_R(D, gamma)
            W, W32 = weights_of(R, gamma), weights_of(R, gamma, float32=True)
            E, Edot = sweeps(W, Z, gamma)
            # Where the weights are near 0 or 1 (small gamma) H Z itself vanishes: its size says whether
            # the relative error means anything.
            for name, W in (("unorm16", quantised(W)), ("float32", W32),
                            ("float32 two", float32_two_weights(W32))):
                Eq, Edotq = sweeps(W, Z, gamma)
                worst = np.abs(Edotq - Edot).max() / np.abs(Edot).max()
                print(f"N {n} M {n - 7} D 8 gamma {gamma:g}: {name} weights, relative L2 error of E {rel(Eq, E):.2e}, "
                      f"of H Z {rel(Edotq, Edot):.2e}, max error / max {worst:.2e} "
                      f"(|H Z| / |Z| = {np.linalg.norm(Edot) / np.linalg.norm(Z):.1e})")


if __name__ == "__main__":
    main()
