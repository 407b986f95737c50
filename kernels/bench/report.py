#!/usr/bin/env python3
"""Turns sdtw_kernels_bench JSON (with --benchmark_repetitions) into results/<gpu>/kernels.md and,
with --csv, kernels.csv (a results file of sdtw_results' schema, api "kernel", and its sidecar):
per point the nearest-rank median, p10 and p90 over the repetitions, cells per second, workspace per
cell, cost-tensor DP over fused ratio, the floors of docs/DESIGN.md §4.7 (dependent chain, instruction issue, memory
traffic) with the one that binds, and the targets checked against the medians. BM_SecondOrder adds the fused
backward alone and the Hessian-vector product in cost space (alignment_backward), with the product's time
over the backward's and the bytes per cell of the product's step. The
benchmark's second mode (fused:0) is the "cost-tensor DP": the DP on a given cost tensor, with no chain rule
to x and y; it is not the paper's "unfused", which is the whole step through a cost tensor.

    PYTHONPATH=harness/python:pytorch/python kernels/bench/report.py BENCH.json --gpu "NVIDIA H100 80GB HBM3" \\
        --commit abc123 --date 2026-11-24 --csv results/h100/kernels.csv > results/h100/kernels.md
"""
import argparse
import json
import math
import re
import sys

import sdtw_results

# (B, N, D) of a fused float32 point -> (bound, unit): ms at most, or G cells/s at least.
TARGETS = {
    (1024, 1024, 64): (80.0, "Gcells/s"),
    (16, 8192, 16): (150.0, "Gcells/s"),
    (1, 65536, 8): (30.0, "ms"),
    (16, 128, 64): (0.05, "ms"),
    (32, 512, 64): (0.15, "ms"),
}
COST_TENSOR_DP_OVER_FUSED_MAX = 1.2
NAMED_COST_OVER_SQEUCLIDEAN_MAX = 1.2
HESSIAN_PRODUCT_OVER_BACKWARD_MAX = 3.0
HESSIAN_PRODUCT_POINT = (32, 512, 64)
# The modes as the CSV and kernels.md name them: BM_SoftDtw's fused:1 / fused:0, and BM_FusedCost's
# cost:k, the fused step of the kernels' Cost k (its order in soft_dtw.hpp), timed in the same run.
COSTS = ["sqeuclidean", "l1", "euclidean", "cosine", "negative_dot"]
# BM_SecondOrder's part:0 / part:1 are the fused backward alone and the Hessian-vector product.
SECOND_ORDER = ["backward", "hessian-product"]
MODES = ["fused", "cost-tensor-dp"] + [f"fused-{c}" for c in COSTS] + SECOND_ORDER
MODE_TEXT = {"fused": "fused", "cost-tensor-dp": "cost-tensor DP", **{f"fused-{c}": f"fused {c}" for c in COSTS},
             "backward": "fused backward alone", "hessian-product": "Hessian-vector product (cost space)"}

# The floor model (docs/DESIGN.md §4.7), H100 SXM at the clock it uses.
SMS, ISSUE_PER_CLK, FP32_LANES, CLOCK_HZ = 132, 4, 128, 1.6e9
HBM_BYTES_PER_S = 3.35e12
DP_WARP_INSTRUCTIONS = 150 + 75  # per warp step, forward + backward
STEP_NS = 30.0                   # one dependent warp step's arithmetic
LAG_STEPS = 32                   # hand-off between strips, at least one chunk
# HBM bytes per cell if nothing stays in L2: staging written and read, weights written, read and
# overwritten by the backward, read by the gradient (fused); the cost-tensor DP also reads the cost.
BYTES_PER_CELL = {1: 24, 0: 28}

EXTRA_COLUMNS = ["stddev_ms", "cells_per_s", "workspace_bytes_per_cell", "step_bytes_per_cell", "floor_chain_ms",
                 "floor_issue_ms", "floor_memory_ms", "binding_floor", "cost_tensor_dp_over_fused",
                 "cost_over_sqeuclidean", "product_over_backward", "target", "target_met"]
COLUMNS = sdtw_results.header(EXTRA_COLUMNS)
GAMMA = 1.0  # the benchmark's Problem (fused_vs_unfused_bench.cu)


def parse(name):
    """(B, N, D, mode) of a benchmark run's name."""
    fields = dict(re.findall(r"(B|N|D|fused|cost|part):(\d+)", name))
    if "part" in fields:
        mode = SECOND_ORDER[int(fields["part"])]
    elif "cost" in fields:
        mode = f"fused-{COSTS[int(fields['cost'])]}"
    else:
        mode = MODES[1 - int(fields["fused"])]
    return tuple(int(fields[k]) for k in ("B", "N", "D")) + (mode,)


