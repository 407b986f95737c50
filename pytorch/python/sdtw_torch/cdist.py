"""cdist_soft_dtw: soft-DTW between every row of X and every row of Y, computed in chunks of pairs."""
import torch
from torch.utils.checkpoint import checkpoint

from . import _library
from ._fake import _value_dtype
from .checks import _check_lengths, integer_at_least
from .functional import _Constraint, _check_tensor, _constraint, _lengths, _resolve, soft_dtw

# DP cells per chunk: bounds the state a chunk holds (float64 per cell on the CPU, ~4 bytes on CUDA).
_CELLS_PER_CHUNK = {"cpu": 1 << 24, "cuda": 1 << 27}
# Values alone on CUDA keep no state, only the kernels' ring of strip borders: chunks bound that ring.
_RING_BYTES_PER_CHUNK = 1 << 28
# Pairs over which the ring's fixed scratch is spread when sizing it per pair.
_RING_SAMPLE_PAIRS = 1024


def floating_sets(X, Y):
    """Integer or bool series sets are promoted as soft_dtw promotes a target (and tslearn converts to
    float): to the other's floating dtype, or torch's default dtype when neither is floating."""
    if not isinstance(X, torch.Tensor) or (Y is not None and not isinstance(Y, torch.Tensor)):
        return X, Y
    to = X.dtype if X.is_floating_point() else Y.dtype if Y is not None and Y.is_floating_point() \
        else torch.get_default_dtype()
    promoted = [t.to(to) if t is not None and not t.is_floating_point() and not t.is_complex() else t for t in (X, Y)]
    return promoted[0], promoted[1]


def check_series_set(X, name):
    """X must be a floating (B, N, D) tensor with B, N, D >= 1."""
    _check_tensor(X, name)
    if X.dim() != 3 or min(X.shape) < 1:
        raise ValueError(f"{name} must have shape (B, N, D) with B, N, D >= 1 (got {tuple(X.shape)})")
    if not X.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor (got {X.dtype})")


def check_set_lengths(lengths, X, name):
    """None, or (B,) integers in [1, N] for X (B, N, D) (any form soft_dtw takes), checked once on
    the host and returned as an int64 tensor on X's device; also their host copy, for band checks."""
    lengths = _lengths(lengths, name)
    if lengths is None:
        return None, None
    if lengths.dim() != 1 or lengths.shape[0] != X.shape[0] or lengths.is_floating_point() \
            or lengths.dtype == torch.bool:
        raise ValueError(f"{name} must be {X.shape[0]} integers, one per series (got shape {tuple(lengths.shape)}, "
                         f"{lengths.dtype})")
    if lengths.device.type != "cpu" and lengths.device != X.device:
        raise ValueError(f"{name} must be on the CPU or on the device of the series ({X.device}), "
                         f"but it is on {lengths.device}")
    host = _check_lengths(lengths, name, X.shape[1])
    return lengths.to(device=X.device, dtype=torch.int64), host


def _check_band_of_sets(bandwidth, X, Y, x_host, y_host):
    """Every pair (X[i], Y[j]) must fit the band; the operator cannot check lengths on the device."""
    if bandwidth < 0:
        return
    xs = x_host if x_host is not None else torch.tensor([X.shape[1]])
    ys = y_host if y_host is not None else torch.tensor([Y.shape[1]])
    widest = max(int(xs.max() - ys.min()), int(ys.max() - xs.min()))
    if widest > bandwidth:
        raise ValueError(f"bandwidth {bandwidth} is narrower than the largest |length of X[i] - length of Y[j]| = "
                         f"{widest}: no alignment fits the band for that pair")


