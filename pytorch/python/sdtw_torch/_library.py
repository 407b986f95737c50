"""Finds and loads libsdtw_torch (the sdtw operators) once, with the build's version beside it."""
import json
import os
from pathlib import Path

import torch
from torch.utils._mode_utils import no_dispatch

_NAMES = ("libsdtw_torch.so", "libsdtw_torch.dylib", "sdtw_torch.dll")
_BUILD_INFO = "sdtw_torch_build.json"  # written by CMake next to the library (cmake/SdtwInstall.cmake)


def _candidates():
    env = os.environ.get("SDTW_TORCH_LIBRARY")
    if env:
        return [Path(env)]
    here = Path(__file__).resolve().parent
    found = [here / name for name in _NAMES]  # inside the package: pip install .
    # The package in a checkout (pytorch/python/sdtw_torch): the checkout's CMake build trees,
    # <repo>/build*/pytorch/libsdtw_torch.so, newest first.
    repo = here.parents[2]
    if (repo / "pytorch" / "python" / "sdtw_torch").resolve() == here:
        builds = [p for name in _NAMES for p in repo.glob("build*/pytorch/" + name)]
        found += sorted(builds, key=lambda p: p.stat().st_mtime, reverse=True)
    return found


def _load():
    candidates = _candidates()
    for path in candidates:
        if path.is_file():
            torch.ops.load_library(str(path))
            return path
    raise ImportError(
        "sdtw_torch: libsdtw_torch not found (looked at: "
        + ", ".join(str(p) for p in candidates)
        + "). Install the package (pip install --no-build-isolation . in the checkout), build the library "
        "(cmake --build <build> --target sdtw_torch) or set SDTW_TORCH_LIBRARY to its path."
    )


def _build_version(library):
    """'<project version>+pt<torch major minor><cu<CUDA>|cpu>', e.g. 0.1.0+pt211cu130."""
    try:
        return json.loads((library.parent / _BUILD_INFO).read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "0+unknown"  # a library built before the build info existed


LIBRARY_PATH = _load()
__version__ = _build_version(LIBRARY_PATH)


def built_with_cuda() -> bool:
    """Whether the loaded library has the CUDA implementations."""
    return bool(torch.ops.sdtw.built_with_cuda())


def _workspace_bytes(batch, n, m, dim, bandwidth, is_double, values_only):
    # The fakes ask this under FakeTensorMode: a plain C++ call, past any Python dispatch mode.
    with no_dispatch():
        nbytes = torch.ops.sdtw.cuda_workspace_bytes(int(batch), int(n), int(m), int(dim), int(bandwidth),
                                                     bool(is_double), values_only)
    if nbytes < 0:
        raise RuntimeError("sdtw_torch was built without CUDA support: " + str(LIBRARY_PATH))
    return nbytes


def cuda_state_bytes(batch, n, m, dim, bandwidth, is_double) -> int:
    """Bytes of the CUDA state of one call (what the fake implementations allocate)."""
    return _workspace_bytes(batch, n, m, dim, bandwidth, is_double, False)


def cuda_checkpoint_bytes(batch, n, m, dim, bandwidth, is_double, band_rows) -> int:
    """Bytes of the checkpointed state of one CUDA call with bands of band_rows rows."""
    with no_dispatch():
        nbytes = torch.ops.sdtw.cuda_checkpoint_bytes(int(batch), int(n), int(m), int(dim), int(bandwidth),
                                                      bool(is_double), int(band_rows))
    if nbytes < 0:
        raise RuntimeError("sdtw_torch was built without CUDA support, or the problem is invalid: " + str(LIBRARY_PATH))
    return nbytes


def cuda_values_bytes(batch, n, m, dim, bandwidth, is_double) -> int:
    """Bytes of the values-only kernels' workspace (the border ring, no state) of one CUDA call."""
    return _workspace_bytes(batch, n, m, dim, bandwidth, is_double, True)
