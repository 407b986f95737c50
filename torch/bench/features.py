"""The sweeps of the tslearn-style features: cdist_soft_dtw (pairs/s, values only, verified on a
sample of pairs) and softdtw_barycenter (time per iteration and objective, against softdtw-cuda-torch's
softdtw_barycenter on the same data and settings where it can run), with the issue's targets.

    python3 torch/bench/features.py --out results/h100 --peers .carry/peers   # the folder holding sdtw-cuda-torch/
    python3 torch/bench/features.py --out /tmp/f --device cpu --quick         # a tiny grid, ours only

writes <out>/features.csv (a row per point, written as soon as it is measured) and <out>/features.md.
"""
import argparse
import csv
import datetime
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

import sdtw_torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.append(str(HERE.parents[1]))  # baselines/, after everything else: the root's folders shadow nothing
from baselines.originals.metadata import commit_label  # noqa: E402
from features_report import COLUMNS, OBJECTIVE_REL_MAX, RATIO_MIN, WARMUP_ITERATIONS, markdown  # noqa: E402
from step import fmt, quantile  # noqa: E402
from step import timed as event_times  # noqa: E402

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
    """run's last result and the median, p10 and p90 (ms) of reps timed calls, after one untimed call of
    warmup (lazy kernel loads, allocator growth, the first optimiser step): no point pays for the
    process's first call."""
    warmup()
    last = [None]

    def call():
        last[0] = run()
    times = call_times(call, reps, device)
    return last[0], statistics.median(times), quantile(times, 0.1), quantile(times, 0.9)


def failure(e):
    """(disposition, error text) of an exception: a failed point is a row, never a lost sweep."""
    if isinstance(e, torch.cuda.OutOfMemoryError):
        return "out_of_memory", str(e).splitlines()[0][:200]
    return "error", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"


def series(shape, device, seed):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.randn(*shape, device=device, generator=g)


def sampled_error(K, X, Y, seed):
    """Largest |error| over largest |value| (as sdtw-bench's value_err) of SAMPLE_PAIRS random entries
    of K against soft_dtw of those pairs in float64 on the CPU."""
    g = torch.Generator().manual_seed(seed)
    count = min(SAMPLE_PAIRS, K.numel())
    flat = torch.randperm(K.numel(), generator=g)[:count]
    i, j = flat // K.shape[1], flat % K.shape[1]
    ref = sdtw_torch.soft_dtw(X.cpu()[i].double(), Y.cpu()[j].double(), gamma=GAMMA)
    got = K.cpu()[i, j].double()
    return ((got - ref).abs().max() / ref.abs().max()).item(), f"{count}/{K.numel()} pairs"


def cdist_point(b, n, d, args):
    row = dict(kind="cdist", B1=b, B2=b, N=n, D=d, value_tol=VALUE_TOL, disposition="passed")
    try:
        X, Y = series((b, n, d), args.device, 0), series((b, n, d), args.device, 1)
        with torch.no_grad():
            run = lambda: sdtw_torch.cdist_soft_dtw(X, Y, gamma=GAMMA)  # noqa: E731
            K, ms, p10, p90 = measure(run, run, args.reps, args.device)
            value_err, verified = sampled_error(K, X, Y, seed=2)
        row.update(ms=ms, p10_ms=p10, p90_ms=p90, pairs_per_s=b * b / (ms / 1e3), value_err=value_err,
                   verified=verified)
        if not value_err <= VALUE_TOL:
            row.update(disposition="failed", error=f"sampled value error {value_err:.3g} > {VALUE_TOL:g}")
    except Exception as e:
        row["disposition"], row["error"] = failure(e)
    if (b, n, d) in CDIST_TARGET_MS:
        limit = CDIST_TARGET_MS[(b, n, d)]
        row["target"] = f"ms <= {limit:g}"
        measured = row.get("ms") if row["disposition"] == "passed" else None  # wrong values meet nothing
        row["target_met"] = verdict(measured, lambda ms: ms <= limit)
    return row


