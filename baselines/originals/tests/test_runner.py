"""The runner end to end on the CPU (ours measured, the originals not_supported without CUDA) with
misbehaving implementations (faulty.py): every failure is a row with a disposition, a process that
dies or hangs costs one point, the CSV has the documented columns; and its parts: the grids of the
config, the float64 reference against an independent numpy one."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "torch/python"), str(ROOT / "torch/tests/python")]

from baselines.originals import config, runner, verify  # noqa: E402
from baselines.originals.implementations import CUDA_ONLY  # noqa: E402
import reference as numpy_reference  # noqa: E402  (torch/tests/python/reference.py)

PEERS = ROOT.parent / "shared/peers"
ORIGINALS = ["sdtw_cuda_torch_fused", "sdtw_cuda_torch_unfused", "pytorch_softdtw_cuda", "pysdtw"]
FAULTY = ["raises", "oom", "dies", "hangs", "off_judged", "off_recorded", "broken_import", "cuda_only"]
TIMEOUT = 4


def run(tmp, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "torch/python")]))
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
    with open(tmp / "out/originals.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    meta = json.loads((tmp / "out/originals.json").read_text())
    return {(r["impl"], int(r["N"])): r for r in rows}, rows, meta, proc.stdout


def test_one_row_per_implementation_and_point(result):
    index, rows, meta, _ = result
    assert list(rows[0]) == runner.COLUMNS
    assert len(rows) == len(index) == 2 * (2 + len(ORIGINALS) + len(FAULTY))  # the repeated grid point: once
    assert {r["method"] for r in rows} == {runner.METHOD}
    assert {r["disposition"] for r in rows} <= set(runner.DISPOSITIONS)
    assert {r["grid"] for r in rows} == {"tiny"} and {r["device"] for r in rows} == {"cpu"}
    assert meta["columns"] == runner.COLUMNS and len(meta["rows"]) == len(rows)


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
            assert r["peak_mb"] == "" and r["step_mb"] == ""  # no allocator counters on the CPU


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


def test_errors_are_judged_for_ours_and_recorded_for_the_originals(result):
    index = result[0]
    judged, recorded = index[("off_judged", 24)], index[("off_recorded", 24)]
    assert judged["disposition"] == "failed" and "value error" in judged["message"]
    assert float(judged["value_err"]) > 1e-3
    assert recorded["disposition"] == "passed" and recorded["value_tol"] == "" and recorded["message"] == ""
    assert float(recorded["value_err"]) == pytest.approx(float(judged["value_err"]))


def test_metadata_names_versions_and_commits(result):
    meta = result[2]["metadata"]
    for key in ("gpu", "driver", "torch", "numba", "cuda", "git_commit", "date", "method", "method_text", "reference"):
        assert meta.get(key), key
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
    x, y = verify.make_inputs(b, n, d, seed=b + n)
    pairs = verify.verified_pairs(b, n, 10 ** 9)
    values, gx, gy = verify.reference(x, y, pairs, gamma)
    for k, i in enumerate(pairs):
        v, rgx, rgy = numpy_reference.sdtw_xy(x[i].numpy(), y[i].numpy(), gamma)
        assert values[k].item() == pytest.approx(v, rel=1e-10)
        np.testing.assert_allclose(gx[k].numpy(), rgx, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(gy[k].numpy(), rgy, rtol=1e-8, atol=1e-10)


def test_verified_pairs_and_errors():
    assert verify.verified_pairs(32, 2048, 1 << 25) == [0, 4, 8, 12, 16, 20, 24, 28]
    assert verify.verified_pairs(1, 8192, 1 << 25) == [0]
    r = (torch.tensor([2.0, -4.0], dtype=torch.float64), torch.ones(2, 3, 1, dtype=torch.float64),
         torch.ones(2, 3, 1, dtype=torch.float64))
    out = (torch.tensor([2.0, -3.0]), torch.full((2, 3, 1), 1.5), torch.ones(2, 3, 1))
    assert verify.errors(out, r) == pytest.approx((0.25, 0.5))
    assert verify.judge(True, 2e-5, 0.0)[0] == "failed" and verify.judge(False, 10.0, 10.0)[0] == "passed"
    assert verify.judge(False, float("nan"), 0.0)[0] == "failed"


def test_a_spent_budget_leaves_rows_not_a_gap(tmp_path):
    proc = run(tmp_path, "--quick", "--device", "cpu", "--impl", "ours_fused,pysdtw", "--budget-seconds", "1e-9",
               "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(tmp_path / "originals.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4
    for r in rows:
        if r["impl"] == "ours_fused":
            assert r["disposition"] == "error" and r["message"].startswith("not run: the run's budget of 1e-09 s")
        else:
            assert r["disposition"] == "not_supported"
    assert json.loads((tmp_path / "originals.json").read_text())["metadata"]["complete"] is True
