"""Checkpointed soft-DTW on a cost matrix (lab/checkpoint/README.md): the forward keeps R only on
the borders of S x S tiles; the backward walks the anti-diagonals of tiles in reverse, recomputes each
tile's R from its stored borders and hands E-products across its top and left borders. Each cell
repeats full_state.py's floating-point operations on the same operands, so R, the value and E are
the full state's bit for bit (with float64 borders)."""
import math
from collections import Counter

import numpy as np

from full_state import INF, check_problem, in_band, softmin, softmin_weights

DIAG, BELOW, RIGHT = 0, 1, 2  # the successor a product comes from: (i+1, j+1), (i+1, j), (i, j+1)


class Tiles:
    """The grid of S x S tiles over the n x m cells (the last row and column of tiles may be short);
    a tile is active when some cell of it lies in the band."""

    def __init__(self, n, m, S, bandwidth):
        if S < 1:
            raise ValueError(f"tile size S must be >= 1 (got {S})")
        self.n, self.m, self.S, self.bandwidth = n, m, S, bandwidth
        self.rows, self.cols = -(-n // S), -(-m // S)

    def span(self, ti, tj):
        S = self.S
        return ti * S, min((ti + 1) * S, self.n), tj * S, min((tj + 1) * S, self.m)

    def active(self, ti, tj):
        if not (0 <= ti < self.rows and 0 <= tj < self.cols):
            return False
        if self.bandwidth is None:
            return True
        i0, i1, j0, j1 = self.span(ti, tj)
        return max(0, j0 - (i1 - 1), i0 - (j1 - 1)) <= self.bandwidth  # the tile's smallest |i - j|

    def diagonal(self, d):
        """The active tiles with ti + tj = d: independent of one another in both directions."""
        return [(ti, d - ti) for ti in range(max(0, d - self.cols + 1), min(d, self.rows - 1) + 1)
                if self.active(ti, d - ti)]

    def diagonals(self):
        return range(self.rows + self.cols - 1)


class Ledger:
    """Values held at once, by kind ('tile cells', 'R border', 'products'), their peaks, and the cells
    whose R was computed (forward and recomputation)."""

    def __init__(self):
        self.live, self.peak = Counter(), Counter()
        self.cells_computed = 0

    def hold(self, kind, count):
        self.live[kind] += count
        self.peak[kind] = max(self.peak[kind], self.live[kind])

    def free(self, kind, count):
        self.live[kind] -= count


class Borders:
    """R on the last row and last column of each tile, kept from the forward for the tiles that read
    them: the tile below (top row) and below-right (corner), the tile right (left column)."""

    def __init__(self, tiles, dtype, ledger):
        self.tiles, self.dtype, self.ledger = tiles, dtype, ledger
        self.bottom, self.right = {}, {}

    def keep(self, ti, tj, R):
        if self.tiles.active(ti + 1, tj) or self.tiles.active(ti + 1, tj + 1):
            self.bottom[ti, tj] = R[-1, 1:].astype(self.dtype)
            self.ledger.hold("R border", R.shape[1] - 1)
        if self.tiles.active(ti, tj + 1):
            self.right[ti, tj] = R[1:, -1].astype(self.dtype)
            self.ledger.hold("R border", R.shape[0] - 1)

    def predecessors(self, ti, tj):
        """The tile's top row, left column and corner of predecessors; +inf where no tile kept them
        (the boundary, or a tile off the band), R(0, 0) = 0 at the origin."""
        i0, i1, j0, j1 = self.tiles.span(ti, tj)
        top = self.bottom.get((ti - 1, tj), np.full(j1 - j0, INF))
        left = self.right.get((ti, tj - 1), np.full(i1 - i0, INF))
        if (ti, tj) == (0, 0):
            corner = 0.0
        else:
            corner = self.bottom[ti - 1, tj - 1][-1] if (ti - 1, tj - 1) in self.bottom else INF
        return top.astype(np.float64), left.astype(np.float64), float(corner)

    def release(self, ti, tj):
        """Frees, once tile (ti, tj) has recomputed its R in the backward, what no later tile reads:
        the left column, the top row (its corner reader (ti, tj + 1) came earlier), and the corner's
        row when the tile left of this one, its other reader, is off the band."""
        done = [(self.right, (ti, tj - 1)), (self.bottom, (ti - 1, tj))]
        if not self.tiles.active(ti, tj - 1):
            done.append((self.bottom, (ti - 1, tj - 1)))
        for store, key in done:
            if key in store:
                self.ledger.free("R border", len(store.pop(key)))


class Rim:
    """Products E(s) w(s <- c) handed into a tile's last row (by the tile below) and last column (by
    the tile right). row_from_diag[-1], the corner cell's diagonal product, comes from the tile
    below-right; the column's diagonal products cover all its rows but the last."""

    def __init__(self, h, w):
        self.row_from_diag, self.row_from_below = np.zeros(w), np.zeros(w)
        self.col_from_diag, self.col_from_right = np.zeros(h - 1), np.zeros(h)

    def size(self):
        return sum(a.size for a in (self.row_from_diag, self.row_from_below, self.col_from_diag,
                                    self.col_from_right))


def tile_forward(cost, tiles, ti, tj, top, left, corner, gamma, ledger):
    """R over the tile with its predecessors: (h + 1) x (w + 1), row 0 the top, column 0 the left."""
    i0, i1, j0, j1 = tiles.span(ti, tj)
    R = np.full((i1 - i0 + 1, j1 - j0 + 1), INF)
    R[0, 0], R[0, 1:], R[1:, 0] = corner, top, left
    for a in range(1, i1 - i0 + 1):
        for b in range(1, j1 - j0 + 1):
            i, j = i0 + a - 1, j0 + b - 1
            if in_band(i, j, tiles.bandwidth):
                R[a, b] = cost[i, j] + softmin(R[a - 1, b - 1], R[a - 1, b], R[a, b - 1], gamma)
                ledger.cells_computed += 1
    return R


def tile_backward(R, rim, gamma, is_last):
    """E over the tile and the products it hands out, P[role, a, b] being the product into local
    cell (a - 1, b - 1) from its successor in that role: row 0 and column 0 of P go to the tiles
    above, left and above-left. E(c) sums its three products in the order the full state adds them."""
    h, w = R.shape[0] - 1, R.shape[1] - 1
    P = np.zeros((3, h + 1, w + 1))
    P[DIAG, h, 1:], P[BELOW, h, 1:] = rim.row_from_diag, rim.row_from_below
    P[DIAG, 1:h, w], P[RIGHT, 1:, w] = rim.col_from_diag, rim.col_from_right
    E = np.zeros((h, w))
    for a in range(h, 0, -1):
        for b in range(w, 0, -1):
            if R[a, b] == INF:
                continue
            e = 1.0 if is_last and (a, b) == (h, w) else P[DIAG, a, b] + P[BELOW, a, b] + P[RIGHT, a, b]
            wd, wu, wl = softmin_weights(R[a - 1, b - 1], R[a - 1, b], R[a, b - 1], gamma)
            P[DIAG, a - 1, b - 1], P[BELOW, a - 1, b], P[RIGHT, a, b - 1] = e * wd, e * wu, e * wl
            E[a - 1, b - 1] = e
    return E, P


def hand_over(P, tiles, ti, tj, rims, ledger):
    """Writes the tile's outgoing products into the rims of the tiles above, left and above-left;
    tiles of one anti-diagonal write disjoint parts of a rim."""
    def rim_of(key):
        if key not in rims:
            i0, i1, j0, j1 = tiles.span(*key)
            rims[key] = Rim(i1 - i0, j1 - j0)
            ledger.hold("products", rims[key].size())
        return rims[key]

    w, h = P.shape[2] - 1, P.shape[1] - 1
    if tiles.active(ti - 1, tj):
        above = rim_of((ti - 1, tj))
        above.row_from_diag[:w - 1], above.row_from_below[:] = P[DIAG, 0, 1:w], P[BELOW, 0, 1:]
    if tiles.active(ti, tj - 1):
        left = rim_of((ti, tj - 1))
        left.col_from_diag[:], left.col_from_right[:] = P[DIAG, 1:h, 0], P[RIGHT, 1:, 0]
    if tiles.active(ti - 1, tj - 1):
        rim_of((ti - 1, tj - 1)).row_from_diag[-1] = P[DIAG, 0, 0]


def soft_dtw(cost, gamma, S, bandwidth=None, n=None, m=None, border_dtype=np.float64, ledger=None):
    """(R(n, m), E) as full_state.soft_dtw computes them, holding R only on tile borders between the
    two passes. ledger, if given, records the values held at once."""
    n, m = check_problem(cost, gamma, bandwidth, n, m)
    tiles = Tiles(n, m, S, bandwidth)
    ledger = Ledger() if ledger is None else ledger
    borders = Borders(tiles, border_dtype, ledger)
    last = (tiles.rows - 1, tiles.cols - 1)

    value = INF
    for d in tiles.diagonals():
        for ti, tj in tiles.diagonal(d):
            i0, i1, j0, j1 = tiles.span(ti, tj)
            ledger.hold("tile cells", (i1 - i0) * (j1 - j0))
            R = tile_forward(cost, tiles, ti, tj, *borders.predecessors(ti, tj), gamma, ledger)
            borders.keep(ti, tj, R)
            ledger.free("tile cells", (i1 - i0) * (j1 - j0))
            if (ti, tj) == last:
                value = R[-1, -1]

    E = np.zeros(cost.shape)
    if not math.isfinite(value):
        E[:n, :m] = math.nan
        return value, E
    rims = {}
    for d in reversed(tiles.diagonals()):
        in_flight = {}
        for ti, tj in tiles.diagonal(d):
            i0, i1, j0, j1 = tiles.span(ti, tj)
            ledger.hold("tile cells", (i1 - i0) * (j1 - j0))
            in_flight[ti, tj] = tile_forward(cost, tiles, ti, tj, *borders.predecessors(ti, tj), gamma, ledger)
            borders.release(ti, tj)
        for (ti, tj), R in in_flight.items():
            i0, i1, j0, j1 = tiles.span(ti, tj)
            rim = rims.pop((ti, tj), None)
            if rim is None:  # nothing handed in: the last tile
                rim = Rim(i1 - i0, j1 - j0)
            else:
                ledger.free("products", rim.size())
            E[i0:i1, j0:j1], P = tile_backward(R, rim, gamma, (ti, tj) == last)
            hand_over(P, tiles, ti, tj, rims, ledger)
            ledger.free("tile cells", (i1 - i0) * (j1 - j0))
    return value, E
