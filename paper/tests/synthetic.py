"""A small made-up results set with every kind of missing point (failed, not_supported,
out_of_memory, error), to check that the paper never draws or prints one as a number."""
import csv
import json

COLUMNS = ["point", "sweep", "grid", "impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize",
           "disposition", "time_ms_median", "time_ms_min", "time_ms_max", "reps", "peak_mb", "value_err", "grad_err",
           "value_tol", "grad_tol", "verified", "wall_s", "message"]
GPU, COMMIT, DATE = "Synthetic GPU 1GB", "abc1234", "2030-01-02T03:04:05Z"
# (grid, impl, B, N, D, disposition, message): every point not listed here passes.
NOT_PASSED = {
    ("seed-grid", "maghoumi", 2, 32, 1): ("not_supported", "synthetic: too long for one block"),
    ("seed-grid", "ours_unfused", 2, 16, 1): ("failed", "synthetic: gradient off"),
    ("length", "maghoumi", 2, 64, 4): ("out_of_memory", ""),
    ("dimension", "ours_fused", 2, 16, 8): ("error", "synthetic: launch error"),
}
GRIDS = [("seed-grid", [(2, n, 1) for n in (16, 32)]), ("length", [(2, n, 4) for n in (16, 32, 64)]),
         ("dimension", [(2, 16, d) for d in (2, 4, 8)])]
IMPLS = ["ours_fused", "ours_unfused", "maghoumi"]


def value(impl, n, d, what):
    """Distinct, easy-to-check numbers: they depend on the implementation and the point."""
    scale = {"ours_fused": 1.0, "ours_unfused": 2.0, "maghoumi": 3.0}[impl]
    return round(scale * (n * 0.01 + d * 0.001) * (1 if what == "ms" else 100), 4)


def sweep_rows():
    rows = []
    for grid, points in GRIDS:
        for impl in IMPLS:
            for b, n, d in points:
                disposition, message = NOT_PASSED.get((grid, impl, b, n, d), ("passed", ""))
                timed = disposition in ("passed", "failed")
                ms, mb = (value(impl, n, d, "ms"), value(impl, n, d, "mb")) if timed else ("", "")
                rows.append({"point": len(rows), "sweep": "synthetic", "grid": grid, "impl": impl, "device": "cuda",
                             "dtype": "float32", "B": b, "N": n, "M": n, "D": d, "gamma": 1, "bandwidth": "none",
                             "normalize": "false", "disposition": disposition, "time_ms_median": ms,
                             "time_ms_min": ms, "time_ms_max": ms, "reps": 5 if timed else 0, "peak_mb": mb,
                             "value_err": 1e-7 if timed else "", "grad_err": 1e-6 if timed else "",
                             "value_tol": 1e-5, "grad_tol": 1e-4, "verified": "2/2", "wall_s": 0.1,
                             "message": message})
    return rows


