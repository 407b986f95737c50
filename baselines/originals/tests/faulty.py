"""Implementations that misbehave on purpose, loaded with --plugin by test_runner.py: each wraps ours
on the CPU and fails in one way at N = 16 (the first point), so the test sees that every failure is a
row and that the next point still runs."""
import os
import time

from baselines.originals.implementations import Impl


def _wrap(fault, scale=1.0):
    def make(peers, gamma):
        import sdtw_torch
        ours = sdtw_torch.SoftDTW(gamma=gamma)

        def sdtw(x, y):
            if x.shape[1] == 16:
                fault()
            return ours(x * scale, y * scale) if scale != 1.0 else ours(x, y)
        return sdtw
    return make


def _raise():
    raise RuntimeError("synthetic failure")


def _oom():
    raise RuntimeError("CUDA out of memory. Tried to allocate 1.00 GiB (synthetic)")


def _die():
    os._exit(7)


def _hang():
    time.sleep(600)


def _none():
    pass


def _broken_import(peers, gamma):
    raise ImportError("no module named synthetic_original")


IMPLEMENTATIONS = [
    Impl("raises", None, _wrap(_raise), needs_cuda=False),
    Impl("oom", None, _wrap(_oom), needs_cuda=False),
    Impl("dies", None, _wrap(_die), needs_cuda=False),
    Impl("hangs", None, _wrap(_hang), needs_cuda=False),
    Impl("off", None, _wrap(_none, scale=1.01), needs_cuda=False),
    Impl("broken_import", None, _broken_import, needs_cuda=False),
    Impl("cuda_only", None, _wrap(_none)),
]
