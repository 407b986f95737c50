"""`sdtw-bench eval` with the library's keywords (dist, global constraints, warp, subsequence) gives
sdtw_torch.soft_dtw's value and gradients for the same series and keywords: each option reaches the
library as the Python API spells it. Skipped, by name, when ctest did not pass the executable."""
import os
import subprocess

import numpy as np
import pytest
import torch

import sdtw_torch

EXE = os.environ.get("SDTW_BENCH_EXE")
pytestmark = pytest.mark.skipif(not EXE, reason="SDTW_BENCH_EXE not set (sdtw-bench not built)")

CASES = [
    ({}, []),
    ({"dist": "euclidean"}, ["--dist", "euclidean"]),
    ({"dist": "cosine"}, ["--dist", "cosine"]),
    ({"dist": "l1"}, ["--dist", "l1"]),
    ({"dist": "negative_dot"}, ["--dist", "negative_dot"]),
    ({"global_constraint": "sakoe_chiba"}, ["--global-constraint", "sakoe_chiba"]),
    ({"sakoe_chiba_radius": 0}, ["--sakoe-chiba-radius", "0"]),
    ({"global_constraint": "itakura"}, ["--global-constraint", "itakura"]),
    ({"itakura_max_slope": 3.0}, ["--itakura-max-slope", "3"]),
    ({"warp": 0.3}, ["--warp", "0.3"]),
    ({"subsequence": True}, ["--subsequence"]),
    ({"dist": "l1", "warp": -0.2, "sakoe_chiba_radius": 1},
     ["--dist", "l1", "--sakoe-chiba-radius", "1", "--warp", "-0.2"]),
]


@pytest.mark.parametrize("keywords,options", CASES, ids=[" ".join(o) or "defaults" for _, o in CASES])
def test_eval_matches_the_python_api(tmp_path, keywords, options):
    rng = np.random.default_rng(34)
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((9, 3))
    np.savetxt(tmp_path / "x.csv", x, delimiter=",", fmt="%.17g")
    np.savetxt(tmp_path / "y.csv", y, delimiter=",", fmt="%.17g")
    proc = subprocess.run([EXE, "eval", str(tmp_path / "x.csv"), str(tmp_path / "y.csv"), "--gamma", "0.5", "--grad",
                           "--grad-x-out", str(tmp_path / "gx.csv"), "--grad-y-out", str(tmp_path / "gy.csv"), *options],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "impl ours_cpu" in proc.stdout and " ".join(options) in proc.stdout.splitlines()[0]
    value = float(proc.stdout.split("sdtw = ")[1].split()[0])

    tx = torch.tensor(x[None], requires_grad=True)
    ty = torch.tensor(y[None], requires_grad=True)
    expected = sdtw_torch.soft_dtw(tx, ty, gamma=0.5, **keywords)
    expected.sum().backward()
    np.testing.assert_allclose(value, expected.item(), rtol=1e-12, atol=1e-12)
    gx = np.loadtxt(tmp_path / "gx.csv", delimiter=",", skiprows=1, ndmin=2)
    gy = np.loadtxt(tmp_path / "gy.csv", delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_allclose(gx, tx.grad[0].numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gy, ty.grad[0].numpy(), rtol=1e-10, atol=1e-12)
    # The keywords change the problem: no case but the defaults gives the plain value.
    if keywords:
        plain = sdtw_torch.soft_dtw(tx.detach(), ty.detach(), gamma=0.5).item()
        assert abs(value - plain) > 1e-6
