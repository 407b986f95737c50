"""Issue 14's targets on a GPU: cdist of 1024 x 1024 pairs (N = M = 128, D = 8, values only) and the
barycenter of 20 series of length 200 (D = 1, 8; 200 iterations, early stopping off), ours against
softdtw-cuda-torch's softdtw_barycenter on the same data and settings. CUDA events, median of 3
(cdist) or 2 (barycenters).

    python3 torch/bench/features.py --peers ../shared/peers    # the folder holding sdtw-cuda-torch/
"""
import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

import sdtw_torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step import timed as event_times  # noqa: E402

if not hasattr(np, "row_stack"):  # numba of this machine calls it; numpy 2.5 removed it
    np.row_stack = np.vstack
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--peers", required=True, help="folder with sdtw-cuda-torch/ (softdtw-cuda-torch's sources)")
sys.path.insert(0, parser.parse_args().peers + "/sdtw-cuda-torch")
import softdtw_cuda  # noqa: E402


def timed(fn, reps=3):
    """fn's last result and the median of step.py's CUDA-event times of reps calls."""
    results = []
    times = event_times(lambda: results.append(fn()), reps)
    return results[-1], statistics.median(times)


g = torch.Generator(device="cuda").manual_seed(0)
X = torch.randn(1024, 128, 8, device="cuda", generator=g)
Y = torch.randn(1024, 128, 8, device="cuda", generator=g)
with torch.no_grad():
    sdtw_torch.cdist_soft_dtw(X[:8], Y[:8])
    K, ms = timed(lambda: sdtw_torch.cdist_soft_dtw(X, Y, gamma=1.0))
    check = sdtw_torch.soft_dtw(X[:16], Y[:16], gamma=1.0)
print(f"cdist 1024x1024 N=128 D=8 values only: {ms:.1f} ms (target <= 150); diag check max rel "
      f"{((K.diagonal()[:16] - check).abs().max() / check.abs().max()).item():.2e}")


def objective(Z, S, gamma):
    return sdtw_torch.soft_dtw(Z.unsqueeze(0).expand(S.shape[0], -1, -1), S, gamma=gamma).mean().item()


for d in (1, 8):
    S = torch.randn(20, 200, d, device="cuda", generator=g).cumsum(1) * 0.1
    kw = dict(gamma=1.0, max_iter=200, lr=0.1, early_stopping=False)
    ours, t_ours = timed(lambda: sdtw_torch.softdtw_barycenter(S, **kw), reps=2)
    theirs, t_theirs = timed(lambda: softdtw_cuda.softdtw_barycenter(S, **kw), reps=2)
    o_ours, o_theirs = objective(ours, S, 1.0), objective(theirs, S, 1.0)
    print(f"barycenter 20 x 200, D={d}, 200 iterations: ours {t_ours / 200:.3f} ms/iter, softdtw-cuda-torch "
          f"{t_theirs / 200:.3f} ms/iter, ratio {t_theirs / t_ours:.1f}x (target >= 20); objective ours {o_ours:.6g} "
          f"theirs {o_theirs:.6g} rel diff {abs(o_ours - o_theirs) / abs(o_theirs):.2e} (target <= 1e-3)")
