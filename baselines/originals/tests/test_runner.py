"""The runner end to end on the CPU (ours measured, the originals not_supported without CUDA) with
misbehaving implementations (faulty.py): every failure is a row with a disposition, a process that
dies or hangs costs one point, the CSV has the documented columns; and its parts: the grids of the
config, the float64 reference against an independent numpy one."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# baselines/ is imported from the project's root, which is not on a tool's path.
sys.path[:0] = [str(ROOT), str(ROOT / "pytorch/tests/python")]

import sdtw_results  # noqa: E402
from sdtw_results import verify  # noqa: E402
from baselines.originals import config, runner  # noqa: E402
from baselines.originals.implementations import CUDA_ONLY  # noqa: E402
import reference as numpy_reference  # noqa: E402  (pytorch/tests/python/reference.py)

PEERS = ROOT.parent / "shared/peers"
ORIGINALS = ["sdtw_cuda_torch_fused", "sdtw_cuda_torch_unfused", "pytorch_softdtw_cuda", "pysdtw"]
FAULTY = ["raises", "oom", "dies", "hangs", "off", "broken_import", "cuda_only"]
TIMEOUT = 4


def run(tmp, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "baselines.originals", *extra], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("originals")
    cfg = tmp / "tiny.yaml"
    cfg.write_text("name: tiny\nsettings: {warmup: 1, reps: 4, min_reps: 2, point_seconds: 1, "
                   f"point_timeout: {TIMEOUT}, seed: 3, gamma: 0.5}}\n"
                   "grids:\n  - {name: tiny, points: [[2, 16, 3], [3, 24, 2]]}\n  - {name: again, B: 2, N: 16, D: 3}\n")
    impls = ["ours_fused", "ours_unfused"] + ORIGINALS + FAULTY
    args = ["--config", str(cfg), "--plugin", str(HERE / "faulty.py"), "--impl", ",".join(impls), "--device", "cpu",
            "--out", str(tmp / "out"), "--work", str(tmp / "work")]
    if PEERS.is_dir():
        args += ["--peers", str(PEERS)]
    proc = run(tmp, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows, meta = sdtw_results.read_results(tmp / "out/originals.csv")
    return {(r["impl"], int(r["N"])): r for r in rows}, rows, meta, proc.stdout, tmp / "work"


def test_one_row_per_implementation_and_point(result):
    index, rows, meta = result[:3]
    assert list(rows[0]) == runner.COLUMNS == sdtw_results.COLUMNS + ["resident_mb"]
    assert len(rows) == len(index) == 2 * (2 + len(ORIGINALS) + len(FAULTY))  # the repeated grid point: once
    assert {r["tool"] for r in rows} == {"originals"} and meta["metadata"]["method"] == runner.METHOD
    assert {r["disposition"] for r in rows} <= set(sdtw_results.DISPOSITIONS)
    assert {r["grid"] for r in rows} == {"tiny"} and {r["device"] for r in rows} == {"cpu"}
    assert meta["columns"] == runner.COLUMNS and meta["schema"] == sdtw_results.SCHEMA
    for r in rows:
        assert r["seed"] == str(sdtw_results.point_seed(3, int(r["B"]), int(r["N"]), int(r["M"]), int(r["D"])))
        assert r["gpu"] == "" and r["api"] == "module" and r["bandwidth"] == "none" and r["normalize"] == "false"
    assert index[("ours_fused", 16)]["mode"] == "fused" and index[("ours_unfused", 16)]["mode"] == "unfused"
    assert index[("pysdtw", 16)]["mode"] == ""


def test_ours_is_measured_and_verified(result):
    index = result[0]
    for impl in ("ours_fused", "ours_unfused"):
        for n, b in ((16, 2), (24, 3)):
            r = index[(impl, n)]
            assert r["disposition"] == "passed", r
            assert float(r["value_err"]) <= 1e-5 and float(r["grad_err"]) <= 1e-4
            assert r["value_tol"] == "1e-05" and r["grad_tol"] == "0.0001"
            assert 2 <= int(r["reps"]) <= 4 and int(r["warmup"]) == 1 and r["verified"] == f"{b}/{b}"
            assert float(r["time_ms_p10"]) <= float(r["time_ms_median"]) <= float(r["time_ms_p90"])
            assert r["abs_peak_mb"] == "" and r["step_peak_mb"] == ""  # no allocator counters on the CPU


def test_originals_are_not_supported_without_cuda(result):
    index = result[0]
    for impl in ORIGINALS + ["cuda_only"]:
        for n in (16, 24):
            r = index[(impl, n)]
            assert (r["disposition"], r["message"]) == ("not_supported", CUDA_ONLY)
            assert r["time_ms_median"] == "" and r["verified"] == ""


def test_every_failure_is_a_row_and_the_next_point_runs(result):
    index = result[0]
    expected = {"raises": ("error", "RuntimeError: synthetic failure"),
                "oom": ("out_of_memory", "CUDA out of memory"),
                "dies": ("error", "the process died (exit code 7)"),
                "hangs": ("error", f"timeout: still running after {TIMEOUT} s, process killed")}
    for impl, (disposition, text) in expected.items():
        first, second = index[(impl, 16)], index[(impl, 24)]
        assert first["disposition"] == disposition and text in first["message"], first
        assert first["time_ms_median"] == ""
        assert second["disposition"] == "passed", second  # in the same process or a fresh one
    for n in (16, 24):
        r = index[("broken_import", n)]
        assert r["disposition"] == "error" and "import: ImportError: no module named synthetic_original" in r["message"]


def test_every_implementation_is_judged_against_the_stated_tolerance(result):
    off = result[0][("off", 24)]  # ours on inputs scaled by 1.01: ran, but the wrong answer
    assert off["disposition"] == "failed" and off["message"].startswith("value error ")
    assert float(off["value_err"]) > 1e-3 and "gradient rel-L2 error" in off["message"]
    assert off["value_tol"] == "1e-05" and off["grad_tol"] == "0.0001" and off["verified"] == "3/3"


def test_metadata_names_versions_and_commits(result):
    meta = result[2]["metadata"]
    for key in ("tool", "command", "commit", "dirty", "date", "host", "torch", "numba", "method", "method_text",
                "reference"):
        assert meta.get(key), key
    assert (meta["gpu"], meta["gpu_count"], meta["driver"], meta["cuda"], meta["seed"]) == ("", 0, "", "", 3)
    assert meta["method"] == runner.METHOD and meta["settings"]["gamma"] == 0.5 and meta["complete"] is True
    assert set(meta["originals"]) == {"pytorch-softdtw-cuda", "sdtw-cuda-torch", "pysdtw"}
    if PEERS.is_dir():
        assert meta["originals"]["pytorch-softdtw-cuda"]["commit"] == "fbedc3b"
        assert meta["originals"]["sdtw-cuda-torch"]["commit"] == "97fe99c"
        assert meta["originals"]["pysdtw"]["commit"] == "c902025"
        assert meta["originals"]["sdtw-cuda-torch"]["version"] == "0.1.0"


def test_bad_arguments_name_the_parameter(tmp_path):
    proc = run(tmp_path, "--quick", "--impl", "nope", "--out", str(tmp_path), "--device", "cpu")
    assert proc.returncode != 0 and "--impl: unknown ['nope']" in proc.stderr
    proc = run(tmp_path, "--quick", "--peers", str(tmp_path / "missing"), "--out", str(tmp_path))
    assert proc.returncode != 0 and "--peers:" in proc.stderr


def test_grids_are_the_seed_papers_and_the_long_points():
    cfg = config.load(ROOT / "configs/originals.yaml")
    seed = {(p.B, p.N, p.D) for p in cfg.grids["seed-grid"]}
    assert seed == {(b, n, d) for b in (16, 32) for n in (128, 512, 1024, 2048) for d in (1, 64)}
    assert [(p.B, p.N, p.D) for p in cfg.grids["length"]] == [(32, n, 128) for n in (64, 128, 256, 512, 1024, 2048)]
    assert {(p.N, p.D) for p in cfg.grids["dimension"]} == {(256, d) for d in (8, 16, 32, 64, 256)}  # D=128: length
    assert {p.N for p in cfg.grids["long"]} == {4096, 8192}
    keys = [(p.B, p.N, p.D) for p in cfg.points()]
    assert len(keys) == len(set(keys))
    quick = config.load(ROOT / "configs/originals-quick.yaml")
    assert len(quick.points()) == 2 and quick.impls == cfg.impls


def test_bad_config_names_the_setting(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("grids:\n  - {name: g, B: 2, N: {from: 4, to: 8}, D: 1}\n")
    with pytest.raises(ValueError, match="N must be"):
        config.load(bad)
    bad.write_text("settings: {repz: 3}\n")
    with pytest.raises(ValueError, match="unknown settings"):
        config.load(bad)


@pytest.mark.parametrize("b,n,m,d,gamma", [(1, 5, 5, 1, 1.0), (3, 7, 7, 3, 0.1), (2, 12, 12, 4, 0.01)])
def test_reference_matches_an_independent_float64_one(b, n, m, d, gamma):
    x, y = sdtw_results.make_inputs(b + n, b, n, m, d)
    pairs = verify.verified_pairs(b, n, m, 10 ** 9)
    values, gx, gy = verify.reference(x, y, pairs, gamma)
    for k, i in enumerate(pairs):
        v, rgx, rgy = numpy_reference.sdtw_xy(x[i].numpy(), y[i].numpy(), gamma)
        assert values[k].item() == pytest.approx(v, rel=1e-10)
        np.testing.assert_allclose(gx[k].numpy(), rgx, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(gy[k].numpy(), rgy, rtol=1e-8, atol=1e-10)


def test_ours_sees_the_inputs_of_the_one_seed_scheme(result):
    """The values ours saved at the first point (B=2, N=16, D=3) are soft_dtw of sdtw_results.make_inputs at
    the point's seed: the inputs sdtw-bench draws there too."""
    import sdtw_torch
    x, y = sdtw_results.make_inputs(sdtw_results.point_seed(3, 2, 16, 16, 3), 2, 16, 16, 3)
    saved = torch.load(result[4] / "outputs/ours_fused/0.pt")
    torch.testing.assert_close(saved["values"], sdtw_torch.soft_dtw(x, y, gamma=0.5), rtol=1e-6, atol=0)
    other = sdtw_results.make_inputs(sdtw_results.point_seed(4, 2, 16, 16, 3), 2, 16, 16, 3)
    assert not torch.allclose(saved["values"], sdtw_torch.soft_dtw(*other, gamma=0.5), rtol=1e-3)


