"""Soft-DTW for PyTorch on CPU and CUDA (the sdtw project's operators, torch.ops.sdtw.*).

    import sdtw_torch
    loss_fn = sdtw_torch.SoftDTW(gamma=0.1)
    loss = loss_fn(x, y).mean()          # x (B, N, D), y (B, M, D) -> (B,)

The library is found through the environment variable SDTW_TORCH_LIBRARY, next to this package,
or in a build*/torch/ folder of the checkout.
"""
from ._library import LIBRARY_PATH, built_with_cuda
from . import _autograd
from .functional import alignment, alignment_from_cost, pairwise_cost, soft_dtw, soft_dtw_cost, softdtw
from .module import SoftDTW

COMPILE_SUPPORTED = _autograd.NEW_API  # torch >= 2.4: fake tensors registered for torch.compile

__all__ = [
    "SoftDTW",
    "soft_dtw",
    "softdtw",
    "soft_dtw_cost",
    "alignment",
    "alignment_from_cost",
    "pairwise_cost",
    "built_with_cuda",
    "LIBRARY_PATH",
    "COMPILE_SUPPORTED",
]
