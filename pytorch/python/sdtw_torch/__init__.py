"""Soft-DTW for PyTorch on CPU and CUDA (the sdtw project's operators, torch.ops.sdtw.*).

    import sdtw_torch
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1)
    loss = loss_fn(x, y).mean()          # x (B, N, D), y (B, M, D) -> (B,)

The library is found through the environment variable SDTW_TORCH_LIBRARY, next to this package,
or in a build*/pytorch/ folder of the checkout.
"""
from ._library import LIBRARY_PATH, built_with_cuda
from ._library import __version__  # CMake's project version + torch and CUDA of the build
from . import _fake
from .functional import (SubsequenceEnd, alignment, alignment_from_cost, pairwise_cost, soft_dtw, soft_dtw_cost,
                         softdtw, subsequence_end, subsequence_end_from_cost)
from .module import SoftDTW
from .barycenter import softdtw_barycenter
from .cdist import cdist_soft_dtw
from .kmeans import SoftDTWKMeans
from .dilate import DilateLoss, dilate, dilate_omega

COMPILE_SUPPORTED = _fake.NEW_API  # torch >= 2.4: fake tensors registered for torch.compile

__all__ = [
    "SoftDTW",
    "soft_dtw",
    "softdtw",
    "soft_dtw_cost",
    "alignment",
    "alignment_from_cost",
    "pairwise_cost",
    "subsequence_end",
    "subsequence_end_from_cost",
    "SubsequenceEnd",
    "softdtw_barycenter",
    "cdist_soft_dtw",
    "SoftDTWKMeans",
    "dilate",
    "dilate_omega",
    "DilateLoss",
    "built_with_cuda",
    "LIBRARY_PATH",
    "COMPILE_SUPPORTED",
    "__version__",
]