def verdict(value, test):
    return "unknown" if value is None else ("yes" if test(value) else "no")


def objective(Z, S):
    """Mean soft-DTW of Z to the series S, float64 on the CPU: both barycenters judged by one function."""
    S = S.cpu().double()
    return sdtw_torch.soft_dtw(Z.cpu().double().expand(S.shape[0], -1, -1), S, gamma=GAMMA).mean().item()


def baseline_barycenter(peers, device):
    """softdtw-cuda-torch's softdtw_barycenter, or None and why it cannot run here."""
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
    """One implementation's columns at one point: its data is made anew from one seed, so both
    implementations get the same series (random walks, so a barycenter has a shape to find)."""
    S = series((b, n, d), args.device, 3).cumsum(1) * 0.1
    kw = dict(gamma=GAMMA, lr=LR, early_stopping=False)
    Z, ms, p10, p90 = measure(lambda: fn(S, max_iter=args.iterations, **kw),
                              lambda: fn(S, max_iter=WARMUP_ITERATIONS, **kw), args.reps, args.device)
    return dict(ms=ms, p10_ms=p10, p90_ms=p90, ms_per_iter=ms / args.iterations, objective=objective(Z, S),
                disposition="passed")


def barycenter_point(b, n, d, args, baseline, why_not):
    row = dict(kind="barycenter", B=b, N=n, D=d, iterations=args.iterations, lr=LR)
    for prefix, fn in (("", sdtw_torch.softdtw_barycenter), ("baseline_", baseline)):
        try:
            done = barycenter_run(fn, b, n, d, args) if fn else dict(disposition="not_supported", error=why_not)
        except Exception as e:
            done = dict(zip(("disposition", "error"), failure(e)))
        row.update({prefix + k: v for k, v in done.items()})
    if row["disposition"] == row["baseline_disposition"] == "passed":
        base = row["baseline_objective"]
        row["objective_rel_diff"] = abs(row["objective"] - base) / abs(base)
        if row["objective_rel_diff"] <= OBJECTIVE_REL_MAX:  # otherwise the two did not solve the same problem
            row["ratio"] = row["baseline_ms_per_iter"] / row["ms_per_iter"]
    if (b, n, d) in BARYCENTER_TARGET and args.iterations == ITERATIONS:
        row["target"] = f"ratio >= {RATIO_MIN:g} and objective_rel_diff <= {OBJECTIVE_REL_MAX:g}"
        row["target_met"] = verdict(row.get("objective_rel_diff"),
                                    lambda diff: diff <= OBJECTIVE_REL_MAX and row["ratio"] >= RATIO_MIN)
    return row


def metadata(device, reps):
    return {"gpu": torch.cuda.get_device_name() if device == "cuda" else "cpu", "commit": commit_label(),
            "date": datetime.date.today().isoformat(), "gamma": GAMMA, "reps": reps,
            "method": "cuda-events" if device == "cuda" else "wall-clock"}


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
    meta = metadata(args.device, args.reps)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    with open(args.out / "features.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        points = [(cdist_point, p, ()) for p in (QUICK_CDIST if args.quick else CDIST_GRID)]
        points += [(barycenter_point, p, (baseline, why_not)) for p in (QUICK_BARYCENTER if args.quick else
                                                                        BARYCENTER_GRID)]
        for point, (b, n, d), extra in points:
            row = dict(meta, **point(b, n, d, args, *extra))
            writer.writerow({k: fmt(row.get(k)) for k in COLUMNS})
            f.flush()
            rows.append(row)
            (args.out / "features.md").write_text(markdown(rows))
            if args.device == "cuda":
                torch.cuda.empty_cache()  # what a point cached (or an OOM left) is not the next point's
            print(" ".join(f"{k}={fmt(row.get(k))}" for k in COLUMNS[3:] if row.get(k) not in (None, "")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
