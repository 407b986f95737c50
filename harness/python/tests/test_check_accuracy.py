"""sdtw-bench check's accuracy table rewritten as a results file: every row kept, ours' float32 rows judged
against the float32 tolerance, the others' status as their disposition; and on the real table where
sdtw-bench is built."""
import os
import subprocess

import pytest

import sdtw_results
from sdtw_results import check_accuracy

TABLE = """impl,device,dtype,B,N,D,gamma,value_err,grad_err,status,seed
ours_cpu,cpu,float32,4,64,8,1,2.990e-08,2.467e-08,ok,261328
ours_cpu,cpu,float32,4,64,8,0.01,2.225e-08,3.100e-04,ok,269247
maghoumi,cpu,float32,4,256,8,1,5.000e-03,2.000e-02,ok,17
maghoumi,cuda,float32,4,2048,8,1,,,not_supported,18
"""


def test_rows_are_judged_and_kept(tmp_path):
    (tmp_path / "table.csv").write_text(TABLE)
    assert check_accuracy.main([str(tmp_path / "table.csv"), str(tmp_path / "acc.csv"), "--seed", "5",
                                "--device", "cpu"]) == 0
    rows, sidecar = sdtw_results.read_results(tmp_path / "acc.csv")
    assert sidecar["tool"] == "accuracy" and sidecar["metadata"]["seed"] == 5 and sidecar["metadata"]["gpu"] == ""
    assert [r["disposition"] for r in rows] == ["passed", "failed", "passed", "not_supported"]
    assert rows[1]["message"] == "gradient rel-L2 error 0.00031 > 0.0001"
    assert (rows[0]["value_tol"], rows[0]["grad_tol"], rows[2]["grad_tol"]) == ("1e-05", "0.0001", "")
    assert [r["seed"] for r in rows] == ["261328", "269247", "17", "18"] and rows[0]["verified"] == "4/4"
    assert rows[3]["gpu"] == "0" and rows[3]["M"] == "2048" and rows[3]["message"] == "sdtw-bench check: not_supported"


def test_another_layout_is_refused(tmp_path):
    (tmp_path / "table.csv").write_text("impl,N,grad_err\nours,64,1e-6\n")
    with pytest.raises(ValueError, match="expected sdtw-bench check's"):
        check_accuracy.convert(tmp_path / "table.csv", tmp_path / "acc.csv", 1, "cpu")


@pytest.mark.skipif(not os.environ.get("SDTW_BENCH_EXE"), reason="sdtw-bench is not built")
def test_the_real_table(tmp_path):
    table = tmp_path / "table.csv"
    subprocess.run([os.environ["SDTW_BENCH_EXE"], "check", "--quick", "--seed", "1", "--accuracy-csv", str(table)],
                   check=True, capture_output=True, timeout=240)
    n = check_accuracy.convert(table, tmp_path / "acc.csv", 1, "cpu")
    rows, _ = sdtw_results.read_results(tmp_path / "acc.csv")
    assert n == len(rows) > 0 and all(r["disposition"] in sdtw_results.DISPOSITIONS for r in rows)
    ours = [r for r in rows if r["impl"] == "ours_cpu" and r["dtype"] == "float32"]
    assert ours and all(r["disposition"] == "passed" and float(r["grad_err"]) <= 1e-4 for r in ours)
