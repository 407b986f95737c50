#!/usr/bin/env python3
"""One sweep on one GPU and on every GPU of the machine: the wall time of each run of
`sdtw-bench --sweep CONFIG --gpus ...` (from start to the merged file, host clock, fresh output), and
whether the two result files hold the same points with the same dispositions. Writes one results
file (tool "sweep_gpus"), a row per run, through sdtw_results:

    PYTHONPATH=harness/python python3 harness/bench/sweep_gpus.py --bench build/harness/sdtw-bench \
        --config configs/paper.yaml --out results/h100x2
"""
import argparse
import subprocess
import time
from pathlib import Path

import sdtw_results

# What makes a point: the sweep's key columns (harness/src/core/point.cpp).
KEY = ("impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize")


def read_rows(path):
    rows, _ = sdtw_results.read_results(path)
    return {tuple(r[k] for k in KEY): r for r in rows}


def run_sweep(bench, config, gpus, out_dir):
    begin = time.perf_counter()
    done = subprocess.run([bench, "--sweep", config, "--gpus", gpus, "--out", str(out_dir), "--fresh", "--no-table"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - begin
    (out_dir / "sdtw-bench.log").write_text(done.stdout + done.stderr)
    return done.returncode, wall


def compare(one, every):
    """(same?, message): the points of both files and each point's disposition."""
    only_one, only_every = sorted(set(one) - set(every)), sorted(set(every) - set(one))
    if only_one or only_every:
        return False, f"{len(only_one)} points only on one GPU, {len(only_every)} only on all GPUs"
    differ = [k for k in one if one[k]["disposition"] != every[k]["disposition"]]
    if differ:
        k = differ[0]
        return False, (f"{len(differ)} points change disposition, e.g. {'|'.join(k)}: "
                       f"{one[k]['disposition']} -> {every[k]['disposition']}")
    return True, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="the sdtw-bench executable")
    parser.add_argument("--config", default="configs/paper.yaml")
    parser.add_argument("--out", required=True, help="folder of sweep_gpus.csv; the two sweeps go below it")
    args = parser.parse_args()
    if not Path(args.bench).is_file():
        parser.error(f"--bench: no such file {args.bench}")
    if not Path(args.config).is_file():
        parser.error(f"--config: no such file {args.config}")
    out = Path(args.out)
    name = Path(args.config).stem
    meta = sdtw_results.collect("sweep_gpus", seed=0, device="cuda", config=args.config)
    extras = ("gpus", "rows", "passed_rows", "same_points_and_dispositions")
    runs = {}
    with sdtw_results.ResultsWriter(out / "sweep_gpus.csv", "sweep_gpus", meta, extras) as writer:
        for gpus in ("0", "all"):
            folder = out / f"sweep-gpus-{gpus}"
            folder.mkdir(parents=True, exist_ok=True)
            code, wall = run_sweep(args.bench, args.config, gpus, folder)
            result = folder / f"{name}.csv"
            rows = read_rows(result) if result.exists() else {}
            runs[gpus] = rows
            errors = sum(r["disposition"] == "error" for r in rows.values())
            row = {"grid": name, "impl": "sdtw-bench", "mode": f"--gpus {gpus}", "device": "cuda",
                   "wall_s": round(wall, 2), "gpus": gpus, "rows": len(rows),
                   "passed_rows": sum(r["disposition"] == "passed" for r in rows.values()),
                   "disposition": "passed" if code == 0 and rows else "error",
                   "message": "" if code == 0 and rows else f"sdtw-bench exit {code}, {len(rows)} rows"}
            if row["disposition"] == "passed" and errors:
                # A sweep whose points end in errors measured nothing, however fast it ran.
                row.update(disposition="failed", message=f"{errors} of {len(rows)} points ended in error")
            if gpus == "all" and runs["0"] and rows:
                same, why = compare(runs["0"], rows)
                row["same_points_and_dispositions"] = "true" if same else "false"
                if not same:
                    row.update(disposition="failed", message=why)
            writer.append(row)
            print(f"--gpus {gpus}: {len(rows)} rows in {wall:.1f} s ({row['disposition']})", flush=True)


if __name__ == "__main__":
    main()
