"""The sweeps of the tslearn-style features: cdist_soft_dtw (pairs/s, values only, verified on a
sample of pairs) and softdtw_barycenter (time per iteration and objective, against softdtw-cuda-torch's
softdtw_barycenter in both of its modes, its default fused one and its unfused one, on the same data and
settings where it can run), with the issue's targets.

    export PYTHONPATH=harness/python:pytorch/python
    python3 pytorch/bench/features.py --out results/h100 --peers .carry/peers   # the folder holding sdtw-cuda-torch/
    python3 pytorch/bench/features.py --out /tmp/f --device cpu --quick         # a tiny grid, ours only

writes <out>/features.csv (a results file of sdtw_results' schema, a row per point appended as soon as
it is measured; mode cdist or barycenter; the baseline's barycenter in the baseline_* (fused, its default) and
baseline_unfused_* columns of the same row), its sidecar features.json and features.md.
"""
import argparse
import functools
import sys
import time
from pathlib import Path

import numpy as np
import torch

import sdtw_results
import sdtw_torch
from features_report import (BASELINE_MODES, EXTRA_COLUMNS, OBJECTIVE_REL_MAX, RATIO_MIN, RATIO_PREFIX,
                             WARMUP_ITERATIONS, markdown)
from step import fmt
from step import timed as event_times

if not hasattr(np, "row_stack"):  # numba of the GPU machine calls it; numpy 2.5 removed it
    np.row_stack = np.vstack

GAMMA, LR = 1.0, 0.1
CDIST_GRID = [(b, n, d) for b in (256, 1024) for n in (64, 128, 256) for d in (1, 8)]
BARYCENTER_GRID = [(20, n, d) for n in (100, 200, 400) for d in (1, 8)]
QUICK_CDIST, QUICK_BARYCENTER = [(8, 16, 1), (8, 16, 3)], [(4, 12, 1), (4, 12, 2)]
CDIST_TARGET_MS = {(1024, 128, 8): 150.0}
BARYCENTER_TARGET = {(20, 200, 1), (20, 200, 8)}
ITERATIONS, QUICK_ITERATIONS = 200, 10
SAMPLE_PAIRS, VALUE_TOL = 32, 1e-5
BASE_SEED = 0


def call_times(fn, reps, device):
    """ms of each of reps calls: step.py's CUDA events on a GPU, the wall clock on the CPU."""
    if device == "cuda":
        return event_times(fn, reps)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def measure(run, warmup, reps, device):
    """run's last result and the time columns (nearest-rank median, p10, p90 in ms) of reps timed calls,
    after one untimed call of warmup (lazy kernel loads, allocator growth, the first optimiser step): no
    point pays for the process's first call."""
    warmup()
    last = [None]

    def call():
        last[0] = run()
    times = call_times(call, reps, device)
    return last[0], {k: v for k, v in sdtw_results.spread(times).items() if k != "reps"}


def failure(e):
    """(disposition, error text) of an exception: a failed point is a row, never a lost sweep."""
    if isinstance(e, torch.cuda.OutOfMemoryError):
        return "out_of_memory", str(e).splitlines()[0][:200]
    return "error", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"


def inputs(b, n, d, device):
    """The point's seed and its x and y (B, N, D) in the one seed scheme (sdtw_results)."""
    seed = sdtw_results.point_seed(BASE_SEED, b, n, n, d)
    return seed, sdtw_results.make_inputs(seed, b, n, n, d, device=device)


def common(mode, b, n, d, args, seed):
    """The common columns of a point (time, verification and disposition filled in as it runs)."""
    return dict(grid="quick" if args.quick else "default", impl="ours", api="functional", mode=mode,
                device=args.device, dtype="float32", B=b, N=n, M=n, D=d, gamma=GAMMA, bandwidth="none",
                normalize=False, disposition="passed", reps=args.reps, warmup=1, seed=seed,
                gpu=str(torch.cuda.current_device()) if args.device == "cuda" else "")


def sampled_error(K, X, Y, seed):
    """Largest |error| over largest |value| (as sdtw-bench's value_err) of SAMPLE_PAIRS random entries
    of K against soft_dtw of those pairs in float64 on the CPU, and the `verified` text."""
    g = torch.Generator().manual_seed(seed)
    count = min(SAMPLE_PAIRS, K.numel())
    flat = torch.randperm(K.numel(), generator=g)[:count]
    i, j = flat // K.shape[1], flat % K.shape[1]
    ref = sdtw_torch.soft_dtw(X.cpu()[i].double(), Y.cpu()[j].double(), gamma=GAMMA)
    got = K.cpu()[i, j].double()
    subsample = " (subsample)" if count < K.numel() else ""
    return ((got - ref).abs().max() / ref.abs().max()).item(), f"{count}/{K.numel()} pairs{subsample}"


def cdist_point(b, n, d, args):
    start = time.monotonic()
    seed, (X, Y) = inputs(b, n, d, args.device)
    row = dict(common("cdist", b, n, d, args, seed), B2=b, value_tol=VALUE_TOL)
    try:
        with torch.no_grad():
            run = lambda: sdtw_torch.cdist_soft_dtw(X, Y, gamma=GAMMA)  # noqa: E731
            K, times = measure(run, run, args.reps, args.device)
            value_err, verified = sampled_error(K, X, Y, seed=2)
        row.update(times, pairs_per_s=b * b / (times["time_ms_median"] / 1e3), value_err=value_err,
                   verified=verified)
        disposition, message = sdtw_results.verify.judge(value_err, None, VALUE_TOL, None)
        row.update(disposition=disposition, message=message and "sampled " + message)
    except Exception as e:
        row["disposition"], row["message"] = failure(e)
    if (b, n, d) in CDIST_TARGET_MS:
        limit = CDIST_TARGET_MS[(b, n, d)]
        row["target"] = f"ms <= {limit:g}"
        measured = row.get("time_ms_median") if row["disposition"] == "passed" else None  # wrong values meet nothing
        row["target_met"] = verdict(measured, lambda ms: ms <= limit)
    row["wall_s"] = time.monotonic() - start
    return row


