"""The schema's Python side: column list, percentiles, the seed scheme, verification, and the writer's
files, lock and reader."""
import json
import math
import subprocess
import sys
import textwrap

import pytest
import torch

from sdtw_results import (COLUMNS, SCHEMA, ResultsWriter, WriterBusy, collect, header, make_inputs, nearest_rank,
                          point_seed, read_results, sidecar_path, spread)
from sdtw_results import verify
from sdtw_results.inputs import fnv1a64
from sdtw_results.schema import fields, text


def test_common_columns_in_order_and_extras_after():
    assert COLUMNS[:4] == ["tool", "grid", "impl", "api"]
    assert COLUMNS[-3:] == ["seed", "wall_s", "gpu"] and len(COLUMNS) == len(set(COLUMNS)) == 31
    assert header(["kind", "ratio"]) == COLUMNS + ["kind", "ratio"]
    with pytest.raises(ValueError, match=r"extra columns \['gpu'\] repeat common columns"):
        header(["gpu"])


def test_fields_refuse_unknown_columns_and_dispositions():
    cols = header(["extra"])
    row = fields({"disposition": "passed", "B": 4, "gamma": 0.1, "normalize": False, "value_err": math.nan,
                  "message": "two\nlines", "extra": math.inf}, cols)
    assert row[cols.index("B")] == "4" and row[cols.index("gamma")] == "0.1"
    assert row[cols.index("normalize")] == "false" and row[cols.index("value_err")] == ""
    assert row[cols.index("message")] == "two lines" and row[cols.index("extra")] == "inf"
    with pytest.raises(ValueError, match=r"outside the file's header"):
        fields({"disposition": "passed", "typo": 1}, cols)
    with pytest.raises(ValueError, match=r"disposition must be one of"):
        fields({"disposition": "ran"}, cols)
    assert text(1 / 3) == "0.3333333333"


def test_nearest_rank_percentiles_by_hand():
    times = [float(v) for v in range(10, 0, -1)]  # 10 values, unsorted
    assert nearest_rank(times, 0.1) == 1.0 and nearest_rank(times, 0.5) == 5.0 and nearest_rank(times, 0.9) == 9.0
    assert spread([3.0, 1.0, 2.0, 4.0]) == {"time_ms_median": 2.0, "time_ms_p10": 1.0, "time_ms_p90": 4.0, "reps": 4}
    assert nearest_rank([7.0], 0.1) == 7.0
    assert nearest_rank(list(range(1, 31)), 0.1) == 3 and nearest_rank(list(range(1, 31)), 0.9) == 27
    with pytest.raises(ValueError, match="no values"):
        nearest_rank([], 0.5)


def test_seed_is_fnv1a_of_the_shape_xor_base():
    assert fnv1a64(b"") == 0xCBF29CE484222325 and fnv1a64(b"a") == 0xAF63DC4C8601EC8C  # FNV's published vectors
    assert point_seed(0, 2, 16, 24, 3) == fnv1a64(b"2|16|24|3|")
    assert point_seed(5, 2, 16, 24, 3) == fnv1a64(b"2|16|24|3|") ^ 5
    assert point_seed(0, 2, 16, 24, 3) != point_seed(0, 2, 24, 16, 3)
    with pytest.raises(ValueError, match=r"N must be a positive integer, got 0"):
        point_seed(0, 2, 0, 24, 3)


def test_inputs_drawn_in_float64_then_cast():
    seed = point_seed(1, 3, 5, 7, 2)
    x, y = make_inputs(seed, 3, 5, 7, 2)
    x64, y64 = make_inputs(seed, 3, 5, 7, 2, dtype=torch.float64)
    assert x.dtype == torch.float32 and x.shape == (3, 5, 2) and y.shape == (3, 7, 2)
    assert torch.equal(x, x64.float()) and torch.equal(y, y64.float())
    g = torch.Generator().manual_seed(seed)
    assert torch.equal(x64, torch.randn(3, 5, 2, generator=g, dtype=torch.float64))
    assert not torch.equal(make_inputs(point_seed(2, 3, 5, 7, 2), 3, 5, 7, 2)[0], x)


def test_verified_pairs_as_sdtw_bench_picks_them():
    assert verify.verified_pairs(32, 2048, 2048, 1 << 25) == [0, 4, 8, 12, 16, 20, 24, 28]
    assert verify.verified_text(verify.verified_pairs(32, 2048, 2048, 1 << 25), 32) == "8/32 (subsample)"
    assert verify.verified_pairs(3, 4, 4, 1000) == [0, 1, 2] and verify.verified_text([0, 1, 2], 3) == "3/3"
    assert verify.verified_pairs(3, 100, 100, 10) == []
    assert verify.verified_text([], 3) == "skipped (N*M > verify_max_cells)"


