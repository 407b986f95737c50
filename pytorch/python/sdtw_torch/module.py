"""sdtw_torch.SoftDTW: a drop-in for softdtw-cuda-torch's SoftDTW module."""
import torch

from .functional import _convert, _resolve, _soft_dtw


class SoftDTW(torch.nn.Module):
    """Soft-DTW loss between x (B, N, D) and y (B, M, D), or unbatched (N, D) and (M, D).

    Same keywords and meanings as softdtw-cuda-torch's SoftDTW, plus reduction:

    gamma: smoothing (>= 0); smaller is closer to DTW, and 0 is exact DTW, whose gradient is
        that of one optimal path (a subgradient).
    bandwidth: Sakoe-Chiba band |i - j| <= bandwidth; None (or <= 0) disables it. It must be
        >= |N - M| (per pair with lengths).
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
                 reduction="none", check_inputs=False):
        super().__init__()
        _resolve(gamma, bandwidth, normalize, dist, fused, reduction)  # fail early (the operator names the argument)
        self.gamma = gamma
        self.bandwidth = bandwidth
        self.normalize = normalize
        self.dist = dist
        self.fused = fused
        self.reduction = reduction
        self.check_inputs = bool(check_inputs)

    def forward(self, x, y, x_lengths=None, y_lengths=None):
        options = _convert(self.gamma, self.bandwidth, self.normalize, self.dist, self.fused, self.reduction)
        return _soft_dtw(x, y, options, x_lengths, y_lengths, self.check_inputs)

    def extra_repr(self):
        return (
            f"gamma={self.gamma}, bandwidth={self.bandwidth}, normalize={self.normalize}, dist={self.dist!r}, "
            f"fused={self.fused}, reduction={self.reduction!r}, check_inputs={self.check_inputs}"
        )