def floors_ms(b, n, d, fused):
    """chain, issue and memory floors in ms for N = M (docs/DESIGN.md §4.7)."""
    cells = b * n * n
    chain_steps = 2 * ((math.ceil(n / 32) - 1) * LAG_STEPS + n + 31)
    chain = chain_steps * STEP_NS * 1e-6
    issue = cells * DP_WARP_INSTRUCTIONS / 32 / (SMS * ISSUE_PER_CLK * CLOCK_HZ) * 1e3
    if fused:  # the cost's 2 D lane operations per cell on the SIMT lanes
        issue += cells * 2 * d / (SMS * FP32_LANES * CLOCK_HZ) * 1e3
    memory = cells * BYTES_PER_CELL[fused] / HBM_BYTES_PER_S * 1e3
    return {"chain": chain, "issue": issue, "memory": memory}


def target_of(key, median_ms, cells_per_s, over_fused, over_sqeuclidean, over_backward=None):
    """(text, met) of the point's target, or ('', '') when it has none."""
    b, n, d, mode = key
    if over_backward and (b, n, d) == HESSIAN_PRODUCT_POINT:
        return (f"{over_backward:.2f}x the backward (<= {HESSIAN_PRODUCT_OVER_BACKWARD_MAX:g}x)",
                over_backward <= HESSIAN_PRODUCT_OVER_BACKWARD_MAX)
    if over_sqeuclidean:
        return (f"{over_sqeuclidean:.2f}x sqeuclidean (<= {NAMED_COST_OVER_SQEUCLIDEAN_MAX:g}x)",
                over_sqeuclidean <= NAMED_COST_OVER_SQEUCLIDEAN_MAX)
    if mode == "fused" and (b, n, d) in TARGETS:
        bound, unit = TARGETS[(b, n, d)]
        if unit == "ms":
            return f"<= {bound:g} ms", median_ms <= bound
        return f">= {bound:g} G cells/s", cells_per_s / 1e9 >= bound
    if over_fused:
        return (f"{over_fused:.2f}x fused (<= {COST_TENSOR_DP_OVER_FUSED_MAX:g}x)",
                over_fused <= COST_TENSOR_DP_OVER_FUSED_MAX)
    return "", ""


def repetition_times(bench):
    """point key -> the real_time (ms) of each repetition, from the JSON's per-repetition runs."""
    times = {}
    for r in bench["benchmarks"]:
        if r.get("run_type") == "iteration":
            times.setdefault(parse(r["run_name"]), []).append(r["real_time"])
    return times


def median_of(times, key):
    """The nearest-rank median of a point's repetitions, or None when the run has no such point."""
    return sdtw_results.nearest_rank(times[key], 0.5) if key in times else None


def rows_of(bench):
    points = {}
    for r in bench["benchmarks"]:
        if r.get("run_type") == "aggregate":
            points.setdefault(parse(r["run_name"]), {})[r["aggregate_name"]] = r
    times = repetition_times(bench)
    rows = []
    for key in sorted(points, key=lambda k: (k[1], k[0], k[2], MODES.index(k[3]))):
        b, n, d, mode = key
        fused = mode != "cost-tensor-dp"
        whole_step = mode not in SECOND_ORDER  # the floors are a whole step's
        p = points[key]
        if key not in times:
            raise ValueError(f"{p['median']['run_name']}: no per-repetition runs in the JSON (run the benchmark "
                             "without --benchmark_report_aggregates_only): p10 and p90 need them")
        spread = sdtw_results.spread(times[key])
        median = spread["time_ms_median"]
        cells_per_s = p["median"].get("cells_per_s", float("nan"))
        floors = floors_ms(b, n, d, fused) if whole_step else {}
        fused_ms, sq_ms, backward_ms = (median_of(times, (b, n, d, m)) for m in ("fused", "fused-sqeuclidean", "backward"))
        ratio = median / fused_ms if mode == "cost-tensor-dp" and fused_ms else None
        over_sq = median / sq_ms if mode.startswith("fused-") and mode != "fused-sqeuclidean" and sq_ms else None
        over_backward = median / backward_ms if mode == "hessian-product" and backward_ms else None
        target, met = target_of(key, median, cells_per_s, ratio, over_sq, over_backward)
        rows.append({
            "grid": "kernels", "impl": "ours", "api": "kernel", "mode": mode,
            "device": "cuda", "dtype": "float32", "B": b, "N": n, "M": n, "D": d, "gamma": GAMMA,
            "bandwidth": "none", "normalize": False, "disposition": "passed", **spread, "verified": "off",
            "gpu": "0", "stddev_ms": p.get("stddev", {}).get("real_time", float("nan")), "cells_per_s": cells_per_s,
            "workspace_bytes_per_cell": p["median"].get("workspace_B_per_cell", float("nan")),
            "step_bytes_per_cell": p["median"].get("step_B_per_cell", ""),
            **{f"floor_{k}_ms": floors.get(k, "") for k in ("chain", "issue", "memory")},
            "binding_floor": max(floors, key=floors.get) if floors else "",
            "cost_tensor_dp_over_fused": "" if ratio is None else ratio,
            "cost_over_sqeuclidean": "" if over_sq is None else over_sq,
            "product_over_backward": "" if over_backward is None else over_backward, "target": target,
            "target_met": "" if met == "" else ("yes" if met else "no"),
        })
    return rows, next(r["repetitions"] for r in bench["benchmarks"] if r.get("run_type") == "aggregate")


