"""checkpoint_report.py on a synthetic sdtw_kernels_checkpoint_bench file: the CSV's columns (the
results schema), the ratio to the full state of the same run, and the checkpointed mode's targets met or not."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sdtw_results

REPORT = Path(__file__).resolve().parents[1] / "checkpoint_report.py"
_spec = importlib.util.spec_from_file_location("checkpoint_report", REPORT)
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def run(b, n, band_rows, ms, step_gb, steps=2, residual=1e-7, vs_full=(-1, -1), finite=1):
    cells = b * n * n
    return {"run_name": f"BM_Checkpoint/B:{b}/N:{n}/D:8/band_rows:{band_rows}/iterations:{steps}/manual_time",
            "run_type": "iteration", "iterations": steps, "real_time": ms, "cells_per_s": cells / (ms / 1e3),
            "ns_per_cell": ms * 1e6 / cells, "step_GB": step_gb, "grad_finite": finite,
            "translation_residual": residual, "grad_x_vs_full": vs_full[0], "grad_y_vs_full": vs_full[1]}


@pytest.fixture
def rows(tmp_path):
    bench = {"benchmarks": [run(1, 1 << 17, 0, 400.0, 73.1), run(1, 1 << 17, 2048, 1000.0, 1.2, vs_full=(0, 3e-7)),
                            run(1, 1 << 17, 16384, 750.0, 9.2, vs_full=(0, 2e-6)),
                            run(1, 1 << 17, 65536, 700.0, 40.0, vs_full=(0, 3e-7)),
                            run(16, 1 << 16, 1024, 9000.0, 5.1, residual=3e-4),
                            run(1, 1 << 20, 2048, 60000.0, 17.5, steps=1)]}
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    out = subprocess.run([sys.executable, str(REPORT), str(tmp_path / "bench.json"), "--gpu", "H100", "--commit",
                          "abc", "--date", "2026-11-26", "--csv", str(tmp_path / "checkpoint.csv")],
                         capture_output=True, text=True, check=True).stdout
    assert "GPU: H100; commit: abc; date: 2026-11-26." in out
    table, sidecar = sdtw_results.read_results(tmp_path / "checkpoint.csv")
    assert list(table[0]) == sdtw_results.COLUMNS + report.EXTRA_COLUMNS
    assert (sidecar["metadata"]["tool"], sidecar["metadata"]["commit"]) == ("checkpoint", "abc")
    return {(int(r["B"]), int(r["N"]), int(r["band_rows"])): r for r in table}


def test_ratio_to_the_full_state_of_the_same_run(rows):
    assert float(rows[(1, 1 << 17, 2048)]["over_full"]) == pytest.approx(2.5)
    assert rows[(1, 1 << 17, 2048)]["target"] == "2.50x full per cell (<= 2x)"
    assert rows[(1, 1 << 17, 2048)]["target_met"] == "no"
    assert rows[(1, 1 << 17, 65536)]["target_met"] == "yes"
    assert rows[(1, 1 << 17, 0)]["mode"] == "full" and rows[(1, 1 << 17, 0)]["over_full"] == ""


def test_peak_and_batch_targets(rows):
    assert rows[(1, 1 << 20, 2048)]["target"] == "completes, <= 16 GB"
    assert rows[(1, 1 << 20, 2048)]["target_met"] == "no"  # 17.5 GB
    assert rows[(1, 1 << 20, 2048)]["gradient_checked"] == "passed"
    assert float(rows[(16, 1 << 16, 1024)]["time_ms_median"]) == 9000.0
    assert (rows[(16, 1 << 16, 1024)]["steps"], rows[(1, 1 << 20, 2048)]["steps"]) == ("2", "1")


def test_a_failed_run_is_an_error():
    bad = run(1, 1 << 20, 2048, 1.0, 1.0)
    bad.update(error_occurred=True, error_message="out of memory")
    with pytest.raises(ValueError, match="out of memory"):
        report.rows_of({"benchmarks": [bad]})


def test_a_gradient_that_fails_its_check_leaves_the_target_unmet(rows):
    # 16384-row bands: 1.88x (within 2x) but grad_y 2e-6 from the full state's; B = 16: residual 3e-4.
    assert rows[(1, 1 << 17, 16384)]["gradient_checked"] == "failed"
    assert rows[(1, 1 << 17, 16384)]["target_met"] == "no"
    assert rows[(16, 1 << 16, 1024)]["gradient_checked"] == "failed"
    assert rows[(16, 1 << 16, 1024)]["target_met"] == "no"
    assert rows[(1, 1 << 17, 65536)]["gradient_checked"] == "passed"
    assert rows[(1, 1 << 17, 0)]["grad_x_vs_full"] == ""
