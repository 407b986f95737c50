"""sdtw-bench against the schema's Python side: the sweep's CSV header is the common column list then
its own, its sidecar has the common metadata keys, and it draws the same inputs as
sdtw_results.make_inputs for the same point (`sdtw-bench inputs`). Skipped, by name, when ctest did not
pass the executable (SDTW_BENCH_EXE)."""
import os
import subprocess

import numpy as np
import pytest
import torch

import sdtw_results

EXE = os.environ.get("SDTW_BENCH_EXE")
pytestmark = pytest.mark.skipif(not EXE, reason="SDTW_BENCH_EXE not set (sdtw-bench not built)")
CONFIG = """name: tiny
settings: {warmup: 1, reps: 3, seed: 11}
grids:
  - {name: tiny, impl: [ours_cpu, reference_cpu], device: cpu, B: 2, N: [5, 8], M: 6, D: 3, gamma: 0.5}
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    (tmp / "tiny.yaml").write_text(CONFIG)
    # No GPU visible, as in CI, so that the metadata below is a CPU machine's on a GPU machine too.
    proc = subprocess.run([EXE, "sweep", str(tmp / "tiny.yaml"), "--out", str(tmp / "out"), "--no-table"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return sdtw_results.read_results(tmp / "out/tiny.csv")


def test_header_is_the_common_columns_then_the_sweeps(sweep):
    rows, sidecar = sweep
    assert list(rows[0]) == sdtw_results.COLUMNS + ["point", "sweep"]
    assert sidecar["schema"] == sdtw_results.SCHEMA and sidecar["tool"] == "sweep"
    assert sidecar["columns"] == list(rows[0])
    meta = sidecar["metadata"]
    for key in ("tool", "command", "commit", "dirty", "date", "host", "gpu", "gpu_count", "driver", "cuda", "torch",
                "seed"):
        assert key in meta, key
    assert (meta["tool"], meta["gpu"], meta["gpu_count"], meta["driver"], meta["cuda"], meta["seed"]) == \
        ("sweep", "", 0, "", "", 11)
    assert meta["command"][1:3] == ["sweep", meta["config_path"]] and meta["dirty"] in ("true", "false")


def test_rows_carry_the_one_seed_and_the_spread(sweep):
    rows = sweep[0]
    assert len(rows) == 4
    for r in rows:
        assert (r["tool"], r["api"], r["mode"], r["disposition"]) == ("sweep", "functional", "", "passed"), r
        assert r["seed"] == str(sdtw_results.point_seed(11, 2, int(r["N"]), 6, 3))
        assert float(r["time_ms_p10"]) <= float(r["time_ms_median"]) <= float(r["time_ms_p90"])
        assert r["reps"] == "3" and int(r["warmup"]) >= 1
        assert r["step_peak_mb"] == r["abs_peak_mb"] == "" and r["gpu"] == ""  # no allocator counters on the CPU
        assert r["verified"] == "2/2" and float(r["grad_err"]) <= float(r["grad_tol"])
    by_impl = {}
    for r in rows:
        by_impl.setdefault(r["N"], set()).add(r["seed"])
    assert all(len(seeds) == 1 for seeds in by_impl.values())  # every implementation at a point: one seed


@pytest.mark.parametrize("b,n,m,d,seed,dtype", [(2, 3, 4, 2, 5, "float64"), (3, 17, 9, 5, 2 ** 63 + 7, "float64"),
                                                (1, 40, 40, 1, 0, "float32")])
def test_cpp_and_python_draw_the_same_inputs(tmp_path, b, n, m, d, seed, dtype):
    proc = subprocess.run([EXE, "inputs", "--B", str(b), "--N", str(n), "--M", str(m), "--D", str(d), "--seed",
                           str(seed), "--dtype", dtype, "--x-out", str(tmp_path / "x.csv"), "--y-out",
                           str(tmp_path / "y.csv")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    point = sdtw_results.point_seed(seed, b, n, m, d)
    assert proc.stdout.strip() == f"seed {point}"
    x, y = sdtw_results.make_inputs(point, b, n, m, d, dtype=getattr(torch, dtype))
    cx = np.loadtxt(tmp_path / "x.csv", delimiter=",", skiprows=1, ndmin=2)
    cy = np.loadtxt(tmp_path / "y.csv", delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_array_equal(cx, x.double().reshape(b * n, d).numpy())
    np.testing.assert_array_equal(cy, y.double().reshape(b * m, d).numpy())


def test_inputs_refuses_a_bad_shape(tmp_path):
    proc = subprocess.run([EXE, "inputs", "--B", "0", "--N", "3", "--M", "3", "--D", "1", "--x-out",
                           str(tmp_path / "x.csv"), "--y-out", str(tmp_path / "y.csv")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--B" in proc.stderr