def test_a_spent_budget_leaves_rows_not_a_gap(tmp_path):
    proc = run(tmp_path, "--quick", "--device", "cpu", "--impl", "ours_fused,pysdtw", "--budget-seconds", "1e-9",
               "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows, side = sdtw_results.read_results(tmp_path / "originals.csv")
    assert len(rows) == 4
    for r in rows:
        if r["impl"] == "ours_fused":
            assert r["disposition"] == "error" and r["message"].startswith("not run: the run's budget of 1e-09 s")
        else:
            assert r["disposition"] == "not_supported"
    assert side["metadata"]["complete"] is True


def test_a_pair_past_verify_max_cells_is_timed_not_verified(tmp_path):
    """As sdtw-bench: no pair fits verify_max_cells, so the row is timed and says it was not verified."""
    cfg = tmp_path / "big.yaml"
    cfg.write_text("name: big\nsettings: {warmup: 1, reps: 2, min_reps: 2, point_seconds: 1, seed: 3, verify_max_cells: 100}\n"
                   "grids:\n  - {name: big, points: [[2, 16, 3]]}\n")
    proc = run(tmp_path, "--config", str(cfg), "--device", "cpu", "--impl", "ours_fused", "--out", str(tmp_path / "out"),
               "--work", str(tmp_path / "work"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,), _ = sdtw_results.read_results(tmp_path / "out/originals.csv")
    assert row["disposition"] == "passed", row["message"]
    assert row["verified"] == "skipped (N*M > verify_max_cells)"
    assert float(row["time_ms_median"]) > 0 and row["grad_err"] == ""
