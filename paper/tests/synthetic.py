"""A small made-up results set in the results schema (docs/DESIGN.md §5) with every kind of missing point
(failed, not_supported, out_of_memory, error), to check that the paper never draws or prints one as
a number; each file with its sidecar, so that its commit can be made stale or current."""
import sys
from pathlib import Path

import sdtw_results

import sources

sys.path.append(str(Path(__file__).resolve().parents[2] / "pytorch/bench"))
from features_report import EXTRA_COLUMNS  # noqa: E402  (features.py's own columns)

GPU, DATE = "Synthetic GPU 1GB", "2030-01-02T03:04:05Z"
COMMIT = "abc1234" + "0" * 33  # a commit no repository has: the paper marks it STALE


def metadata(tool, commit, gpu=GPU):
    return {"tool": tool, "command": ["synthetic", tool], "commit": commit, "dirty": "false", "date": DATE,
            "host": "synthetic-host", "gpu": gpu, "gpu_count": 1, "driver": "1.0", "cuda": "0.0", "torch": "0.0",
            "seed": 0}


def write_file(path, tool, rows, commit, gpu=GPU, extras=()):
    """path (.csv) and its sidecar, written as the tools write them (sdtw_results.ResultsWriter): the common
    columns, then extras; rows as dicts (missing keys empty)."""
    with sdtw_results.ResultsWriter(path, tool, metadata(tool, commit, gpu), extras) as writer:
        for r in rows:
            writer.append(r)
    return path


# (grid, impl, B, N, D) -> (disposition, message): every point not listed here passes.
NOT_PASSED = {
    ("seed-grid", "maghoumi", 2, 32, 1): ("not_supported", "synthetic: too long for one block"),
    ("seed-grid", "ours_unfused", 2, 16, 1): ("failed", "synthetic: gradient off"),
    ("length", "maghoumi", 2, 64, 4): ("out_of_memory", ""),
    ("dimension", "ours_fused", 2, 16, 8): ("error", "synthetic: launch error"),
}
GRIDS = [("seed-grid", [(2, n, 1) for n in (16, 32)]), ("length", [(2, n, 4) for n in (16, 32, 64)]),
         ("dimension", [(2, 16, d) for d in (2, 4, 8)])]
IMPLS = ["ours_fused", "ours_unfused", "maghoumi"]
SUBSAMPLED_N = 64  # the sweep verifies 1 of 2 pairs at this length


def value(impl, n, d, what):
    """Distinct, easy-to-check numbers: they depend on the implementation and the point."""
    scale = {"ours_fused": 1.0, "ours_unfused": 2.0, "maghoumi": 3.0}[impl]
    factor = {"ms": 1, "abs": 100, "step": 40}[what]
    return round(scale * (n * 0.01 + d * 0.001) * factor, 4)


def sweep_rows():
    rows = []
    for grid, points in GRIDS:
        for impl in IMPLS:
            for b, n, d in points:
                disposition, message = NOT_PASSED.get((grid, impl, b, n, d), ("passed", ""))
                timed = disposition in ("passed", "failed")
                ms = value(impl, n, d, "ms") if timed else ""
                impl_name, mode = (("ours", impl.split("_")[1]) if impl.startswith("ours") else (impl, ""))
                rows.append({"grid": grid, "impl": impl_name, "api": "module", "mode": mode, "device": "cuda",
                             "dtype": "float32", "B": b, "N": n, "M": n, "D": d, "gamma": 1, "bandwidth": "none",
                             "normalize": "false", "disposition": disposition, "message": message,
                             "reps": 5 if timed else "", "warmup": 1, "time_ms_median": ms,
                             "time_ms_p10": ms and round(ms * 0.9, 4), "time_ms_p90": ms and round(ms * 1.2, 4),
                             "abs_peak_mb": value(impl, n, d, "abs") if timed else "",
                             "step_peak_mb": value(impl, n, d, "step") if timed else "",
                             "value_err": 1e-7 if timed else "", "grad_err": 1e-6 if timed else "",
                             "value_tol": 1e-5, "grad_tol": 1e-4,
                             "verified": "1/2 pairs (subsample)" if n == SUBSAMPLED_N else "2/2 pairs",
                             "seed": 1000 + n + d, "wall_s": 0.1, "gpu": 0})
    return rows


ACCURACY_SEEDS = (7, 8)  # seeds per cell of grad-accuracy.csv
WORST_SEED, WORST = 899408978, {"N": 2048, "gamma": 0.01, "own": 5.31e-06, "end": 3.24e-04, "cost": 3.19e-04}


def accuracy_rows():
    rows = []
    for impl in ("ours_fused", "maghoumi"):
        for n in (16, 32):
            for g in (1, 0.1):
                for seed in ACCURACY_SEEDS:
                    bad = impl == "maghoumi" and n == 32
                    err = "" if bad else float(f"{(3e-6 if impl == 'ours_fused' else 3e-2) * n / g * seed / 7:.3e}")
                    rows.append({"grid": "accuracy", "impl": impl, "device": "cuda", "dtype": "float32", "B": 2,
                                 "N": n, "M": n, "D": 4, "gamma": g, "disposition": "not_supported" if bad else "passed",
                                 "message": "synthetic: too long" if bad else "", "value_err": "" if bad else 1e-8,
                                 "grad_err": err, "grad_tol": 1e-4 if impl == "ours_fused" else 0.1, "seed": seed})
    return rows


