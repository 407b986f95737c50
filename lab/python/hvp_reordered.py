"""Can the Hessian-vector product's backward sweep run before its forward one, and both skip where
E is 0? With A' the kernels' A less E R_dot(end) / gamma:
    A'(c) = sum_s w_c(s) A'(s) - E(c) G(c) / gamma            (no special case at the end)
    E_dot(c) = A'(c) + E(c) (G(c) - R_dot(c) + R_dot(end)) / gamma,  R_dot(end) = <E, G>,
so E and A' need no R_dot, and R_dot is needed only where E != 0 (a predecessor with a weight into a
cell where E != 0 has E != 0 itself, up to float64 underflow of the product). This checks both
against hvp_quantised.sweeps on the same float32 weights; then R_dot set to 0 on every piece (8
forward steps of a 32-row strip, as the forward sweep skips them) where E and A' are 0; and counts
the 32 x 32 tiles and the pieces whose E is all 0, at the kernel benchmark's inputs (standard
normal, D 64, gamma 1). CPU, numpy. Run: python3 hvp_reordered.py [N ...]"""
import sys

import numpy as np

from hvp_quantised import soft_dtw_R, sweeps, weights_of


def reordered(W, Z, gamma, dead_pieces=False):
    """E and A' backward, then R_dot forward only where E != 0 (or, with dead_pieces, everywhere but
    on the pieces where E and A' are all 0, as the kernel), then E_dot."""
    N, M = Z.shape
    E = np.zeros((N + 2, M + 2))
    A = np.zeros((N + 2, M + 2))
    for i in range(N, 0, -1):
        for j in range(M, 0, -1):
            if (i, j) == (N, M):
                e = 1.0
                a = 0.0
            else:
                e = a = 0.0
                for (si, sj, k) in ((i + 1, j + 1, 0), (i + 1, j, 1), (i, j + 1, 2)):
                    if si <= N and sj <= M:
                        e += E[si, sj] * W[si, sj, k]
                        a += A[si, sj] * W[si, sj, k]
            E[i, j] = e
            A[i, j] = a - e * Z[i - 1, j - 1] / gamma
    E, A = E[1:N + 1, 1:M + 1], A[1:N + 1, 1:M + 1]
    r_end = float((E * Z).sum())
    computed = ~dead_cells(E, A) if dead_pieces else E != 0
    Rdot = np.zeros((N + 1, M + 1))
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            if computed[i - 1, j - 1]:
                Rdot[i, j] = Z[i - 1, j - 1] + W[i, j] @ [Rdot[i - 1, j - 1], Rdot[i - 1, j], Rdot[i, j - 1]]
    Edot = A + E * (Z - Rdot[1:, 1:] + r_end) / gamma
    return E, Edot


def pieces(N, M, rows=32, steps=8):
    """The kernels' pieces, each a list of cells: a strip's rows (lane l on row r + l) over 8 forward
    steps t = j + l."""
    for r in range(0, N, rows):
        for t0 in range(0, M + rows - 1, steps):
            cells = [(r + l, t - l) for l in range(min(rows, N - r)) for t in range(t0, t0 + steps) if 0 <= t - l < M]
            if cells:
                yield cells


def dead_cells(E, A):
    """The cells of the pieces on which E and A' are all 0."""
    dead = np.zeros(E.shape, bool)
    for cells in pieces(*E.shape):
        if all(E[c] == 0 and A[c] == 0 for c in cells):
            for c in cells:
                dead[c] = True
    return dead


def zero_shares(E):
    """Shares of 32 x 32 tiles and of pieces with E all 0."""
    N, M = E.shape
    tiles = [(E[r:r + 32, c:c + 32] == 0).all() for r in range(0, N, 32) for c in range(0, M, 32)]
    return np.mean(tiles), np.mean([all(E[c] == 0 for c in cells) for cells in pieces(N, M)])


def benchmark_cost(n, m, d, seed):
    """The kernel benchmark's kind of pair: standard normal float32 series, their float32 squared
    Euclidean cost widened to float64; and the generator, for a direction after it."""
    g = np.random.default_rng(seed)
    x, y = g.standard_normal((n, d)).astype(np.float32), g.standard_normal((m, d)).astype(np.float32)
    return ((x[:, None] - y[None]) ** 2).sum(-1, dtype=np.float32).astype(np.float64), g


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [48]
    rng = np.random.default_rng(3)
    for n in sizes:
        x, y = rng.normal(size=(n, 8)), rng.normal(size=(n - 5, 8))
        D = ((x[:, None] - y[None]) ** 2).sum(-1)
        Z = rng.normal(size=D.shape)
        for gamma in (10.0, 1.0, 0.1):
            W = weights_of(soft_dtw_R(D, gamma), gamma, float32=True)
            E0, Edot0 = sweeps(W, Z, gamma)
            E1, Edot1 = reordered(W, Z, gamma)
            print(f"N {n} M {n - 5} D 8 gamma {gamma:g}: E max diff {np.abs(E1 - E0).max():.1e}, E_dot max diff / max "
                  f"{np.abs(Edot1 - Edot0).max() / np.abs(Edot0).max():.1e}, E == 0 on {np.mean(E0 == 0):.2f} of the cells")
    for (n, m, d, gamma, seed) in ((300, 290, 6, 0.1, 0), (64, 95, 5, 0.05, 1), (200, 200, 64, 1.0, 2)):
        D, g = benchmark_cost(n, m, d, seed)
        Z = g.standard_normal(D.shape)
        W = weights_of(soft_dtw_R(D, gamma), gamma, float32=True)
        _, Edot0 = sweeps(W, Z, gamma)
        _, Edot1 = reordered(W, Z, gamma, dead_pieces=True)
        print(f"{n} x {m} D {d} gamma {gamma:g}, R_dot 0 on dead pieces: E_dot max diff / max "
              f"{np.abs(Edot1 - Edot0).max() / np.abs(Edot0).max():.2e}")
    for seed in range(2):
        D, _ = benchmark_cost(512, 512, 64, seed)
        W = weights_of(soft_dtw_R(D, 1.0), 1.0, float32=True)
        E, _ = sweeps(W, np.zeros(D.shape), 1.0)
        tile_share, piece_share = zero_shares(E)
        print(f"N 512 D 64 gamma 1 seed {seed}: E == 0 on {np.mean(E == 0):.3f} of the cells, "
              f"{tile_share:.3f} of the 32 x 32 tiles, {piece_share:.3f} of the pieces")


if __name__ == "__main__":
    main()
