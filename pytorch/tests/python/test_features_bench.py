"""pytorch/bench/features.py, the cdist and barycenter sweep: its quick grid run as a user runs it (CSV
columns, sampled value error, features.md), and its target, baseline and failure logic on stand-ins.
The `cuda` test runs the quick grid on the GPU."""
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from conftest import requires_cuda

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import features  # noqa: E402
from features_report import COLUMNS  # noqa: E402
import sdtw_results  # noqa: E402


def sweep(out, device):
    """The script in a fresh process with this test's environment (PYTHONPATH, SDTW_TORCH_LIBRARY)."""
    subprocess.run([sys.executable, str(BENCH / "features.py"), "--out", str(out), "--device", device, "--quick"],
                   check=True, env=dict(os.environ), capture_output=True, text=True, timeout=120)
    rows, sidecar = sdtw_results.read_results(out / "features.csv")
    return rows, (out / "features.md").read_text(), sidecar["metadata"]


@pytest.fixture(scope="module")
def quick_cpu(tmp_path_factory):
    return sweep(tmp_path_factory.mktemp("features"), "cpu")


def test_csv_has_every_column_and_a_row_per_point(quick_cpu):
    rows, _, meta = quick_cpu
    assert list(rows[0]) == COLUMNS == sdtw_results.COLUMNS + features.EXTRA_COLUMNS
    assert [(r["mode"], r["N"], r["D"]) for r in rows] == \
        [("cdist", str(n), str(d)) for _, n, d in features.QUICK_CDIST] + \
        [("barycenter", str(n), str(d)) for _, n, d in features.QUICK_BARYCENTER]
    assert meta["tool"] == "features" and meta["gpu"] == "" and meta["commit"] and meta["timer"] == "wall-clock"
    for r in rows:
        assert r["tool"] == "features" and r["gpu"] == "" and r["device"] == "cpu" and r["grid"] == "quick"
        assert r["disposition"] == "passed", r["message"]
        assert r["seed"] == str(sdtw_results.point_seed(0, int(r["B"]), int(r["N"]), int(r["M"]), int(r["D"])))
        assert float(r["time_ms_median"]) > 0
        assert float(r["time_ms_p10"]) <= float(r["time_ms_median"]) <= float(r["time_ms_p90"])


def test_cdist_is_verified_on_a_sample_of_pairs(quick_cpu):
    rows = quick_cpu[0]
    for r in (r for r in rows if r["mode"] == "cdist"):
        b = int(r["B"])
        assert r["verified"] == f"{min(features.SAMPLE_PAIRS, b * b)}/{b * b} pairs (subsample)"
        assert float(r["value_err"]) < 1e-5 and r["value_tol"] == "1e-05" and r["grad_err"] == ""
        assert float(r["pairs_per_s"]) == pytest.approx(b * b / (float(r["time_ms_median"]) / 1e3), rel=1e-6)


def test_barycenter_without_cuda_measures_ours_and_not_the_baseline(quick_cpu):
    rows = quick_cpu[0]
    for r in (r for r in rows if r["mode"] == "barycenter"):
        assert float(r["ms_per_iter"]) == pytest.approx(float(r["time_ms_median"]) / features.QUICK_ITERATIONS,
                                                        rel=1e-6)
        for p in ("baseline_", "baseline_unfused_"):  # softdtw-cuda-torch in both modes needs CUDA
            assert r[p + "disposition"] == "not_supported" and r[p + "message"] == "needs CUDA (numba)"
            assert not r[p + "time_ms_median"]
        assert r["objective"] and not r["ratio"] and not r["baseline_unfused_ratio"] and r["verified"] == "off"


def test_markdown_is_generated(quick_cpu):
    md = quick_cpu[1]
    assert md.startswith("# Pairwise soft-DTW and barycenters")
    assert "## cdist" in md and "## barycenter" in md and "median of 3 calls" in md
    assert "none of the target points is in this run" in md
    assert "softdtw-cuda-torch (default, fused) ms/iter" in md and "softdtw-cuda-torch (unfused) ms/iter" in md
    assert "softdtw-cuda-torch (unfused): not_supported: needs CUDA (numba)" in md


