#!/usr/bin/env python3
"""Turns sdtw_kernels_ladder's output (one JSON line for the device, then one per rung with its
repetition times) into ladder.md on stdout and, with --csv, ladder.csv (a results file of
sdtw_results' schema, tool "ladder", api "kernel", and its sidecar): per rung the nearest-rank
median, p10 and p90 of its times, its cells per second, and the factor it loses against the rung it
adds one piece to (that rung's cells per second over its own); the rung that loses most is named.
The rungs are described in docs/DESIGN.md §4.8.

    PYTHONPATH=harness/python kernels/bench/ladder_report.py LADDER.jsonl --commit abc123 --date 2026-11-26 \\
        --csv results/h100/ladder.csv > results/h100/ladder.md
"""
import argparse
import json
import sys

import sdtw_results

EXTRA_COLUMNS = ["rung", "rung_label", "previous_rung", "lengths", "cells", "cells_per_s", "loss_vs_previous"]
COLUMNS = sdtw_results.header(EXTRA_COLUMNS)
GAMMA = 1.0          # every rung's gamma (the ladder's kernels)
SYNTHETIC = ("0", "a", "a'", "b", "c")  # rungs whose kernels are the ladder's own, not the production kernels


def read_lines(text):
    """(device, rungs) from the benchmark's output: the first JSON line describes the device."""
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not lines or "device" not in lines[0]:
        raise ValueError("the ladder's output starts with a device line ({\"device\": ...}); none found")
    for r in lines[1:]:
        if len(r.get("times_ms", [])) < 5:
            raise ValueError(f"rung {r.get('rung')!r} at B{r.get('B')} N{r.get('N')} D{r.get('D')}: "
                             f"{len(r.get('times_ms', []))} timed repetitions, the ladder needs at least 5")
    return lines[0], lines[1:]


def point_text(r):
    if r["rung"] in SYNTHETIC:
        return f"{r['B']} threads x {r['N']} x {r['M']}, D {r['D']}"
    text = f"B{r['B']} N{r['N']} D{r['D']}"
    if r["mode"] == "cdist":
        text += " (every pair of two sets)"
    if r["bandwidth"] >= 0:
        text += f", band {r['bandwidth']}"
    return text + (", lengths" if r["lengths"] else "")


def previous_of(r, rows):
    """The row r adds one piece to, or None: the ceiling's forward for rung a, the same D for the
    other synthetic rungs and for rung d, the same point for the production rungs after d."""
    prev = r["previous"]
    if not prev:
        return None
    for q in rows:
        if q["rung"] != prev:
            continue
        if prev == "0":
            if q["mode"] == "forward":
                return q
        elif prev in SYNTHETIC:
            if q["D"] == r["D"]:
                return q
        elif (q["B"], q["N"], q["M"], q["D"]) == (r["B"], r["N"], r["M"], r["D"]):
            return q
    return None


def rows_of(rungs):
    rows = []
    for r in rungs:
        spread = sdtw_results.spread(r["times_ms"])
        rows.append(dict(r, spread=spread, cells_per_s=r["cells"] / (spread["time_ms_median"] * 1e-3)))
    for r in rows:
        q = previous_of(r, rows)
        r["previous_row"] = q
        r["loss"] = q["cells_per_s"] / r["cells_per_s"] if q else None
    return rows


def csv_row(r):
    return {
        "grid": "ladder", "impl": "synthetic" if r["rung"] in SYNTHETIC else "ours", "api": "kernel",
        "mode": r["mode"], "device": "cuda", "dtype": "float32", "B": r["B"], "N": r["N"], "M": r["M"], "D": r["D"],
        "gamma": GAMMA, "bandwidth": r["bandwidth"] if r["bandwidth"] >= 0 else "none", "normalize": False,
        "disposition": "passed", **r["spread"], "warmup": r["warmup"], "verified": "off", "gpu": "0",
        "rung": r["rung"], "rung_label": r["label"], "previous_rung": r["previous"], "lengths": r["lengths"],
        "cells": r["cells"], "cells_per_s": r["cells_per_s"], "loss_vs_previous": r["loss"],
    }


def loses_most(rows):
    """The row with the largest loss against its previous rung, or None."""
    lossy = [r for r in rows if r["loss"] is not None]
    return max(lossy, key=lambda r: r["loss"]) if lossy else None


def path_from_ceiling(r):
    """The rows from the first rung to r, each adding one piece to the one before it."""
    path = []
    while r is not None:
        path.append(r)
        r = r["previous_row"]
    return path[::-1]