def markdown(rows, reps, gpu, commit, date):
    out = [
        "# Kernel micro-benchmark: forward + backward, float32\n",
        f"GPU: {gpu}; commit: {commit}; date: {date}.",
        f"Measured with `sdtw_kernels_bench --benchmark_repetitions={reps}` (CUDA events around forward + "
        "backward, min 0.5 s per repetition; nearest-rank median and p10-p90 over the repetitions; stddev "
        "beside them). The cost-tensor DP is the DP on a given cost tensor, with no chain rule to x and y (the "
        "paper's \"unfused\" is the whole step through a cost tensor). \"fused <cost>\" is the fused step of that "
        "named cost (BM_FusedCost), its target at most "
        f"{NAMED_COST_OVER_SQEUCLIDEAN_MAX:g}x the fused sqeuclidean step timed the same way in the same run. "
        "\"fused backward alone\" times the backward only (its forward runs before each step, untimed); the "
        "Hessian-vector product is alignment_backward, the kernel a double backward runs, on the same pairs' "
        "float32 cost tensor and a float64 direction (forming the direction and chaining the result to x and y, "
        "torch operations, are not in it), its target at most "
        f"{HESSIAN_PRODUCT_OVER_BACKWARD_MAX:g}x the backward alone at B{HESSIAN_PRODUCT_POINT[0]} "
        f"N{HESSIAN_PRODUCT_POINT[1]} D{HESSIAN_PRODUCT_POINT[2]}; its step B/cell counts its workspace, the cost "
        "tensor, the direction and the result. Floors apply to whole steps only.\n",
        f"Floors (docs/DESIGN.md §4.7): chain = 2 x ((N/32 - 1) x {LAG_STEPS} + M + 31) dependent steps of "
        f"{STEP_NS:g} ns; issue = {DP_WARP_INSTRUCTIONS}/32 warp instructions per cell (+ the fused cost's 2 D "
        f"lane operations) at {SMS} SMs x {ISSUE_PER_CLK}/clk x {CLOCK_HZ / 1e9:g} GHz; memory = "
        f"{BYTES_PER_CELL[1]} (fused) or {BYTES_PER_CELL[0]} (cost-tensor DP) HBM bytes per cell at "
        f"{HBM_BYTES_PER_S / 1e12:g} TB/s, if nothing stays in L2. The binding floor is the largest.\n",
        "| B | N = M | D | mode | median ms (p10-p90) | stddev ms | cells/s | workspace B/cell | step B/cell | chain ms "
        "| issue ms | memory ms | binds | x floor | target | met |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def number(value, digits=3):
        return "" if value == "" else f"{value:.{digits}f}"

    for r in rows:
        floor = r["floor_" + r["binding_floor"] + "_ms"] if r["binding_floor"] else ""
        out.append(
            f"| {r['B']} | {r['N']} | {r['D']} | {MODE_TEXT[r['mode']]} | {r['time_ms_median']:.3f} "
            f"({r['time_ms_p10']:.3f}-{r['time_ms_p90']:.3f}) | {r['stddev_ms']:.3f} | "
            f"{r['cells_per_s'] / 1e9:.2f} G | {r['workspace_bytes_per_cell']:.3f} | {number(r['step_bytes_per_cell'])} | "
            f"{number(r['floor_chain_ms'])} | {number(r['floor_issue_ms'])} | {number(r['floor_memory_ms'])} | "
            f"{r['binding_floor']} | {number('' if floor == '' else r['time_ms_median'] / floor, 1)} | "
            f"{r['target']} | {r['target_met']} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_json")
    ap.add_argument("--gpu", required=True)
    sdtw_results.add_run_arguments(ap, "kernels.csv")
    args = ap.parse_args()
    with open(args.bench_json) as f:
        rows, reps = rows_of(json.load(f))
    sdtw_results.write_benchmark_results(args, "kernels", args.gpu, rows, EXTRA_COLUMNS, bench_json=args.bench_json,
                                         repetitions=reps)
    sys.stdout.write(markdown(rows, reps, args.gpu, args.commit, args.date))


if __name__ == "__main__":
    main()