def args(**kw):
    return SimpleNamespace(device="cpu", reps=2, iterations=features.QUICK_ITERATIONS, quick=True, **kw)


def test_a_target_point_says_met_or_not(monkeypatch):
    monkeypatch.setattr(features, "CDIST_TARGET_MS", {(4, 8, 2): 1e6})
    row = features.cdist_point(4, 8, 2, args())
    assert row["target"] == "ms <= 1e+06" and row["target_met"] == "yes"
    # ours as its own baseline: the same objective, a ratio near 1, so not 20x faster
    monkeypatch.setattr(features, "BARYCENTER_TARGET", {(3, 6, 1)})
    monkeypatch.setattr(features, "ITERATIONS", features.QUICK_ITERATIONS)
    import sdtw_torch
    row = features.barycenter_point(3, 6, 1, args(), sdtw_torch.softdtw_barycenter, "")
    assert row["baseline_disposition"] == "passed" and row["objective_rel_diff"] < 1e-12
    assert row["ratio"] == pytest.approx(row["baseline_ms_per_iter"] / row["ms_per_iter"])
    assert row["target_met"] == "no"


def test_the_baseline_runs_in_its_default_and_its_unfused_mode():
    import sdtw_torch
    modes = []

    def baseline(S, fused="not given", **kw):
        modes.append(fused)
        return sdtw_torch.softdtw_barycenter(S, **kw) * (1.0 if fused is None else 1.5)
    row = features.barycenter_point(3, 6, 1, args(), baseline, "")
    assert set(modes) == {None, False}  # the default (fused on CUDA) and fused=False, warm-up and timed calls
    assert row["baseline_disposition"] == row["baseline_unfused_disposition"] == "passed"
    assert row["objective_rel_diff"] < 1e-12 and row["ratio"] == pytest.approx(
        row["baseline_ms_per_iter"] / row["ms_per_iter"])
    # the unfused stand-in answers another barycenter: its objective differs, so no ratio is written
    assert row["baseline_unfused_objective_rel_diff"] > 1e-3 and "baseline_unfused_ratio" not in row


def test_a_failed_point_is_a_row_with_its_error(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("synthetic failure\nsecond line")
    monkeypatch.setattr(features.sdtw_torch, "cdist_soft_dtw", broken)
    row = features.cdist_point(4, 8, 2, args())
    assert row["disposition"] == "error" and row["message"] == "RuntimeError: synthetic failure"
    row = features.barycenter_point(3, 6, 1, args(), broken, "")
    assert row["disposition"] == "passed" and row["baseline_disposition"] == "error" and "ratio" not in row


@pytest.mark.parametrize("device", [pytest.param("cuda", marks=requires_cuda)])
def test_quick_sweep_on_the_gpu(tmp_path, device):
    rows, _, meta = sweep(tmp_path, device)
    assert meta["timer"] == "cuda-events" and meta["gpu"] == torch.cuda.get_device_name()
    assert all(r["gpu"] == str(torch.cuda.current_device()) for r in rows)
    assert all(r["disposition"] == "passed" for r in rows)
    assert all(float(r["value_err"]) < 1e-5 for r in rows if r["mode"] == "cdist")


def test_no_ratio_is_written_where_the_objectives_differ():
    import sdtw_torch
    from features_report import OBJECTIVE_REL_MAX

    def elsewhere(S, **kw):
        return sdtw_torch.softdtw_barycenter(S, **kw) + 10.0
    row = features.barycenter_point(3, 6, 1, args(), elsewhere, "")
    assert row["baseline_disposition"] == "passed" and row["objective_rel_diff"] > OBJECTIVE_REL_MAX
    assert "ratio" not in row


def test_a_ratio_is_shown_only_where_the_objectives_agree():
    from features_report import OBJECTIVE_REL_MAX, comparable_ratio

    assert comparable_ratio({"ratio": "40.0", "objective_rel_diff": str(OBJECTIVE_REL_MAX / 2)}) == "40"
    shown = comparable_ratio({"ratio": "122.4", "objective_rel_diff": "0.004"})
    assert "122" not in shown and "objectives differ by 0.004" in shown
    assert comparable_ratio({"ratio": "", "objective_rel_diff": ""}) == "-"  # one side did not run