def test_errors_and_judge():
    ref = (torch.tensor([1.0, -2.0], dtype=torch.float64), torch.ones(2, 3, 1, dtype=torch.float64),
           torch.ones(2, 4, 1, dtype=torch.float64))
    got = (torch.tensor([1.0, -2.002]), torch.ones(2, 3, 1) * 1.01, torch.ones(2, 4, 1))
    value_err, grad_err = verify.errors(got, ref)
    assert value_err == pytest.approx(0.001, rel=1e-4) and grad_err == pytest.approx(0.01, rel=1e-4)
    assert verify.judge(value_err, grad_err, 1e-5, 1e-4) == (
        "failed", "value error 0.001 > 1e-05; gradient rel-L2 error 0.01 > 0.0001")
    assert verify.judge(1e-6, 1e-5, 1e-5, 1e-4) == ("passed", "")
    assert verify.judge(math.inf, None, 1e-5, 1e-4)[0] == "failed"
    with pytest.raises(ValueError, match="expected"):
        verify.errors((torch.zeros(3), None, None), ref)


def test_writer_appends_rows_and_keeps_the_sidecar_current(tmp_path):
    meta = {"commit": "abc", "seed": 0}
    with ResultsWriter(tmp_path / "r.csv", "unit", meta, ["kind"]) as w:
        assert read_results(tmp_path / "r.csv")[0] == []
        w.append({"disposition": "passed", "B": 2, "kind": "a", "time_ms_median": 1.5})
        rows, side = read_results(tmp_path / "r.csv")
        assert len(rows) == 1 and rows[0]["tool"] == "unit" and rows[0]["kind"] == "a" and rows[0]["seed"] == ""
        w.append({"disposition": "error", "message": "boom, with a comma"})
    rows, side = read_results(tmp_path / "r.csv")
    assert [r["disposition"] for r in rows] == ["passed", "error"] and rows[1]["message"] == "boom, with a comma"
    assert side == {"schema": SCHEMA, "tool": "unit", "columns": COLUMNS + ["kind"],
                    "metadata": {"commit": "abc", "seed": 0, "tool": "unit"}}
    assert sidecar_path(tmp_path / "r.csv") == tmp_path / "r.json"


def test_second_writer_is_refused_while_the_first_holds_the_file(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from sdtw_results import ResultsWriter
        w = ResultsWriter({str(tmp_path / 'r.csv')!r}, "unit", {{}})
        print("ready", flush=True)
        sys.stdin.readline()
        w.append({{"disposition": "passed"}})
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(WriterBusy, match=r"r\.csv is being written by another process \(pid \d+"):
            ResultsWriter(tmp_path / "r.csv", "unit", {})
    finally:
        holder.communicate("go\n", timeout=60)
    assert holder.returncode == 0
    assert len(read_results(tmp_path / "r.csv")[0]) == 1
    with ResultsWriter(tmp_path / "r.csv", "unit", {}):  # free again once the holder exited
        pass


def test_reader_refuses_a_file_without_the_common_columns(tmp_path):
    (tmp_path / "old.csv").write_text("impl,N\nours,8\n")
    with pytest.raises(ValueError, match=r"missing columns \['tool', 'grid'"):
        read_results(tmp_path / "old.csv")


def test_metadata_has_the_common_keys(monkeypatch):
    monkeypatch.setenv("SDTW_GIT_COMMIT", "abc123")
    monkeypatch.delenv("SDTW_GIT_DIRTY", raising=False)
    meta = collect("unit", 7, "cpu", command=["tool", "--x"], config="c.yaml")
    assert {k: meta[k] for k in ("tool", "command", "commit", "dirty", "gpu", "gpu_count", "driver", "cuda", "seed",
                                 "config")} == {"tool": "unit", "command": ["tool", "--x"], "commit": "abc123",
                                                "dirty": "unknown", "gpu": "", "gpu_count": 0, "driver": "",
                                                "cuda": "", "seed": 7, "config": "c.yaml"}
    assert meta["torch"] == torch.__version__ and meta["host"] and meta["date"].endswith("Z")
    monkeypatch.setenv("SDTW_GIT_DIRTY", "true")
    assert collect("unit", 0, "cpu")["dirty"] == "true"
    with pytest.raises(ValueError, match=r"extra keys \['date'\] repeat common metadata keys"):
        collect("unit", 0, "cpu", date="yesterday")
    json.dumps(meta)
