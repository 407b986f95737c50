#!/usr/bin/env python3
"""Turns sdtw_kernels_checkpoint_bench JSON into results/<gpu>/checkpoint.md and, with --csv,
checkpoint.csv (the results schema, api "kernel", mode "full" or "checkpoint"): per point the time of
a fused float32 forward + backward (the mean of the bench's iterations, CUDA events), cells per
second, time per cell, the device bytes the step holds, and the checkpointed mode's targets:
N = M = 2^20 completes within 16 GB, B = 16 at 2^16 completes, and at N = M = 2^17 the time per cell
of a checkpointed run at most 2x the full state's in the same run. Every point's gradient is
checked by the bench: finite, translation-invariant (sum_i grad_x_i + sum_j grad_y_j = 0 to
TRANSLATION_MAX relative to sum |grad|), and where the full state ran at the same size, within
VS_FULL_MAX relative L2 of its gradient; a point whose check fails has its target unmet.

    PYTHONPATH=harness/python kernels/bench/checkpoint_report.py BENCH.json --gpu "NVIDIA H100 80GB HBM3" \\
        --commit abc123 --date 2026-11-26 --csv results/h100/checkpoint.csv > results/h100/checkpoint.md
"""
import argparse
import json
import re
import sys

import sdtw_results

PEAK_GB_MAX = 16.0
RATIO_MAX = 2.0
RATIO_N = 1 << 17
PEAK_POINT = (1, 1 << 20)
BATCH_POINT = (16, 1 << 16)
TRANSLATION_MAX = 1e-5
VS_FULL_MAX = 1e-6
GAMMA = 1.0  # the benchmark's Problem (checkpoint_bench.cu)
EXTRA_COLUMNS = ["band_rows", "steps", "cells_per_s", "ns_per_cell", "step_GB", "over_full", "grad_finite",
                 "translation_residual", "grad_x_vs_full", "grad_y_vs_full", "gradient_checked", "target", "target_met"]


def parse(name):
    """(B, N, D, band_rows) of a BM_Checkpoint run's name."""
    fields = dict(re.findall(r"(B|N|D|band_rows):(\d+)", name))
    return tuple(int(fields[k]) for k in ("B", "N", "D", "band_rows"))


def target_of(key, step_gb, over_full):
    """(text, met) of the point's target, or ('', '') when it has none."""
    b, n, _, band_rows = key
    if band_rows and (b, n) == PEAK_POINT:
        return f"completes, <= {PEAK_GB_MAX:g} GB", step_gb <= PEAK_GB_MAX
    if band_rows and (b, n) == BATCH_POINT:
        return "completes", True
    if band_rows and n == RATIO_N and over_full is not None:
        return f"{over_full:.2f}x full per cell (<= {RATIO_MAX:g}x)", over_full <= RATIO_MAX
    return "", ""


def gradient_passes(r):
    """Whether the run's gradient passed the bench's checks (a vs-full distance of -1: no full run)."""
    vs_full = [r[k] for k in ("grad_x_vs_full", "grad_y_vs_full") if r[k] >= 0]
    return r["grad_finite"] == 1 and r["translation_residual"] <= TRANSLATION_MAX and all(v <= VS_FULL_MAX for v in vs_full)


def rows_of(bench):
    runs = {parse(r["run_name"]): r for r in bench["benchmarks"] if r.get("run_type", "iteration") == "iteration"}
    rows = []
    for key in sorted(runs, key=lambda k: (k[1], k[0], k[3])):
        b, n, d, band_rows = key
        r = runs[key]
        if r.get("error_occurred"):
            raise ValueError(f"{r['run_name']}: {r.get('error_message', 'failed')}")
        full = runs.get((b, n, d, 0))
        over_full = r["ns_per_cell"] / full["ns_per_cell"] if band_rows and full else None
        target, met = target_of(key, r["step_GB"], over_full)
        checked = gradient_passes(r)
        if met != "":
            met = met and checked
        rows.append({
            "grid": "checkpoint", "impl": "ours", "api": "kernel", "mode": "checkpoint" if band_rows else "full",
            "device": "cuda", "dtype": "float32", "B": b, "N": n, "M": n, "D": d, "gamma": GAMMA,
            "bandwidth": "none", "normalize": False, "disposition": "passed",
            **sdtw_results.spread([r["real_time"]]), "verified": "off", "gpu": "0",
            "band_rows": band_rows, "steps": r["iterations"], "cells_per_s": r["cells_per_s"], "ns_per_cell": r["ns_per_cell"],
            "step_GB": r["step_GB"], "over_full": "" if over_full is None else over_full,
            "grad_finite": int(r["grad_finite"]), "translation_residual": r["translation_residual"],
            **{k: (r[k] if r[k] >= 0 else "") for k in ("grad_x_vs_full", "grad_y_vs_full")},
            "gradient_checked": "passed" if checked else "failed", "target": target,
            "target_met": "" if met == "" else ("yes" if met else "no"),
        })
    return rows, sorted({r["iterations"] for r in runs.values()})


def distance(value):
    return "" if value == "" else f"{value:.1e}"


def markdown(rows, steps, gpu, commit, date):
    out = [
        "# Checkpointed forward + backward against the full state, fused float32\n",
        f"GPU: {gpu}; commit: {commit}; date: {date}.",
        "Measured with `sdtw_kernels_checkpoint_bench` (CUDA events around forward + backward, the mean of "
        "each point's steps after one warm-up, none at 2^40 cells). Step GB: the device memory the step's buffers take (inputs, "
        "gradients, values and the kernels' workspace; the kernels allocate nothing else), from cudaMemGetInfo "
        "before and after they are allocated. Band rows 0 is the full state. Gradient: all finite, "
        f"translation residual |sum grad_x + sum grad_y| / sum |grad| at most {TRANSLATION_MAX:g}, and where the full "
        f"state ran at the same size, grad_x and grad_y within {VS_FULL_MAX:g} relative L2 of its gradient.\n",
        "| B | N = M | D | band rows | steps | ms | G cells/s | ns per cell | step GB | over full | translation residual "
        "| grad_x vs full | grad_y vs full | gradient | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        over = f"{r['over_full']:.2f}x" if r["over_full"] != "" else ""
        out.append(f"| {r['B']} | {r['N']} | {r['D']} | {r['band_rows']} | {r['steps']} | {r['time_ms_median']:.1f} | "
                   f"{r['cells_per_s'] / 1e9:.2f} | {r['ns_per_cell']:.4f} | {r['step_GB']:.2f} | {over} | "
                   f"{r['translation_residual']:.1e} | {distance(r['grad_x_vs_full'])} | {distance(r['grad_y_vs_full'])} | "
                   f"{r['gradient_checked']} | {r['target']} | {r['target_met']} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("--gpu", required=True)
    sdtw_results.add_run_arguments(ap, "checkpoint.csv")
    args = ap.parse_args()
    with open(args.bench_json) as f:
        rows, steps = rows_of(json.load(f))
    sdtw_results.write_benchmark_results(args, "checkpoint", args.gpu, rows, EXTRA_COLUMNS,
                                         bench_json=args.bench_json, steps=steps)
    sys.stdout.write(markdown(rows, steps, args.gpu, args.commit, args.date))


if __name__ == "__main__":
    main()