def verdict(value, test):
    return "unknown" if value is None else ("yes" if test(value) else "no")


def objective(Z, S):
    """Mean soft-DTW of Z to the series S, float64 on the CPU: both barycenters judged by one function."""
    S = S.cpu().double()
    return sdtw_torch.soft_dtw(Z.cpu().double().expand(S.shape[0], -1, -1), S, gamma=GAMMA).mean().item()


def baseline_barycenter(peers, device):
    """softdtw-cuda-torch's softdtw_barycenter (its fused keyword picks the mode), or None and why it
    cannot run here."""
    if device != "cuda":
        return None, "needs CUDA (numba)"
    if not peers:
        return None, "no --peers folder"
    sys.path.insert(0, str(Path(peers) / "sdtw-cuda-torch"))
    try:
        import softdtw_cuda
    except Exception as e:
        return None, f"cannot import softdtw_cuda: {type(e).__name__}: {e}"
    return softdtw_cuda.softdtw_barycenter, ""


def barycenter_run(fn, b, n, d, args):
    """One implementation's columns at one point: its series are made anew from the point's seed, so
    both implementations get the same ones (random walks of x, so a barycenter has a shape to find)."""
    S = inputs(b, n, d, args.device)[1][0].cumsum(1) * 0.1
    kw = dict(gamma=GAMMA, lr=LR, early_stopping=False)
    Z, times = measure(lambda: fn(S, max_iter=args.iterations, **kw),
                       lambda: fn(S, max_iter=WARMUP_ITERATIONS, **kw), args.reps, args.device)
    return dict(times, ms_per_iter=times["time_ms_median"] / args.iterations, objective=objective(Z, S),
                disposition="passed")


def barycenter_point(b, n, d, args, baseline, why_not):
    start = time.monotonic()
    row = dict(common("barycenter", b, n, d, args, inputs(b, n, d, "cpu")[0]), verified="off",
               iterations=args.iterations, lr=LR)
    for prefix, fn in (("", sdtw_torch.softdtw_barycenter),
                       *((p, baseline and functools.partial(baseline, fused=f)) for p, f in BASELINE_MODES)):
        try:
            done = barycenter_run(fn, b, n, d, args) if fn else dict(disposition="not_supported", message=why_not)
        except Exception as e:
            done = dict(zip(("disposition", "message"), failure(e)))
        row.update({prefix + k: v for k, v in done.items()})
    for prefix, _ in BASELINE_MODES:
        if row["disposition"] == row[prefix + "disposition"] == "passed":
            base = row[prefix + "objective"]
            diff = row[RATIO_PREFIX[prefix] + "objective_rel_diff"] = abs(row["objective"] - base) / abs(base)
            if diff <= OBJECTIVE_REL_MAX:  # otherwise the two did not solve the same problem
                row[RATIO_PREFIX[prefix] + "ratio"] = row[prefix + "ms_per_iter"] / row["ms_per_iter"]
    if (b, n, d) in BARYCENTER_TARGET and args.iterations == ITERATIONS:
        row["target"] = f"ratio >= {RATIO_MIN:g} and objective_rel_diff <= {OBJECTIVE_REL_MAX:g}"
        row["target_met"] = verdict(row.get("objective_rel_diff"),
                                    lambda diff: diff <= OBJECTIVE_REL_MAX and row["ratio"] >= RATIO_MIN)
    row["wall_s"] = time.monotonic() - start
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="folder for features.csv and features.md")
    parser.add_argument("--peers", help="folder with sdtw-cuda-torch/ (softdtw-cuda-torch's sources); "
                                        "without it the baseline is not measured")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="a tiny grid and 10 iterations (a test on the CPU)")
    parser.add_argument("--reps", type=int, default=3, help="timed calls per point and implementation")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch.cuda.is_available() is False")
    args.iterations = QUICK_ITERATIONS if args.quick else ITERATIONS
    baseline, why_not = baseline_barycenter(args.peers, args.device)
    meta = sdtw_results.collect("features", BASE_SEED, args.device, gamma=GAMMA, reps=args.reps,
                                timer="cuda-events" if args.device == "cuda" else "wall-clock")
    rows = []
    points = [(cdist_point, p, ()) for p in (QUICK_CDIST if args.quick else CDIST_GRID)]
    points += [(barycenter_point, p, (baseline, why_not)) for p in (QUICK_BARYCENTER if args.quick else
                                                                    BARYCENTER_GRID)]
    with sdtw_results.ResultsWriter(args.out / "features.csv", "features", meta, EXTRA_COLUMNS) as writer:
        for point, (b, n, d), extra in points:
            row = point(b, n, d, args, *extra)
            writer.append(row)
            rows.append(row)
            (args.out / "features.md").write_text(markdown(rows, meta))
            if args.device == "cuda":
                torch.cuda.empty_cache()  # what a point cached (or an OOM left) is not the next point's
            print(" ".join(f"{k}={fmt(v)}" for k, v in row.items() if v not in (None, "")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
