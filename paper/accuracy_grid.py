#!/usr/bin/env python3
"""The kernels' accuracy grid (kernels/tests/accuracy_grid_test.cpp's `[ accuracy ]` lines) as a result
file of the schema, so that the paper quotes it from a CSV: per (N, gamma) the kernels' own gradient error
(grad_err: against the float64 reference on the same float32 cost), the end-to-end one (against the float64
cost) and how far the float32 cost alone moves the reference.

    accuracy_grid.py --out results/h100/accuracy-grid.csv kernels-grid=grid.log known-worst-input=replay.log
"""
import argparse
import re
import sys
from pathlib import Path

import sdtw_results

LINE = re.compile(r"^\[ accuracy \] N=(\d+) gamma=([0-9.e+-]+) value_rel=([0-9.e+-]+) grad_rel_l2=([0-9.e+-]+) "
                  r"\(against the float64 cost ([0-9.e+-]+)(?:; the float32 cost alone moves the reference by|, of "
                  r"which the float32 cost alone) ([0-9.e+-]+)\)")
SEED = re.compile(r"^\[ seed +\] accuracy grid: (\d+)")
EXTRAS = ["grad_err_end_to_end", "grad_err_cost_only"]
# The test's fixed shape and bounds (accuracy_grid_test.cpp): B = 1, D = 8, float32, fused mode.
SHAPE = {"B": 1, "D": 8, "value_tol": 1e-5, "grad_tol": 1e-4}


def parse(text, grid):
    """The rows of one test output, each with the seed of the `[ seed ]` line before it (each test of the
    grid draws its own; "" before any)."""
    seed, rows = "", []
    for line in text.splitlines():
        seeded = SEED.match(line)
        if seeded:
            seed = seeded.group(1)
        m = LINE.match(line)
        if not m:
            continue
        n, gamma, value, own, end, cost = m.groups()
        ok = float(value) <= SHAPE["value_tol"] and float(own) <= SHAPE["grad_tol"]
        rows.append({"grid": grid, "impl": "ours", "api": "kernel", "mode": "fused",
                     "device": "cuda", "dtype": "float32", "B": SHAPE["B"], "N": n, "M": n, "D": SHAPE["D"],
                     "gamma": gamma, "bandwidth": "none", "normalize": "false",
                     "disposition": "passed" if ok else "failed",
                     "message": "" if ok else f"value {value} or gradient {own} over the bound",
                     "value_err": value, "grad_err": own, "value_tol": SHAPE["value_tol"],
                     "grad_tol": SHAPE["grad_tol"], "verified": "1/1 pairs", "seed": seed,
                     "grad_err_end_to_end": end, "grad_err_cost_only": cost})
    return rows


def write(path, rows, command):
    """The rows and their sidecar through sdtw_results: its metadata names the GPU this process sees, the
    one the kernel tests ran on just before (none when run on the CPU, as in a test)."""
    import torch
    meta = sdtw_results.collect("accuracy", "", "cuda" if torch.cuda.is_available() else "cpu", command=command)
    with sdtw_results.ResultsWriter(path, "accuracy", meta, EXTRAS) as writer:
        for row in rows:
            writer.append(row)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="the CSV to write (its .json beside it)")
    ap.add_argument("logs", nargs="+", help="GRID=FILE: a test output and the grid name its rows get")
    args = ap.parse_args(argv)
    rows = []
    for item in args.logs:
        grid, sep, file = item.partition("=")
        if not sep or not grid or not Path(file).is_file():
            ap.error(f"logs: '{item}' is not GRID=FILE with an existing FILE")
        found = parse(Path(file).read_text(errors="replace"), grid)
        if not found:
            ap.error(f"logs: {file} has no '[ accuracy ]' line")
        rows += found
    write(args.out, rows, ["paper/accuracy_grid.py"] + argv)
    print(f"accuracy_grid: {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
