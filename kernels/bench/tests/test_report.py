"""report.py on a synthetic sdtw_kernels_bench file: the CSV's columns (the results schema), the
nearest-rank spread over the repetitions, the floors of docs/DESIGN.md §4.7 at points worked out by
hand, and the issue's targets met or not."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sdtw_results

REPORT = Path(__file__).resolve().parents[1] / "report.py"
# Under its own name: paper/tests imports paper/report.py as `report` in the same pytest process.
_spec = importlib.util.spec_from_file_location("kernels_report", REPORT)
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def aggregate(b, n, d, fused, median_ms, cells_per_s, cost=None, part=None):
    """Three repetitions (median_ms between a faster and a slower one) and their aggregates; with
    cost, BM_FusedCost's run of the kernels' Cost of that index; with part, BM_SecondOrder's."""
    name = f"BM_SoftDtw/B:{b}/N:{n}/D:{d}/fused:{fused}/min_time:0.500/manual_time"
    if cost is not None:
        name = f"BM_FusedCost/B:{b}/N:{n}/D:{d}/cost:{cost}/min_time:0.500/manual_time"
    base = {"run_name": name, "run_type": "aggregate", "repetitions": 3, "cells_per_s": cells_per_s,
            "workspace_B_per_cell": 4.3}
    if part is not None:
        name = f"BM_SecondOrder/B:{b}/N:{n}/D:{d}/part:{part}/min_time:0.500/manual_time"
        base.update(run_name=name, workspace_B_per_cell=32.5 if part else 4.3, step_B_per_cell=52.5 if part else 4.3)
    runs = [{"run_name": name, "run_type": "iteration", "repetition_index": i, "real_time": t}
            for i, t in enumerate((median_ms * 1.1, median_ms, median_ms * 0.95))]
    return runs + [dict(base, aggregate_name="median", real_time=median_ms),
                   dict(base, aggregate_name="stddev", real_time=0.001)]


@pytest.fixture
def rows(tmp_path):
    bench = {"benchmarks": (
        aggregate(16, 128, 64, 1, 0.05, 5.2e9) + aggregate(16, 128, 64, 0, 0.07, 3.7e9)
        + aggregate(1024, 1024, 64, 1, 30.0, 35.8e9) + aggregate(32, 2048, 64, 1, 5.0, 26.8e9)
        + aggregate(32, 512, 64, 1, 0.5, 1e10, cost=0) + aggregate(32, 512, 64, 1, 0.55, 1e10, cost=1)
        + aggregate(32, 512, 64, 1, 1.0, 1e10, cost=3)
        + aggregate(32, 512, 64, 1, 0.3, 2.8e10, part=0) + aggregate(32, 512, 64, 1, 24.0, 3.5e8, part=1))}
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    out = subprocess.run([sys.executable, str(REPORT), str(tmp_path / "bench.json"), "--gpu", "H100", "--commit",
                          "abc", "--date", "2026-11-24", "--csv", str(tmp_path / "kernels.csv")],
                         capture_output=True, text=True, check=True).stdout
    assert "| binds |" in out and "GPU: H100; commit: abc; date: 2026-11-24." in out
    assert "| 16 | 128 | 64 | cost-tensor DP |" in out and "unfused" not in out.replace('"unfused"', "")
    rows, sidecar = sdtw_results.read_results(tmp_path / "kernels.csv")
    assert list(rows[0]) == report.COLUMNS == sdtw_results.COLUMNS + report.EXTRA_COLUMNS
    meta = sidecar["metadata"]
    assert (meta["tool"], meta["gpu"], meta["commit"], meta["date"]) == ("kernels", "H100", "abc", "2026-11-24")
    return {(int(r["B"]), int(r["N"]), r["mode"]): r for r in rows}


def test_time_is_the_nearest_rank_spread_of_the_repetitions(rows):
    r = rows[(16, 128, "fused")]
    assert (r["tool"], r["api"], r["reps"], r["verified"], r["disposition"]) == ("kernels", "kernel", "3", "off", "passed")
    assert float(r["time_ms_median"]) == 0.05
    assert float(r["time_ms_p10"]) == pytest.approx(0.0475) and float(r["time_ms_p90"]) == pytest.approx(0.055)


