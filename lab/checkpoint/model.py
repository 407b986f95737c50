"""Memory and work of the checkpointed scheme against the full state (lab/checkpoint/README.md).
Counts (values, cells) are what tiled.py holds at once without a band, and its tests check them;
bytes price them as a kernel would store them. `python3 model.py` prints the README's tables."""
import math

FULL_STATE_BYTES_PER_CELL = 4.25  # docs/DESIGN.md §3.4: the 4-byte state word and the strip borders
INPUT_BYTES = 4  # fused float32: x, y and their gradients, B (N + M) D values each pair
# Issued warp instructions per warp step of 32 cells, docs/DESIGN.md §4.7; fused adds 2 D per step.
FORWARD_ISSUE, BACKWARD_ISSUE = 150, 75


def tile_grid(n, m, S):
    return math.ceil(n / S), math.ceil(m / S)


def border_values(n, m, S):
    """R kept between the passes: the last row of every tile row but the last (m values each) and
    the last column of every tile column but the last (n values each)."""
    rows, cols = tile_grid(n, m, S)
    return (rows - 1) * m + (cols - 1) * n


def tiles_in_flight(n, m, S):
    """The tiles of the longest anti-diagonal, all recomputed at once."""
    return min(tile_grid(n, m, S))


def tile_cells(n, m, S):
    return tiles_in_flight(n, m, S) * min(S, n) * min(S, m)


def product_values(n, m, S):
    """E-products handed over in the backward: a tile's rim takes 2 (h + w) - 1 values, and rims of
    three anti-diagonals can be live at once (being read, being written, and written only at the
    corner by the diagonal two below)."""
    return 3 * tiles_in_flight(n, m, S) * (2 * (min(S, n) + min(S, m)) - 1)


def checkpoint_bytes(N, M, S, B, D, r_bytes=8, state_bytes=4, tiles=None):
    """Peak bytes by part, for B pairs of N x M cells; tiles caps the tiles in flight per pair (default:
    a whole anti-diagonal). The tile's cells hold the §3.4 state word that E overwrites."""
    in_flight = tiles_in_flight(N, M, S) if tiles is None else min(tiles, tiles_in_flight(N, M, S))
    return {
        "borders": B * border_values(N, M, S) * r_bytes,
        "tiles": B * in_flight * min(S, N) * min(S, M) * state_bytes,
        "products": B * product_values(N, M, S) * r_bytes,
        "inputs": 2 * B * (N + M) * D * INPUT_BYTES,
    }


def full_state_bytes(N, M, B, D):
    return B * N * M * FULL_STATE_BYTES_PER_CELL + 2 * B * (N + M) * D * INPUT_BYTES


def work_ratio(D):
    """Checkpointed over full-state issue per cell, fused: one more forward (its DP and its cost)."""
    full = FORWARD_ISSUE + BACKWARD_ISSUE + 2 * D
    return (2 * FORWARD_ISSUE + BACKWARD_ISSUE + 2 * 2 * D) / full


def _gb(x):
    return f"{x / 1e9:.2f}"


def table(points, r_bytes_list=(8, 4)):
    lines = ["| B | N = M | S | R borders | borders GB | tiles in flight | tiles GB | products GB | "
             "inputs GB | total GB | full state GB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for B, N, S in points:
        for r_bytes in r_bytes_list:
            parts = checkpoint_bytes(N, N, S, B, 8, r_bytes)
            lines.append(
                f"| {B} | 2^{int(math.log2(N))} | {S} | float{8 * r_bytes} | {_gb(parts['borders'])} | "
                f"{B} x {tiles_in_flight(N, N, S)} | {_gb(parts['tiles'])} | {_gb(parts['products'])} | "
                f"{_gb(parts['inputs'])} | {_gb(sum(parts.values()))} | {_gb(full_state_bytes(N, N, B, 8))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    points = [(1, 2**20, S) for S in (1024, 2048, 4096)] + [(16, 2**16, S) for S in (1024, 2048, 4096)]
    print(table(points))
    print()
    capped = checkpoint_bytes(2**20, 2**20, 2048, 1, 8, 8, tiles=256)
    print(f"B = 1, N = M = 2^20, S = 2048, float64 borders, 256 tiles in flight: "
          f"{_gb(sum(capped.values()))} GB")
    print(f"work per cell, checkpointed / full state, D = 8: {work_ratio(8):.2f}")
