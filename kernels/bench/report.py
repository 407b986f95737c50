#!/usr/bin/env python3
"""Turns sdtw_kernels_bench JSON (with --benchmark_repetitions) into the Markdown table of
results/<gpu>/kernels.md: median and spread per point, cells per second, workspace per cell,
fused/unfused ratio, and the issue's speed targets checked against the measured medians.

    report.py BENCH.json --gpu "NVIDIA H100 80GB HBM3" --commit abc123 --date 2026-11-22 > kernels.md
"""
import argparse
import json
import re
import sys

TARGETS = {  # (B, N, D, fused) -> ms bound, from the kernels issue
    (32, 512, 64, 1): 1.0,
    (32, 2048, 64, 1): 10.0,
    (1, 65536, 8, 1): 1000.0,
}


def parse(name):
    fields = dict(re.findall(r"(B|N|D|fused):(\d+)", name))
    return tuple(int(fields[k]) for k in ("B", "N", "D", "fused"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_json")
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--date", required=True)
    args = ap.parse_args()
    runs = json.load(open(args.bench_json))["benchmarks"]
    points = {}
    for r in runs:
        if r.get("run_type") != "aggregate":
            continue
        key = parse(r["run_name"])
        p = points.setdefault(key, {})
        p[r["aggregate_name"]] = r
    out = sys.stdout
    out.write(f"# Kernel micro-benchmark: forward + backward, float32\n\n")
    out.write(f"GPU: {args.gpu}; commit: {args.commit}; date: {args.date}.\n")
    reps = next(r["repetitions"] for r in runs if r.get("run_type") == "aggregate")
    out.write(f"Measured with `sdtw_kernels_bench --benchmark_repetitions={reps}` (CUDA events "
              "around forward + backward, min 0.5 s per repetition; median over repetitions, spread = stddev).\n\n")
    out.write("| B | N = M | D | mode | median ms | stddev ms | cells/s | workspace B/cell | fused / unfused | target |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for key in sorted(points, key=lambda k: (k[1], k[0], k[2], -k[3])):
        b, n, d, fused = key
        p = points[key]
        med = p["median"]["real_time"]
        std = p.get("stddev", {}).get("real_time", float("nan"))
        cells = p["median"].get("cells_per_s", float("nan"))
        ws = p["median"].get("workspace_B_per_cell", float("nan"))
        other = points.get((b, n, d, 1 - fused))
        ratio = ""
        if fused and other:
            ratio = f"{med / other['median']['real_time']:.2f}"
        target = ""
        if key in TARGETS:
            bound = TARGETS[key]
            target = f"< {bound:g} ms: {'met' if med < bound else 'NOT met'}"
        if fused and other and not target:
            target = f"fused <= 1.5x unfused: {'met' if med <= 1.5 * other['median']['real_time'] else 'NOT met'}"
        out.write(f"| {b} | {n} | {d} | {'fused' if fused else 'unfused'} | {med:.3f} | {std:.3f} | "
                  f"{cells / 1e9:.2f} G | {ws:.3f} | {ratio} | {target} |\n")


if __name__ == "__main__":
    main()