def accuracy_grid_rows():
    rows = [{"grid": "kernels-grid", "impl": "ours_fused", "N": n, "M": n, "D": 8, "B": 1, "gamma": g, "seed": 5,
             "disposition": "passed", "value_err": 1e-9, "grad_err": 2e-6 * n / 64, "grad_err_end_to_end": 3e-6 * n / 64,
             "grad_err_cost_only": 1e-6 * n / 64, "grad_tol": 1e-4} for n in (64, 512) for g in (1, 0.01)]
    rows.append({"grid": "known-worst-input", "impl": "ours_fused", "N": WORST["N"], "M": WORST["N"], "D": 8, "B": 1,
                 "gamma": WORST["gamma"], "seed": WORST_SEED, "disposition": "passed", "value_err": 6e-9,
                 "grad_err": WORST["own"], "grad_err_end_to_end": WORST["end"], "grad_err_cost_only": WORST["cost"],
                 "grad_tol": 1e-4})
    return rows


def write(folder, commit=COMMIT):
    """paper.csv, grad-accuracy.csv and accuracy-grid.csv with their sidecars, and an empty published/
    folder; returns (sweep, accuracy, published, accuracy grid)."""
    sweep = write_file(folder / "paper.csv", "sweep", sweep_rows(), commit)
    accuracy = write_file(folder / "grad-accuracy.csv", "accuracy", accuracy_rows(), commit)
    grid = write_file(folder / "accuracy-grid.csv", "accuracy", accuracy_grid_rows(), commit,
                      extras=("grad_err_end_to_end", "grad_err_cost_only"))
    published = folder / "published"
    published.mkdir(exist_ok=True)
    return sweep, accuracy, published, grid


# baselines/originals output: (impl, N) -> (disposition, message); others pass. Names as a tool may
# write them: an implementation and its mode.
ORIGINALS_IMPLS = [("ours", "fused"), ("ours", "unfused"), ("sdtw-cuda-torch", "fused"), ("sdtw-cuda-torch", "unfused"),
                   ("pytorch-softdtw-cuda", ""), ("pysdtw", "")]
ORIGINALS_KEYS = [sources.implementation(i, m) for i, m in ORIGINALS_IMPLS]
ORIGINALS_NOT_PASSED = {
    ("pytorch_softdtw_cuda", 32): ("error", "CUDAError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: synthetic"),
    ("sdtw_cuda_torch_unfused", 32): ("error", "CUDAError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: synthetic"),
    ("pysdtw", 16): ("out_of_memory", "synthetic"),
}
# Rows that ran, but whose gradient error is over the tolerance (the file states none for the originals).
ORIGINALS_INACCURATE = {("pytorch_softdtw_cuda", 64): 3e-3}
ORIGINALS_POINTS = [(2, 16, 1), (2, 32, 1), (2, 64, 4)]


def originals_value(key, n, d, what):
    scale = {"ms": 1.0, "step": 10.0, "abs": 30.0}[what]
    return round(scale * (ORIGINALS_KEYS.index(key) + 1.5) * (n / 16 + d * 0.1), 4)


# baselines/originals' own columns (runner.py EXTRA_COLUMNS): the memory the process held after the step.
ORIGINALS_EXTRAS = ("resident_mb",)


def write_originals(folder, commit="def5678" + "0" * 33):
    rows = []
    for b, n, d in ORIGINALS_POINTS:
        for (impl, mode), key in zip(ORIGINALS_IMPLS, ORIGINALS_KEYS):
            disposition, message = ORIGINALS_NOT_PASSED.get((key, n), ("passed", ""))
            ok = disposition == "passed"
            ours = impl == "ours"
            row = dict(grid="synthetic", impl=impl, mode=mode, api="module", device="cuda", dtype="float32", B=b, N=n,
                       M=n, D=d, gamma=1, disposition=disposition, message=message, reps=20 if ok else "",
                       value_tol=1e-5 if ours else "", grad_tol=1e-4 if ours else "",
                       verified="1/2 pairs (subsample)" if n == SUBSAMPLED_N else "2/2 pairs")
            if ok:
                row.update(step_peak_mb=originals_value(key, n, d, "step"), abs_peak_mb=originals_value(key, n, d, "abs"),
                           resident_mb=originals_value(key, n, d, "abs") * 2,
                           time_ms_median=originals_value(key, n, d, "ms"), value_err=1e-6,
                           grad_err=ORIGINALS_INACCURATE.get((key, n), 1e-6))
            rows.append(row)
    return write_file(folder / "originals.csv", "originals", rows, commit, extras=ORIGINALS_EXTRAS)