def test_a_file_without_the_repetitions_is_refused(tmp_path):
    bench = {"benchmarks": [r for r in aggregate(16, 128, 64, 1, 0.05, 5.2e9) if r["run_type"] == "aggregate"]}
    with pytest.raises(ValueError, match="no per-repetition runs"):
        report.rows_of(bench)


def test_targets_met_and_not(rows):
    assert rows[(16, 128, "fused")]["target"] == "<= 0.05 ms" and rows[(16, 128, "fused")]["target_met"] == "yes"
    assert rows[(16, 128, "cost-tensor-dp")]["target"] == "1.40x fused (<= 1.2x)"
    assert float(rows[(16, 128, "cost-tensor-dp")]["cost_tensor_dp_over_fused"]) == pytest.approx(0.07 / 0.05)
    assert rows[(16, 128, "cost-tensor-dp")]["target_met"] == "no"  # 0.07 > 1.2 x 0.05
    assert rows[(16, 128, "fused")]["cost_tensor_dp_over_fused"] == ""
    assert rows[(1024, 1024, "fused")]["target"] == ">= 80 G cells/s"
    assert rows[(1024, 1024, "fused")]["target_met"] == "no"
    assert rows[(32, 2048, "fused")]["target"] == "" and rows[(32, 2048, "fused")]["target_met"] == ""  # none


def test_named_costs_are_timed_against_sqeuclidean_of_the_same_run(rows):
    assert float(rows[(32, 512, "fused-l1")]["cost_over_sqeuclidean"]) == pytest.approx(1.1)
    assert rows[(32, 512, "fused-l1")]["target"] == "1.10x sqeuclidean (<= 1.2x)"
    assert rows[(32, 512, "fused-l1")]["target_met"] == "yes"
    assert rows[(32, 512, "fused-cosine")]["target"] == "2.00x sqeuclidean (<= 1.2x)"
    assert rows[(32, 512, "fused-cosine")]["target_met"] == "no"
    assert rows[(32, 512, "fused-sqeuclidean")]["cost_over_sqeuclidean"] == ""
    assert rows[(32, 512, "fused-sqeuclidean")]["target"] == ""


def test_floors_by_hand(rows):
    # chain at N = 128: 2 x (3 x 32 + 128 + 31) = 510 steps of 30 ns
    assert float(rows[(16, 128, "fused")]["floor_chain_ms"]) == pytest.approx(510 * 30e-6)
    # issue at B32 N2048 D64 fused: 2^27 cells x 225 / 32 / (132 x 4 x 1.6e9) + 2^27 x 128 / (132 x 128 x 1.6e9)
    cells = 32 * 2048 * 2048
    issue = cells * 225 / 32 / (132 * 4 * 1.6e9) + cells * 128 / (132 * 128 * 1.6e9)
    assert float(rows[(32, 2048, "fused")]["floor_issue_ms"]) == pytest.approx(issue * 1e3)
    assert float(rows[(32, 2048, "fused")]["floor_memory_ms"]) == pytest.approx(cells * 24 / 3.35e12 * 1e3)
    for r in (r for r in rows.values() if r["mode"] not in report.SECOND_ORDER):
        floors = {k: float(r[f"floor_{k}_ms"]) for k in ("chain", "issue", "memory")}
        assert r["binding_floor"] == max(floors, key=floors.get)
    assert rows[(16, 128, "fused")]["binding_floor"] == "chain"
    assert rows[(32, 2048, "fused")]["binding_floor"] == "issue"


def test_the_hessian_product_is_held_to_3x_the_backward_alone(rows):
    backward, product = rows[(32, 512, "backward")], rows[(32, 512, "hessian-product")]
    assert float(product["product_over_backward"]) == pytest.approx(80.0)
    assert product["target"] == "80.00x the backward (<= 3x)" and product["target_met"] == "no"
    assert float(product["step_bytes_per_cell"]) == 52.5 and float(product["workspace_bytes_per_cell"]) == 32.5
    # A part of a step has no floor (the floors are a whole step's) and the backward no target.
    assert product["binding_floor"] == "" and product["floor_issue_ms"] == ""
    assert backward["target"] == "" and backward["product_over_backward"] == ""