def write(folder):
    """Writes sweep.csv + sweep.json, accuracy.csv and an empty published/ folder; returns their paths."""
    sweep = folder / "sweep.csv"
    with open(sweep, "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(sweep_rows())
    meta = {"gpu": GPU, "git_commit": COMMIT, "date": DATE, "driver": "1.0", "torch": "0.0", "sweep": "synthetic"}
    sweep.with_suffix(".json").write_text(json.dumps({"columns": COLUMNS, "metadata": meta, "rows": []}))
    accuracy = folder / "accuracy.csv"
    lines = ["impl,device,dtype,B,N,D,gamma,value_err,grad_err,status,seed"]
    for impl in ("ours_fused", "maghoumi"):
        for n in (16, 32):
            for g in (1, 0.1):
                bad = impl == "maghoumi" and n == 32
                err = "" if bad else f"{(3e-6 if impl == 'ours_fused' else 3e-2) * n / g:.3e}"
                lines.append(f"{impl},cuda,float32,2,{n},4,{g},{'' if bad else '1e-8'},{err},"
                             f"{'not_supported' if bad else 'ok'},1")
    accuracy.write_text("\n".join(lines) + "\n")
    published = folder / "published"
    published.mkdir()
    return sweep, accuracy, published


# baselines/originals output (originals.csv): (impl, N) -> (disposition, message); others pass.
ORIGINALS_IMPLS = ["ours_fused", "ours_unfused", "sdtw_cuda_torch_fused", "sdtw_cuda_torch_unfused",
                   "pytorch_softdtw_cuda", "pysdtw"]
ORIGINALS_NOT_PASSED = {
    ("pytorch_softdtw_cuda", 32): ("error", "CUDAError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: synthetic"),
    ("sdtw_cuda_torch_unfused", 32): ("error", "CUDAError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: synthetic"),
    ("pysdtw", 16): ("out_of_memory", "synthetic"),
}
ORIGINALS_POINTS = [(2, 16, 1), (2, 32, 1), (2, 64, 4)]


def originals_value(impl, n, d, what):
    scale = {"ms": 1.0, "step_mb": 10.0, "peak_mb": 30.0}[what]
    return round(scale * (ORIGINALS_IMPLS.index(impl) + 1.5) * (n / 16 + d * 0.1), 4)


def write_originals(folder, columns, method):
    """originals.csv + .json in baselines/originals' format (columns: its runner's COLUMNS)."""
    path = folder / "originals.csv"
    rows = []
    for b, n, d in ORIGINALS_POINTS:
        for impl in ORIGINALS_IMPLS:
            disposition, message = ORIGINALS_NOT_PASSED.get((impl, n), ("passed", ""))
            ok = disposition == "passed"
            row = {c: "" for c in columns}
            row.update(method=method, grid="synthetic", impl=impl, device="cuda", dtype="float32", B=b, N=n, M=n,
                       D=d, gamma=1, disposition=disposition, message=message, reps=20 if ok else "")
            if ok:
                row.update({w: originals_value(impl, n, d, w) for w in ("step_mb", "peak_mb")},
                           time_ms_median=originals_value(impl, n, d, "ms"), value_err=1e-6, grad_err=1e-3)
            rows.append(row)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows(rows)
    meta = {"gpu": GPU, "git_commit": "def5678", "date": DATE, "driver": "1.0", "torch": "0.0", "method": method}
    path.with_suffix(".json").write_text(json.dumps({"metadata": meta, "columns": columns, "rows": rows}))
    return path


# torch/bench/features.py output (features.csv): (kind, B, N, D) -> (prefix, disposition, error); others pass.
FEATURES_GPU, FEATURES_COMMIT = "Synthetic GPU 2GB", "fea7123"
CDIST_POINTS = [(b, n, d) for b in (4, 8) for n in (16, 32, 64) for d in (1, 2)]
BARYCENTER_POINTS = [(5, n, d) for n in (20, 40, 80) for d in (1, 3)]
CDIST_TARGET, BARYCENTER_TARGET = (8, 32, 2), (5, 40, 1)
FEATURES_NOT_PASSED = {
    ("cdist", 4, 64, 1): ("", "error", "RuntimeError: synthetic cdist launch error"),
    ("cdist", 8, 16, 1): ("", "failed", "sampled value error 3e-05 > 1e-05"),
    ("barycenter", 5, 20, 3): ("", "error", "RuntimeError: synthetic barycenter error"),
    ("barycenter", 5, 40, 3): ("baseline_", "not_supported", "synthetic: needs CUDA (numba)"),
}
# Barycenter points whose baseline objective is off by this much (relative): over the 1e-3 limit, at the
# largest ratio, so a range that kept it would show it.
OBJECTIVE_APART = {(5, 80, 3): 4e-3}


def features_rows():
    rows = []
    for kind, points in (("cdist", CDIST_POINTS), ("barycenter", BARYCENTER_POINTS)):
        for b, n, d in points:
            prefix, disposition, error = FEATURES_NOT_PASSED.get((kind, b, n, d), ("", "passed", ""))
            row = dict(gpu=FEATURES_GPU, commit=FEATURES_COMMIT, date="2030-02-03", kind=kind, method="cuda-events",
                       reps=3, N=n, D=d, gamma=1, disposition="passed", baseline_disposition="")
            ms = round(0.5 * b * n * (1 + 0.1 * d) / 16, 4)
            if kind == "cdist":
                row.update(B1=b, B2=b, ms=ms, p10_ms=ms * 0.9, p90_ms=ms * 1.1, pairs_per_s=b * b / (ms / 1e3),
                           verified=f"{min(32, b * b)}/{b * b} pairs", value_err=1e-7 * n, value_tol=1e-5)
                if (b, n, d) == CDIST_TARGET:
                    row.update(target="ms <= 5", target_met="yes" if ms <= 5 else "no")
            else:
                ratio = 10 + n / 4 + d
                row.update(B=b, iterations=200, lr=0.1, ms=ms, p10_ms=ms, p90_ms=ms, ms_per_iter=ms / 200,
                           objective=-10 - n * 0.01, baseline_disposition="passed", baseline_ms=ms * ratio,
                           baseline_ms_per_iter=ms * ratio / 200,
                           baseline_objective=(-10 - n * 0.01) * (1 + OBJECTIVE_APART.get((b, n, d), 1e-4 * d)))
                if (b, n, d) == BARYCENTER_TARGET:
                    row.update(target="ratio >= 20 and objective_rel_diff <= 0.001")
            row.update({prefix + "disposition": disposition, prefix + "error": error})
            if disposition not in ("passed", "failed"):  # a failed verification did measure
                for field in ("ms", "pairs_per_s", "ms_per_iter", "objective", "value_err"):
                    row.pop(prefix + field, None)
            if row.get("baseline_disposition") == row["disposition"] == "passed":
                row["ratio"] = row["baseline_ms_per_iter"] / row["ms_per_iter"]
                base = row["baseline_objective"]
                row["objective_rel_diff"] = abs(row["objective"] - base) / abs(base)
                if row.get("target"):
                    row["target_met"] = "yes" if row["ratio"] >= 20 and row["objective_rel_diff"] <= 1e-3 else "no"
            rows.append(row)
    return rows


def write_features(folder, columns):
    """features.csv in torch/bench/features.py's format (columns: its features_report.COLUMNS)."""
    path = folder / "features.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows({c: row.get(c, "") for c in columns} for row in features_rows())
    return path
