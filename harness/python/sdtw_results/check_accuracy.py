"""`sdtw-bench check --accuracy-csv` writes its gradient error table in a layout of its own (impl, device,
dtype, B, N, D, gamma, value_err, grad_err, status, seed); this rewrites it as a results file of the
schema (tool accuracy, grid "accuracy", its sidecar), so that the paper reads it as every other file.
ours' float32 rows are judged against sdtw-bench's float32 tolerance; the others carry none.

    python3 -m sdtw_results.check_accuracy TABLE.csv results/h100/grad-accuracy.csv --seed 1 [--device cuda]
"""
import argparse
import csv
import sys
from pathlib import Path

from sdtw_results import verify
from sdtw_results.metadata import collect
from sdtw_results.store import ResultsWriter

TABLE_COLUMNS = ["impl", "device", "dtype", "B", "N", "D", "gamma", "value_err", "grad_err", "status", "seed"]
STATUS = {"ok": "passed", "not_supported": "not_supported", "error": "error"}


def row_of(r):
    """A row of the schema from one row of the table."""
    if r["status"] not in STATUS:
        raise ValueError(f"status must be one of {sorted(STATUS)}, got {r['status']!r} (row {r})")
    ours_float32 = r["impl"].startswith("ours") and r["dtype"] == "float32"
    tol = verify.FLOAT32_TOLERANCE if ours_float32 else {"value_tol": None, "grad_tol": None}
    row = {"grid": "accuracy", "impl": r["impl"], "api": "", "mode": "", "device": r["device"], "dtype": r["dtype"],
           "B": r["B"], "N": r["N"], "M": r["N"], "D": r["D"], "gamma": r["gamma"], "bandwidth": "none",
           "normalize": False, "disposition": STATUS[r["status"]], "value_err": r["value_err"],
           "grad_err": r["grad_err"], **tol, "seed": r["seed"], "gpu": "0" if r["device"] == "cuda" else ""}
    if r["status"] == "ok":
        # The check compares every pair of the batch with the float64 reference.
        row["verified"] = f"{r['B']}/{r['B']}"
        if ours_float32:
            row["disposition"], row["message"] = verify.judge(float(r["value_err"]), float(r["grad_err"]),
                                                              tol["value_tol"], tol["grad_tol"])
    else:
        row["message"] = f"sdtw-bench check: {r['status']}"
    return row


def convert(table, out, seed, device, command=None):
    """Rewrites the table at `table` as the results file `out`; returns its number of rows."""
    with open(table, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != TABLE_COLUMNS:
            raise ValueError(f"{table}: columns {reader.fieldnames}, expected sdtw-bench check's {TABLE_COLUMNS}")
        rows = [row_of(r) for r in reader]
    meta = collect("accuracy", seed, device, command=command, source="sdtw-bench check --accuracy-csv")
    with ResultsWriter(out, "accuracy", meta) as writer:
        for row in rows:
            writer.append(row)
    return len(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("table", type=Path, help="the CSV sdtw-bench check --accuracy-csv wrote")
    ap.add_argument("out", type=Path, help="the results file to write (.csv, its .json beside it)")
    ap.add_argument("--seed", type=int, required=True, help="the base seed the check ran with (its --seed)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="where the check ran: its GPU's name, driver and CUDA go into the sidecar")
    args = ap.parse_args(argv)
    n = convert(args.table, args.out, args.seed, args.device)
    print(f"check_accuracy: {n} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