# pytorch/bench/features.py output: (kind, impl, B, N, D) -> (disposition, message); others pass.
FEATURES_GPU, FEATURES_COMMIT = "Synthetic GPU 2GB", "fea7123" + "0" * 33
CDIST_POINTS = [(b, n, d) for b in (4, 8) for n in (16, 32, 64) for d in (1, 2)]
BARYCENTER_POINTS = [(5, n, d) for n in (20, 40, 80) for d in (1, 3)]
CDIST_TARGET, BARYCENTER_TARGET = (8, 32, 2), (5, 40, 1)
FEATURES_NOT_PASSED = {
    ("cdist", "ours", 4, 64, 1): ("error", "RuntimeError: synthetic cdist launch error"),
    ("cdist", "ours", 8, 16, 1): ("failed", "sampled value error 3e-05 > 1e-05"),
    ("barycenter", "ours", 5, 20, 3): ("error", "RuntimeError: synthetic barycenter error"),
    ("barycenter", "sdtw_cuda_torch_fused", 5, 40, 3): ("not_supported", "synthetic: needs CUDA (numba)"),
}
# Barycenter points whose fused baseline objective is off by this much (relative): over the 1e-3 limit,
# at the largest ratio, so a range that kept it would show it.
OBJECTIVE_APART = {(5, 80, 3): 4e-3}
# softdtw-cuda-torch's barycenter time per iteration over ours: fused (its default) and unfused.
BARYCENTER_SLOWER = {"sdtw_cuda_torch_fused": lambda n, d: 10 + n / 4 + d, "sdtw_cuda_torch_unfused": lambda n, d: 2 + d}
ITERATIONS = 200


def features_rows():
    rows = []
    for kind, points in (("cdist", CDIST_POINTS), ("barycenter", BARYCENTER_POINTS)):
        impls = [("ours", "")] + ([("sdtw-cuda-torch", "fused"), ("sdtw-cuda-torch", "unfused")]
                                  if kind == "barycenter" else [])
        for b, n, d in points:
            for impl, mode in impls:
                key = sources.implementation(impl, mode)
                disposition, message = FEATURES_NOT_PASSED.get((kind, key, b, n, d), ("passed", ""))
                ms = round(0.5 * b * n * (1 + 0.1 * d) / 16, 4) * (BARYCENTER_SLOWER[key](n, d) if mode else 1)
                row = dict(grid=kind, impl=impl, mode=mode, api="functional", device="cuda", dtype="float32", B=b,
                           N=n, M=n, D=d, gamma=1, disposition=disposition, message=message, reps=3,
                           method="cuda-events")
                if disposition in ("passed", "failed"):  # a failed verification did measure
                    row.update(time_ms_median=ms, time_ms_p10=ms * 0.9, time_ms_p90=ms * 1.1)
                if kind == "cdist":
                    row.update(B2=b, verified=f"{min(32, b * b)}/{b * b} pairs (subsample)", value_err=1e-7 * n,
                               value_tol=1e-5)
                    if (b, n, d) == CDIST_TARGET:
                        row.update(target="ms <= 5", target_met="yes" if ms <= 5 else "no")
                else:
                    objective = -10 - n * 0.01
                    if mode:
                        objective *= 1 + (OBJECTIVE_APART.get((b, n, d), 1e-4 * d) if mode == "fused" else 2e-4)
                    row.update(iterations=ITERATIONS, lr=0.1, objective=objective)
                    if (b, n, d) == BARYCENTER_TARGET and not mode:
                        row.update(target="ratio >= 20 and objective_rel_diff <= 0.001", target_met="yes")
                rows.append(row)
    return rows


# features.py's layout: one row per point, ours' columns, then softdtw-cuda-torch's barycenter in
# prefixed columns of the same row (its default fused mode as baseline_, its unfused as baseline_unfused_).
WIDE_PREFIX = {"fused": "baseline_", "unfused": "baseline_unfused_"}
WIDE_FIELDS = ("disposition", "message", "time_ms_median", "ms_per_iter", "objective")


def features_rows_wide():
    """features_rows (a row per implementation) folded into features.py's one row per point."""
    rows = {}
    for r in features_rows():
        baseline_mode = r["mode"]
        r = {k: v for k, v in r.items() if k != "method"} | {"grid": "default", "mode": r["grid"]}
        if "iterations" in r and "time_ms_median" in r:
            r["ms_per_iter"] = r["time_ms_median"] / r["iterations"]
        key = (r["mode"], r["B"], r["N"], r["D"])
        if r["impl"] == "ours":
            rows[key] = r | rows.get(key, {})
        else:
            rows.setdefault(key, {}).update({WIDE_PREFIX[baseline_mode] + f: r.get(f, "") for f in WIDE_FIELDS})
    return list(rows.values())


def write_features(folder, commit=FEATURES_COMMIT):
    """features.csv with features.py's own extra columns (features_report.EXTRA_COLUMNS)."""
    return write_file(folder / "features.csv", "features", features_rows_wide(), commit, gpu=FEATURES_GPU,
                      extras=EXTRA_COLUMNS)
