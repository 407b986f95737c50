"""sdtw_torch.SoftDTW: a drop-in for softdtw-cuda-torch's SoftDTW module."""
import torch

from .functional import _constraint, _convert, _memory, _resolve, _soft_dtw, _variant


class SoftDTW(torch.nn.Module):
    """Soft-DTW loss between x (B, N, D) and y (B, M, D), or unbatched (N, D) and (M, D).

    Same keywords and meanings as softdtw-cuda-torch's SoftDTW, plus reduction:

    gamma: smoothing (>= 0); smaller is closer to DTW, and 0 is exact DTW, whose gradient is
        that of one optimal path (a subgradient).
    bandwidth: Sakoe-Chiba band |i - j| <= bandwidth; None (or <= 0) disables it. It must be
        >= |N - M| (per pair with lengths).
    global_constraint, sakoe_chiba_radius, itakura_max_slope: tslearn's global constraints, with
        its keywords and masks, computed from each pair's own lengths (no (B, N, M) mask):
        'sakoe_chiba' keeps, along the shorter series' index k, the longer one's cells
        k - radius .. k + |N - M| + radius (radius default 1); sakoe_chiba_radius=0 with N == M
        is the diagonal alone. 'itakura' keeps the parallelogram of slopes itakura_max_slope
        (default 2) and its inverse. A radius or a slope alone implies its constraint, as in
        tslearn; neither goes with bandwidth. A constraint that leaves no path is a ValueError
        where the lengths are known on the host, else that pair's value is inf (gradient NaN).
    warp: Parallel Tacotron 2's warp penalty (finite, default 0), added to every vertical and
        horizontal move of the alignment and not to the diagonal one. Computed exactly as soft-DTW of
        the cost + 2 warp minus warp (N + M) per pair (2 warp per cell is warp per vertical or
        horizontal move plus warp (N + M) on every path: docs/DESIGN.md), with bands, constraints,
        lengths, normalize (all three terms) and gamma = 0; fused=True with warp != 0 is a ValueError.
    subsequence: subsequence soft-DTW (default False): x is aligned to any stretch of y, starting
        and ending anywhere along y, and the value is the softmin over the last row. A composite of
        torch ops (N + M steps), on the CPU and CUDA; no band, constraint, normalize or fused with it.
        subsequence_end gives where the alignment ends.
    normalize: the soft-DTW divergence sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2, computed as
        three separate calls, so N != M works.
    dist: 'sqeuclidean' (aliases 'sq_euclidean', 'squared_euclidean'), 'euclidean', 'cosine',
        'l1', 'negative_dot', or a callable (x, y) -> cost tensor (B, N, M).
    fused: None or True picks the fused kernels (no (B, N, M) cost tensor) for every named dist;
        on the CPU only 'sqeuclidean' has them and the others build their cost tensor, with the
        same values. A callable's cost is a tensor: fused=True with one raises ValueError. False
        always builds the cost tensor.

    The options mean what sdtw::nn::SoftDtwOptions means in C++: both modules call the operator
    torch.ops.sdtw.soft_dtw_loss, which validates them; arguments of a type that has no
    conversion (a string for gamma, 2 for fused) raise TypeError here.
    reduction: 'none' returns (B,) (() unbatched); 'mean' and 'sum' reduce over the batch.

    memory: the CUDA backward's memory. 'full' keeps the full state (4.25 bytes per DP cell, the
        fastest); 'checkpoint' keeps R's float64 rows every S rows plus one band of S rows' state and
        recomputes each band's forward once, about B M (8 N / S + 4.25 S) bytes (dist 'sqeuclidean'
        fused, or fused=False; bandwidth but no global_constraint; no double backward). 'auto'
        (default): full when it fits in 90 % of the device's free memory, else checkpoint with the
        tallest band that fits; when neither fits, an error names both modes' bytes. The CPU keeps
        its own path in every mode (the value is still checked).

    check_inputs: False (default) lets non-finite values in pair b give pair b a non-finite loss
        and gradient, as torch's own losses do, with no extra work on the GPU; True raises
        ValueError naming the argument, batch index and position of the first non-finite value
        (and checks lengths given on the device), at the cost of a host synchronisation.

    Call: sdtw(x, y, x_lengths=None, y_lengths=None); lengths (B,) integer tensors (or lists)
    give each pair's true lengths in a padded batch. float16/bfloat16 inputs (autocast) are
    computed in float32 and give float32 values; gradients come back in the input dtype.
    An integer or bool x or y (a target of levels or class indices) is promoted to the other's
    floating dtype, or to torch's default dtype when neither is floating, as tslearn converts
    its inputs to floats; the same holds for soft_dtw, softdtw and alignment.
    """

    def __init__(self, *, gamma=1.0, bandwidth=None, normalize=False, dist="sqeuclidean", fused=None,
                 reduction="none", check_inputs=False, global_constraint=None, sakoe_chiba_radius=None,
                 itakura_max_slope=None, warp=0.0, subsequence=False, memory="auto"):
        super().__init__()
        # Fail early (the operator names the argument).
        _resolve(gamma, bandwidth, normalize, dist, fused, reduction,
                 _constraint(global_constraint, sakoe_chiba_radius, itakura_max_slope), _variant(warp, subsequence))
        self.warp = warp
        self.subsequence = subsequence
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.global_constraint = global_constraint
        self.sakoe_chiba_radius = sakoe_chiba_radius
        self.itakura_max_slope = itakura_max_slope
        self.normalize = normalize
        self.dist = dist
        self.fused = fused
        self.reduction = reduction
        self.check_inputs = bool(check_inputs)
        self.memory = _memory(memory)

    def forward(self, x, y, x_lengths=None, y_lengths=None):
        options = _convert(self.gamma, self.bandwidth, self.normalize, self.dist, self.fused, self.reduction)
        c = _constraint(self.global_constraint, self.sakoe_chiba_radius, self.itakura_max_slope)
        return _soft_dtw(x, y, options, x_lengths, y_lengths, self.check_inputs, c,
                         _variant(self.warp, self.subsequence), self.memory)

    def extra_repr(self):
        return (
            f"gamma={self.gamma}, bandwidth={self.bandwidth}, normalize={self.normalize}, dist={self.dist!r}, "
            f"fused={self.fused}, reduction={self.reduction!r}, check_inputs={self.check_inputs}, memory={self.memory!r}"
            + "".join(f", {k}={v!r}" for k, v in (("global_constraint", self.global_constraint),
                                                   ("sakoe_chiba_radius", self.sakoe_chiba_radius),
                                                   ("itakura_max_slope", self.itakura_max_slope)) if v is not None)
            + (f", warp={self.warp}" if self.warp != 0 else "")
            + (", subsequence=True" if self.subsequence else "")
        )