def _chunk_pairs(pairs_per_chunk, X, Y, values_only):
    """pairs_per_chunk as given (checked by cdist_soft_dtw), else sized for these two sets."""
    if pairs_per_chunk is not None:
        return pairs_per_chunk
    n, m = X.shape[1], Y.shape[1]
    if values_only and X.is_cuda:
        ring = _library.cuda_values_bytes(_RING_SAMPLE_PAIRS, n, m, X.shape[2], -1, X.dtype == torch.float64)
        return max(1, _RING_BYTES_PER_CHUNK * _RING_SAMPLE_PAIRS // ring)
    return max(1, _CELLS_PER_CHUNK["cuda" if X.is_cuda else "cpu"] // (n * m))


def _gradient_wanted(X, Y):
    return torch.is_grad_enabled() and (X.requires_grad or Y.requires_grad)


def _pair_values(X, Y, i, j, X_lengths, Y_lengths, options, pairs_per_chunk, c=_Constraint(None, None, None)):
    """soft-DTW of the pairs (X[i[p]], Y[j[p]]), in chunks sized for these two sets. Values alone
    with the fused cost go through the pairs operator, which indexes the pairs in the kernels; with
    a gradient each chunk is rebuilt in the backward (checkpoint), so the saved state never
    outgrows one chunk."""
    wanted = _gradient_wanted(X, Y)
    # The pairs operator computes the squared-Euclidean cost alone; other named costs, fused or not, run by chunks.
    values_only = options.fused and options.dist == "sqeuclidean" and not wanted
    if i.numel() == 0:
        return X.new_empty(0, dtype=_value_dtype(X.dtype))
    chunk = _chunk_pairs(pairs_per_chunk, X, Y, values_only)

    def values(ic, jc):
        return soft_dtw(
            X.index_select(0, ic), Y.index_select(0, jc), gamma=options.gamma, bandwidth=options.bandwidth,
            dist=options.dist, fused=options.fused, **c._asdict(),
            x_lengths=None if X_lengths is None else X_lengths.index_select(0, ic),
            y_lengths=None if Y_lengths is None else Y_lengths.index_select(0, jc))

    if values_only:
        radius_slope = torch.ops.sdtw.constraint_options(*c)
        return torch.cat([
            torch.ops.sdtw.pairwise_soft_dtw_sqeuclidean(X, Y, i[s:s + chunk], j[s:s + chunk], options.gamma,
                                                         options.bandwidth, X_lengths, Y_lengths, *radius_slope)
            for s in range(0, i.numel(), chunk)])
    recompute = wanted and i.numel() > chunk
    parts = []
    for start in range(0, i.numel(), chunk):
        ic, jc = i[start:start + chunk], j[start:start + chunk]
        parts.append(checkpoint(values, ic, jc, use_reentrant=False) if recompute else values(ic, jc))
    return torch.cat(parts)


def cdist_soft_dtw(X, Y=None, *, gamma=1.0, bandwidth=None, normalize=False, X_lengths=None, Y_lengths=None,
                   dist="sqeuclidean", pairs_per_chunk=None, global_constraint=None, sakoe_chiba_radius=None,
                   itakura_max_slope=None):
    """Soft-DTW of every pair of rows: (B1, B2) with entry [i, j] = soft_dtw(X[i], Y[j]).

    X (B1, N, D), Y (B2, M, D); Y=None compares X with itself, computing each unordered pair once
    and mirroring it. normalize=True gives the soft-DTW divergence
    sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2 (tslearn's cdist_soft_dtw_normalized; zero
    diagonal when Y is None), each series' self-term computed once. X_lengths (B1,) and
    Y_lengths (B2,) are the true lengths of padded series. gamma, bandwidth, dist and tslearn's
    global_constraint, sakoe_chiba_radius and itakura_max_slope mean what they mean for soft_dtw
    (each pair's constraint from its own lengths). Differentiable in X and Y.

    The pairs run pairs_per_chunk at a time (None: as many as fit about 2^24 DP cells on the CPU,
    2^27 on CUDA, or on CUDA without a gradient 256 MB of strip borders), so memory stays bounded.
    Without a gradient (torch.no_grad() or inputs that need none) and with dist='sqeuclidean',
    CUDA kernels index the pairs directly: no copies of the inputs and no saved state. With a
    gradient, each chunk is recomputed in the backward instead of keeping every chunk's state.
    """
    X, Y = floating_sets(X, Y)
    check_series_set(X, "X")
    symmetric = Y is None
    if symmetric:
        if Y_lengths is not None:
            raise ValueError("Y_lengths needs Y: with Y=None, X_lengths serves both sides")
        Y = X
    else:
        check_series_set(Y, "Y")
        if Y.shape[2] != X.shape[2]:
            raise ValueError(f"X and Y must have the same number of features D (X has {X.shape[2]}, "
                             f"Y has {Y.shape[2]})")
        if Y.device != X.device:
            raise ValueError(f"X and Y must be on the same device (X on {X.device}, Y on {Y.device})")
    c = _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope)
    options = _resolve(gamma, bandwidth, normalize, dist, None, "none", c)
    if pairs_per_chunk is not None:
        pairs_per_chunk = integer_at_least(pairs_per_chunk, 1, "pairs_per_chunk")
    X_lengths, x_host = check_set_lengths(X_lengths, X, "X_lengths")
    Y_lengths, y_host = (X_lengths, x_host) if symmetric else check_set_lengths(Y_lengths, Y, "Y_lengths")
    _check_band_of_sets(options.bandwidth, X, Y, x_host, y_host)
    B1, B2 = X.shape[0], Y.shape[0]
    device = X.device

    if symmetric:
        i, j = torch.triu_indices(B1, B1, offset=1 if normalize else 0, device=device)
    else:
        flat = torch.arange(B1 * B2, device=device)
        i, j = flat // B2, flat % B2
    values = _pair_values(X, Y, i, j, X_lengths, Y_lengths, options, pairs_per_chunk, c)
    if normalize:  # the self-terms' chunks are sized for their own sets (N x N, M x M)
        x_self = _pair_values(X, X, *(torch.arange(B1, device=device),) * 2, X_lengths, X_lengths, options,
                              pairs_per_chunk, c)
        y_self = x_self if symmetric else _pair_values(
            Y, Y, *(torch.arange(B2, device=device),) * 2, Y_lengths, Y_lengths, options, pairs_per_chunk, c)
        values = values - 0.5 * (x_self.index_select(0, i) + y_self.index_select(0, j))
    if not symmetric:
        return values.view(B1, B2)
    # Each cell reads its pair's value (mirrored below the diagonal); the diagonal of the
    # divergence reads an appended zero.
    where = torch.full((B1, B1), values.numel(), dtype=torch.int64, device=device)
    where[i, j] = torch.arange(values.numel(), device=device)
    where[j, i] = where[i, j]
    return torch.cat([values, values.new_zeros(1)])[where]
