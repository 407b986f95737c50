"""The implementations a run can measure: ours through the sdtw_torch package (the user's path) and
the original codes, imported from their source folders (--peers) or as installed packages. Each is
an Impl: make(peers, gamma) imports it in the measuring process and returns sdtw(x, y) -> (B,)."""
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

# peers/<folder> (peers/README.md) -> the upstream repository and the module it provides.
ORIGINALS = {
    "pytorch-softdtw-cuda": ("Maghoumi/pytorch-softdtw-cuda", "soft_dtw_cuda"),
    "sdtw-cuda-torch": ("BGU-CS-VIL/sdtw-cuda-torch", "softdtw_cuda"),
    "pysdtw": ("toinsson/pysdtw", "pysdtw"),
}
CUDA_ONLY = "needs numba with CUDA and a CUDA device (the original codes have no CPU path measured here)"


@dataclass
class Impl:
    name: str
    folder: Optional[str]                 # peers/ subfolder of an original; None for ours
    make: Callable                        # (peers: Path or None, gamma) -> sdtw(x, y) -> (B,)
    needs_cuda: bool = True
    unsupported: Callable = lambda b, n, d: None  # (B, N, D) -> why it cannot run, or None


def import_original(peers, folder):
    """The module of one original, from peers/<folder> when given, else as installed. numba-cuda still
    calls np.row_stack, which numpy 2.5 removed (peers/README.md)."""
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    if peers is not None:
        path = Path(peers) / folder
        if not path.is_dir():
            raise ImportError(f"--peers: no folder {path}")
        sys.path.insert(0, str(path))
    return importlib.import_module(ORIGINALS[folder][1])


def _ours(fused):
    def make(peers, gamma):
        import sdtw_torch
        return sdtw_torch.SoftDTW(gamma=gamma, fused=fused)
    return make


def _sdtw_cuda_torch(fused):
    def make(peers, gamma):
        return import_original(peers, "sdtw-cuda-torch").SoftDTW(gamma=gamma, fused=fused)
    return make


def _maghoumi(peers, gamma):
    return import_original(peers, "pytorch-softdtw-cuda").SoftDTW(use_cuda=True, gamma=gamma)


def _pysdtw(peers, gamma):
    return import_original(peers, "pysdtw").SoftDTW(gamma=gamma, use_cuda=True)


def _one_block(b, n, d):
    # Its SoftDTW silently switches to its numba CPU path above 1024: that is not the GPU code.
    return f"N = {n} > 1024: one CUDA block per pair; above 1024 the original falls back to its CPU path" \
        if n > 1024 else None


BUILTIN = [
    Impl("ours_fused", None, _ours(True), needs_cuda=False),
    Impl("ours_unfused", None, _ours(False), needs_cuda=False),
    Impl("sdtw_cuda_torch_fused", "sdtw-cuda-torch", _sdtw_cuda_torch(True)),
    Impl("sdtw_cuda_torch_unfused", "sdtw-cuda-torch", _sdtw_cuda_torch(False)),
    Impl("pytorch_softdtw_cuda", "pytorch-softdtw-cuda", _maghoumi, unsupported=_one_block),
    Impl("pysdtw", "pysdtw", _pysdtw),
]


def load_plugin(path):
    """A Python file whose IMPLEMENTATIONS (a list of Impl) are measured like the built-in ones."""
    spec = importlib.util.spec_from_file_location(f"sdtw_originals_plugin_{Path(path).stem}", path)
    if spec is None:
        raise ValueError(f"--plugin: cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.IMPLEMENTATIONS)


def registry(plugins=()):
    """name -> Impl, the built-in ones and those of each plugin file."""
    out = {i.name: i for i in BUILTIN}
    for path in plugins:
        for impl in load_plugin(path):
            out[impl.name] = impl
    return out
