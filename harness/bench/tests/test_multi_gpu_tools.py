"""The multi-GPU record's tools on the CPU: ddp_scaling.py's sizes and parameter comparison,
sweep_gpus.py's comparison of two result files, and paper/multi_gpu_summary.py's tables from files
as the tools write them. (The torchrun runs themselves need the GPUs: scripts/two_gpus.sh.)"""
import csv
import math
import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

import sdtw_results

ROOT = Path(__file__).resolve().parents[3]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sweep_gpus = load("harness/bench/sweep_gpus.py", "sweep_gpus")
summary = load("paper/multi_gpu_summary.py", "multi_gpu_summary")


def sweep_rows(dispositions):
    keys = [("ours_fused", "cuda", "float32", "16", str(n), str(n), "8", "1", "none", "false") for n in (64, 128)]
    return {k: dict(zip(sweep_gpus.KEY, k), disposition=d) for k, d in zip(keys, dispositions)}


def test_same_points_and_dispositions():
    assert sweep_gpus.compare(sweep_rows(["passed", "passed"]), sweep_rows(["passed", "passed"])) == (True, "")


def test_a_changed_disposition_is_named():
    same, why = sweep_gpus.compare(sweep_rows(["passed", "passed"]), sweep_rows(["passed", "error"]))
    assert not same and why.startswith("1 points change disposition") and "passed -> error" in why


def test_a_missing_point_is_counted():
    one = sweep_rows(["passed", "passed"])
    every = dict(list(one.items())[:1])
    assert sweep_gpus.compare(one, every) == (False, "1 points only on one GPU, 0 only on all GPUs")


ddp_scaling = load("pytorch/bench/ddp_scaling.py", "ddp_scaling")


def test_sizes_are_parsed_and_refused_by_name():
    assert ddp_scaling.parse_size("32x512x64") == (32, 512, 64)
    for bad in ("32x512", "0x8x8", "ax8x8"):
        with pytest.raises(Exception, match=r"--sizes"):
            ddp_scaling.parse_size(bad)


def test_parameter_difference_is_relative_to_the_largest_parameter():
    a = [[1.0, -4.0], [0.5]]
    assert ddp_scaling.max_relative_difference(a, a) == 0.0
    assert ddp_scaling.max_relative_difference(a, [[1.0, -4.0], [0.5 + 4e-4]]) == pytest.approx(1e-4)


def test_a_diverged_or_mismatched_run_is_no_agreement():
    a = [[1.0, -4.0], [0.5]]
    for b in ([[1.0, float("nan")], [0.5]], [[1.0, -4.0], [float("inf")]], [[1.0, -4.0]]):
        diff = ddp_scaling.max_relative_difference(a, b)
        assert math.isnan(diff) and not diff <= ddp_scaling.PARAMETER_TOL
    assert math.isnan(ddp_scaling.max_relative_difference([[float("nan")]], [[float("nan")]]))
    assert ddp_scaling.max_relative_difference([[0.0, 0.0]], [[0.0, 3e-5]]) == pytest.approx(3e-5)


@pytest.fixture
def ddp_csv(tmp_path):
    """ddp.csv as ddp_scaling.py writes it (its writer, its extra columns), with made-up times."""
    meta = sdtw_results.collect("ddp", seed=0, device="cpu", command=["ddp_scaling.py"])
    extras = ("processes", "sequences_per_s", "weak_scaling_efficiency", "eval_loss_start", "eval_loss_end",
              "parameter_max_rel_diff", "parameter_tol")
    with sdtw_results.ResultsWriter(tmp_path / "ddp.csv", "ddp", meta, extras) as w:
        for processes, rate, eff in ((1, 400.0, None), (2, 760.0, 0.95)):
            w.append(dict(ddp_scaling.base_row(SimpleNamespace(device="cpu", warmup=2), processes, 8, 64, 4,
                                               f"weak-scaling x{processes}"),
                          disposition="passed", sequences_per_s=rate, weak_scaling_efficiency=eff,
                          **sdtw_results.spread([20.0, 21.0, 22.0])))
        w.append(dict(ddp_scaling.base_row(SimpleNamespace(device="cpu", warmup=2), 2, 8, 64, 4,
                                           "two processes vs one, same global batch, SGD"),
                      disposition="passed", parameter_max_rel_diff="2e-07", parameter_tol=ddp_scaling.PARAMETER_TOL))
    return tmp_path / "ddp.csv"


def test_summary_reads_the_files(ddp_csv, tmp_path):
    folder = ddp_csv.parent
    meta = sdtw_results.collect("sweep_gpus", seed=0, device="cpu", command=["sweep_gpus.py"], config="c.yaml")
    extras = ("gpus", "rows", "passed_rows", "same_points_and_dispositions")
    with sdtw_results.ResultsWriter(folder / "sweep_gpus.csv", "sweep_gpus", meta, extras) as w:
        w.append({"grid": "c", "mode": "--gpus 0", "wall_s": 10.0, "gpus": "0", "rows": 2, "passed_rows": 2,
                  "disposition": "passed"})
        w.append({"grid": "c", "mode": "--gpus all", "wall_s": 6.0, "gpus": "all", "rows": 2, "passed_rows": 2,
                  "same_points_and_dispositions": "true", "disposition": "passed"})
    summary.main(str(folder))
    text = (folder / "summary.md").read_text()
    with open(ddp_csv, newline="") as f:
        rates = [r["sequences_per_s"] for r in csv.DictReader(f) if r["sequences_per_s"]]
    assert rates and all(f"| {rate} |" in text for rate in rates)
    assert "(two processes vs one, same global batch, SGD): parameters differ by 2e-07" in text
    assert "Wall time with all GPUs over one GPU (same command, same machine): 0.60" in text


def test_a_missing_parameter_check_is_said(ddp_csv):
    rows, sidecar = sdtw_results.read_results(ddp_csv)
    scaling = [r for r in rows if r["mode"].startswith("weak-scaling")]
    assert "parameter check has no row" in "\n".join(summary.ddp_section(scaling, sidecar["metadata"]))
    assert "parameter check has no row" not in "\n".join(summary.ddp_section(rows, sidecar["metadata"]))