def step_of(point_rows):
    """The row of a point that the path from the ceiling ends at: the full step (rung f) where it was
    measured, else the point's last rung but the band's (g, a variant of f)."""
    steps = [r for r in point_rows if r["rung"] == "f"] or [r for r in point_rows if r["rung"] != "g"]
    return steps[-1] if steps else None


def g_cells(r, t_ms):
    return r["cells"] / (t_ms * 1e-3) / 1e9


def point_name(r):
    return f"B{r['B']} N{r['N']} D{r['D']}{' (cdist)' if r['mode'] == 'cdist' else ''}"


def markdown(device, rows, commit, date):
    out = [
        "# The kernels' ladder: from the ceiling to the full step, float32\n",
        f"GPU: {device['device']} ({device['sms']} SMs); commit: {commit}; date: {date}; "
        f"{'quick run; ' if device.get('quick') else ''}{device['warmup']} warm-up and {device['reps']} timed "
        "repetitions per rung (CUDA events around one launch or one step; nearest-rank median and p10-p90).",
        "Each rung adds one piece to the rung named in `after` (docs/DESIGN.md §4.8); `x lost` is that rung's "
        "cells per second over this one's. Cells are B x N x M, band and lengths included.\n",
        "| rung | adds | point | G cells/s median (p10-p90) | ms median | after | x lost |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r["spread"]
        loss = "" if r["loss"] is None else f"{r['loss']:.2f}"
        out.append(f"| {r['rung']} ({r['mode']}) | {r['label']} | {point_text(r)} | {r['cells_per_s'] / 1e9:.1f} "
                   f"({g_cells(r, s['time_ms_p90']):.1f}-{g_cells(r, s['time_ms_p10']):.1f}) | "
                   f"{s['time_ms_median']:.3f} | {r['previous']} | {loss} |")
    worst = loses_most(rows)
    out.append("")
    if worst:
        prev = worst["previous_row"]
        out.append(f"**Loses most: rung {worst['rung']} ({worst['label']}) at {point_text(worst)}, "
                   f"{worst['loss']:.2f}x against rung {prev['rung']} at {point_text(prev)}.**")
    else:
        out.append("No rung has a previous rung measured in this run.")
    points = {}
    for r in rows:
        if r["rung"] not in SYNTHETIC and r["loss"] is not None:
            points.setdefault((r["B"], r["N"], r["D"], r["mode"] == "cdist"), []).append(r)
    if points:
        out.append("\nAt each point of the production kernels, the rung that loses most:\n")
        for point_rows in points.values():
            r = loses_most(point_rows)
            out.append(f"- {point_name(r)}: rung {r['rung']} ({r['label']}), {r['loss']:.2f}x")
        paths = [path_from_ceiling(step_of(point_rows)) for point_rows in points.values()]
        paths = [p for p in paths if p[0]["rung"] == "0"]
        if paths:
            out.append("\nFrom the ceiling to each point's step, every rung on the way (its loss; their product is "
                       "the ceiling's cells per second over the step's), and the largest:\n")
        for path in paths:
            steps = " -> ".join(f"{r['rung']} {r['loss']:.2f}" for r in path[1:])
            worst = loses_most(path[1:])
            out.append(f"- {point_name(path[-1])}: 0 -> {steps} = {path[0]['cells_per_s'] / path[-1]['cells_per_s']:.1f}x "
                       f"below the ceiling; most: rung {worst['rung']} ({worst['label']}), {worst['loss']:.2f}x")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ladder_jsonl", help="sdtw_kernels_ladder's standard output")
    ap.add_argument("--gpu", help="the GPU's name (default: the benchmark's device line)")
    sdtw_results.add_run_arguments(ap, "ladder.csv")
    args = ap.parse_args(argv)
    with open(args.ladder_jsonl) as f:
        device, rungs = read_lines(f.read())
    if args.gpu:
        device["device"] = args.gpu
    rows = rows_of(rungs)
    sdtw_results.write_benchmark_results(args, "ladder", device["device"], [csv_row(r) for r in rows], EXTRA_COLUMNS,
                                         ladder_output=args.ladder_jsonl, sms=device["sms"],
                                         clock_khz=device["clock_khz"], quick=device.get("quick", False))
    sys.stdout.write(markdown(device, rows, args.commit, args.date))


if __name__ == "__main__":
    main()
