"""Loads result files (docs/DESIGN.md §5, read by column name) into one tidy table of points: one row per
implementation and (B, N, D), with the GPU it ran on, the method that measured it, the file it comes
from, absolute peak and step MB, ms, whether it counts (ok) and, when not, why. A ratio is only taken
between two points of one method."""
import math
import re
import sys
from pathlib import Path

import pandas as pd

from sources import implementation, read

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "pytorch/bench"))
from features_report import method_text  # noqa: E402  (features.md's words, one source)
from features_report import OBJECTIVE_REL_MAX, met_word  # noqa: E402,F401  (features.py's limit and verdicts)
PUBLISHED_GPU = "GPU not stated"
POINT_COLUMNS = ["impl", "source", "method", "gpu", "file", "B", "N", "D", "ms", "peak_mb", "step_mb", "ok", "reason"]
# How each source was measured (a ratio never mixes two of them).
SWEEP_METHOD = "sdtw-bench"
PEERS_METHOD = "python-one-process-mean5"
PUBLISHED_METHOD = "published"
ORIGINALS_METHOD = "python-step-fresh-process"
METHODS = {
    SWEEP_METHOD: "sdtw-bench sweep (C++ timing loop, median of the timed steps; absolute peak and step memory "
                  "over the timed steps)",
    PEERS_METHOD: "original codes re-run in one Python process for all points (mean of 5 steps; absolute peak "
                  "including what earlier points left)",
    PUBLISHED_METHOD: "as the seed paper published it (GPU not stated)",
    ORIGINALS_METHOD: "baselines/originals: the user's Python step, each implementation in a fresh "
                      "process per grid (median of the timed steps, their number in each row's reps; absolute peak and step "
                      "memory)",
}
# "unfused" means one thing in the paper: the whole step (forward and backward) through a cost tensor.
UNFUSED_MEANS = ("\"unfused\" is the whole training step computed through an explicit B x N x M cost tensor "
                 "(the chain rule to x and y included); the kernels' DP on a given cost tensor, without that chain "
                 "rule, is called \"cost-tensor DP\".")
ORIGINALS_PREFIX = "step:"  # impl names of originals.csv: its ours_fused is another measurement than the sweep's
# The implementations of baselines/originals (originals.csv), as sources.implementation names them.
ORIGINALS = ["ours_fused", "ours_unfused", "sdtw_cuda_torch_fused", "sdtw_cuda_torch_unfused", "pytorch_softdtw_cuda",
             "pysdtw"]
# The tolerance the originals are judged against where their file states none: the one ours meets.
ORIGINALS_VALUE_TOL, ORIGINALS_GRAD_TOL = 1e-5, 1e-4

# Display names; the seed paper's own implementation is softdtw-cuda-torch, never "ours".
LABELS = {
    "ours_fused": "ours, fused",
    "ours_unfused": "ours, unfused",
    "maghoumi": "Maghoumi scheme, our reimpl.",
    "ours_cpu@cpu": "ours, CPU",
    "maghoumi@cpu": "Maghoumi scheme, our reimpl., CPU",
    "peer:maghoumi": "pytorch-softdtw-cuda (Maghoumi)",
    "peer:bgu_unfused": "softdtw-cuda-torch, unfused",
    "peer:bgu_fused": "softdtw-cuda-torch, fused",
    "step:ours_fused": "ours, fused",
    "step:ours_unfused": "ours, unfused",
    "step:sdtw_cuda_torch_fused": "softdtw-cuda-torch, fused",
    "step:sdtw_cuda_torch_unfused": "softdtw-cuda-torch, unfused",
    "step:pytorch_softdtw_cuda": "pytorch-softdtw-cuda (Maghoumi)",
    "step:pysdtw": "pysdtw",
    "bary:ours": "ours, softdtw_barycenter",
    "bary:softdtw-cuda-torch": "softdtw-cuda-torch (fused), softdtw_barycenter",
    "bary:softdtw-cuda-torch-unfused": "softdtw-cuda-torch (unfused), softdtw_barycenter",
}
DISPOSITION_WORDS = {"failed": "failed verification", "not_supported": "not supported",
                     "out_of_memory": "out of memory", "error": "error"}


def label(impl):
    if impl.startswith(ORIGINALS_PREFIX):
        return LABELS.get(impl, impl[len(ORIGINALS_PREFIX):]) + " (Python step)"
    if impl.startswith("pub:"):
        return LABELS.get("peer:" + impl[4:], impl[4:]) + ", published"
    if impl in LABELS:
        return LABELS[impl]
    base, _, device = impl.partition("@")
    name = LABELS.get(base, base)
    return f"{name} ({device})" if device else name


def _require(df, columns, path):
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}")


def judge(rows, value_tol=None, grad_tol=None):
    """Rows that passed but exceed their tolerance (the row's value_tol / grad_tol, else the ones given)
    become failed, with the error and the tolerance as the message: "passed" never means only "ran"."""
    rows = rows.copy()
    for err, tol, default in (("value_err", "value_tol", value_tol), ("grad_err", "grad_tol", grad_tol)):
        limit = rows[tol].fillna(default if default is not None else math.inf)
        over = (rows["disposition"] == "passed") & (rows[err] > limit)
        rows.loc[over, "disposition"] = "failed"
        rows.loc[over, "message"] = [f"{err} {e:.3g} > {t:g}" for e, t in zip(rows.loc[over, err], limit[over])]
    return rows


def load_sweep(csv_path, repo=ROOT):
    """An sdtw-bench sweep, judged, one row per distinct point (grids may repeat a point); and its Source."""
    df, source = read(csv_path, repo)
    df = judge(df)
    df["impl"] = [implementation(i, m) for i, m in zip(df["impl"], df["mode"])]
    df = df.drop_duplicates(subset=["impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize"])
    return df.reset_index(drop=True), source


def sweep_setting(df):
    """The most common (dtype, gamma, bandwidth, normalize) with N == M: the figures compare like with like."""
    square = df[df["N"] == df["M"]]
    keys = ["dtype", "gamma", "bandwidth", "normalize"]
    counts = square.groupby(keys, dropna=False).size().sort_values(ascending=False)
    setting = dict(zip(keys, counts.index[0]))
    mask = (df["N"] == df["M"])
    for k, v in setting.items():
        mask &= df[k].isna() if isinstance(v, float) and math.isnan(v) else (df[k] == v)
    return setting, df[mask]


def _reason(disposition, message):
    word = DISPOSITION_WORDS[disposition]
    return f"{word} ({message})" if message else word


def sweep_points(df, source):
    rows = []
    for r in df.itertuples():
        ok = r.disposition == "passed"
        impl = r.impl if r.device == "cuda" else f"{r.impl}@{r.device}"
        rows.append({"impl": impl, "source": "ours" if r.impl.startswith("ours") else "reproduced",
                     "method": SWEEP_METHOD, "gpu": source.gpu if r.device == "cuda" else "CPU", "file": source.name,
                     "B": r.B, "N": r.N, "D": r.D, "ms": r.time_ms_median, "peak_mb": r.abs_peak_mb,
                     "step_mb": r.step_peak_mb, "ok": ok, "reason": "" if ok else _reason(r.disposition, r.message)})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def peer_points(paths, gpu):
    """The original peers re-measured (impl,B,N,D,peak_mb,ms,note); nan with a note is a failed run."""
    frames = [pd.read_csv(p).assign(file=Path(p).name) for p in paths]
    df = pd.concat(frames).drop_duplicates(subset=["impl", "B", "N", "D"])
    _require(df, ["impl", "B", "N", "D", "peak_mb", "ms", "note"], paths)
    rows = []
    for r in df.itertuples():
        ok = not (pd.isna(r.peak_mb) or pd.isna(r.ms))
        note = "" if pd.isna(r.note) else str(r.note)
        reason = "" if ok else "error (" + (_short_error(note) or "no value") + ")"
        rows.append({"impl": "peer:" + r.impl, "source": "reproduced", "method": PEERS_METHOD, "gpu": gpu,
                     "file": r.file, "B": r.B, "N": r.N, "D": r.D, "ms": r.ms, "peak_mb": r.peak_mb,
                     "step_mb": math.nan, "ok": ok, "reason": reason})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def _short_error(note):
    match = re.search(r"CUDA_ERROR_[A-Z_]+", note)
    return match.group(0) if match else note


def published_points(path):
    """The seed paper's table, wide (maghoumi_mb, ours_unfused_mb, ...) to tidy; its "ours" is softdtw-cuda-torch."""
    df = pd.read_csv(path)
    names = {"maghoumi": "pub:maghoumi", "ours_unfused": "pub:bgu_unfused", "ours_fused": "pub:bgu_fused"}
    _require(df, ["B", "N", "D"] + [f"{k}_{u}" for k in names for u in ("mb", "ms")], path)
    rows = []
    for r in df.to_dict("records"):
        for key, impl in names.items():
            mb, ms = r[f"{key}_mb"], r[f"{key}_ms"]
            ok = not (pd.isna(mb) or pd.isna(ms))
            rows.append({"impl": impl, "source": "published", "method": PUBLISHED_METHOD, "gpu": PUBLISHED_GPU,
                         "file": Path(path).name, "B": r["B"], "N": r["N"], "D": r["D"], "ms": ms, "peak_mb": mb,
                         "step_mb": math.nan, "ok": ok,
                         "reason": "" if ok else "not reported (NaN in the published table)"})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def originals_points(csv_path, repo=ROOT):
    """baselines/originals output: every implementation (ours included) measured one way, its rows judged
    against their tolerance (ORIGINALS_*_TOL where the file states none); impl names get the "step:"
    prefix. Non-square rows are left out. Returns (points, judged rows, Source)."""
    df, source = read(csv_path, repo)
    df["impl"] = [implementation(i, m) for i, m in zip(df["impl"], df["mode"])]
    df = judge(df, ORIGINALS_VALUE_TOL, ORIGINALS_GRAD_TOL)
    method = df["method"].fillna(ORIGINALS_METHOD) if "method" in df.columns else ORIGINALS_METHOD
    df["method"] = method
    rows = []
    for r in df[df["N"] == df["M"]].itertuples():
        ok = r.disposition == "passed"
        rows.append({"impl": ORIGINALS_PREFIX + r.impl, "source": "ours" if r.impl.startswith("ours") else "original",
                     "method": r.method, "gpu": source.gpu if r.device == "cuda" else "CPU", "file": source.name,
                     "B": r.B, "N": r.N, "D": r.D, "ms": r.time_ms_median, "peak_mb": r.abs_peak_mb,
                     "step_mb": r.step_peak_mb, "ok": ok,
                     "reason": "" if ok else _reason(r.disposition, _short_error(r.message))})
    return pd.DataFrame(rows, columns=POINT_COLUMNS), df, source


FEATURE_KINDS = ("cdist", "barycenter", "kmeans")
# softdtw-cuda-torch's barycenter in its default (fused) and its unfused mode: the prefix of each in the
# paper's wide table, and the prefix of its columns in ours' row of features.csv (features.py's layout:
# features_report.BASELINE_MODES).
FEATURE_COLUMNS = {"baseline_": "baseline_", "unfused_": "baseline_unfused_"}
BASELINES = tuple(FEATURE_COLUMNS)


def _extra(row, column):
    value = row.get(column)
    return None if value is None or (isinstance(value, float) and math.isnan(value)) or value == "" else value


def _measured(r, src=""):
    """One implementation's measurement in a features row: its own columns (src "") or a baseline's."""
    iterations = _extra(r, "iterations")
    ms = _extra(r, src + "time_ms_median")
    per_iter = _extra(r, src + "ms_per_iter")
    if per_iter is None and ms is not None:
        per_iter = ms / iterations if iterations else ms
    return {"disposition": str(r[src + "disposition"]), "message": str(_extra(r, src + "message") or ""), "ms": ms,
            "ms_per_iter": per_iter, "objective": _extra(r, src + "objective")}


def load_features(csv_path, repo=ROOT):
    """pytorch/bench/features.py's rows (ours' columns, softdtw-cuda-torch's barycenter in its baseline_ and
    baseline_unfused_ columns) as one wide row per (kind, B, N, D): ours' columns bare,
    softdtw-cuda-torch's fused with "baseline_" and unfused with "unfused_" before them, each with ok /
    reason, and per baseline the time ratio and objective difference to ours (computed here, both from one
    row). (None, None) when the file is absent, (None, Source) when it has no row."""
    if not Path(csv_path).exists():
        return None, None
    df, source = read(csv_path, repo)
    if df.empty:
        return None, source
    df = judge(df)
    wide = {}
    for r in df.to_dict("records"):
        if r["mode"] not in FEATURE_KINDS:
            raise ValueError(f"{csv_path}: mode {r['mode']!r} is none of {FEATURE_KINDS}")
        kind = r["mode"]
        row = wide.setdefault((kind, r["B"], r["N"], r["D"]), {
            "kind": kind, "B": r["B"], "B1": r["B"], "B2": _extra(r, "B2") or r["B"], "N": r["N"], "D": r["D"],
            "gamma": r["gamma"], "reps": r["reps"], "iterations": _extra(r, "iterations"), "lr": _extra(r, "lr"),
            "method": _extra(r, "method") or ("cuda-events" if r["device"] == "cuda" else "wall-clock"),
            "target": "", "target_met": "", "verified": ""})
        found = {"": _measured(r)}
        found.update({p: _measured(r, src) for p, src in FEATURE_COLUMNS.items()
                      if _extra(r, src + "disposition") is not None})
        for p, m in found.items():
            ok = m["disposition"] == "passed"
            row.update({p + "disposition": m["disposition"], p + "error": m["message"], p + "ok": ok,
                        p + "reason": "" if ok else _reason(m["disposition"], m["message"]), p + "ms": m["ms"],
                        p + "ms_per_iter": m["ms_per_iter"], p + "objective": m["objective"]})
        ms = r["time_ms_median"]
        pairs = _extra(r, "pairs_per_s") or (row["B1"] * row["B2"] / (ms / 1e3) if ms == ms else math.nan)
        row.update(p10_ms=r["time_ms_p10"], p90_ms=r["time_ms_p90"], pairs_per_s=pairs, value_err=r["value_err"],
                   value_tol=r["value_tol"], verified=r["verified"], target=str(_extra(r, "target") or ""),
                   target_met=str(_extra(r, "target_met") or ""))
    out = pd.DataFrame(list(wide.values()))
    out["ok"] = out.get("ok", pd.Series(False, index=out.index)).fillna(False).astype(bool)
    out["reason"] = out.get("reason", pd.Series("", index=out.index)).fillna("not measured")
    for p in BASELINES:
        for column, default in ((p + "ok", False), (p + "reason", "not measured"), (p + "ms_per_iter", math.nan),
                                (p + "objective", math.nan)):
            out[column] = out[column].fillna(default) if column in out.columns else default
        out[p + "ok"] = out[p + "ok"].astype(bool)
        both = out["ok"] & out[p + "ok"]
        out[p + "ratio"] = (out[p + "ms_per_iter"].astype(float) / out["ms_per_iter"].astype(float)).where(both)
        base = out[p + "objective"].astype(float)
        out[p + "objective_rel_diff"] = ((out["objective"].astype(float) - base).abs() / base.abs()).where(both)
    for column in ("reps", "B1", "B2", "B", "N", "D", "iterations"):
        out[column] = pd.to_numeric(out[column]).astype("Int64")
    return out, source


def objectives_agree(rows, prefix="baseline_"):
    """Barycenter rows where ours and one baseline both ran and their objectives agree within features.py's
    limit: the only rows whose time ratio compares like with like."""
    return rows["ok"] & rows[prefix + "ok"] & (rows[prefix + "objective_rel_diff"] <= OBJECTIVE_REL_MAX)


def objectives_apart(rows, prefix="baseline_"):
    """Barycenter rows where both ran but their objectives differ: named, never divided."""
    return rows[rows["ok"] & rows[prefix + "ok"] & ~objectives_agree(rows, prefix)]


def load_accuracy(csv_path, repo=ROOT):
    """`sdtw-bench check --accuracy-csv`: rows per implementation, device, N, gamma (and seed), judged."""
    df, source = read(csv_path, repo)
    df = judge(df)
    df["impl"] = [implementation(i, m) for i, m in zip(df["impl"], df["mode"])]
    df["impl"] = [i if d == "cuda" else f"{i}@{d}" for i, d in zip(df["impl"], df["device"])]
    df["ok"] = (df["disposition"] == "passed") & df["grad_err"].apply(lambda e: pd.notna(e) and math.isfinite(e))
    df["reason"] = ["" if ok else (_reason(d, m) if d != "passed" else "non-finite error")
                    for ok, d, m in zip(df["ok"], df["disposition"], df["message"])]
    return df, source


def load_accuracy_grid(csv_path, repo=ROOT):
    """The kernels' accuracy grid (paper/accuracy_grid.py's CSV): the kernels' own gradient error, the
    end-to-end one and what the float32 cost alone moves, per grid (default seed, known worst input)."""
    if not csv_path or not Path(csv_path).exists():
        return None, None
    df, source = read(csv_path, repo)
    _require(df, ["grad_err_end_to_end", "grad_err_cost_only"], csv_path)
    return df, source


def load_peer_accuracy(csv_path):
    """docs/DESIGN.md §3.1 as CSV (impl,N,gamma,grad_err,note): the peers' gradient error."""
    df = pd.read_csv(csv_path)
    _require(df, ["impl", "N", "gamma", "grad_err", "note"], csv_path)
    df["impl"] = "peer:" + df["impl"]
    df["ok"] = df["grad_err"].notna()
    df["reason"] = df["note"].fillna("").astype(str)
    return df


def find_point(points, impl, b, n, d):
    """The one row of impl at (B, N, D), or None."""
    hit = points[(points["impl"] == impl) & (points["B"] == b) & (points["N"] == n) & (points["D"] == d)]
    return None if hit.empty else hit.iloc[0]


class MixedMethods(ValueError):
    """A ratio asked between numbers measured two ways (another GPU, another timing or memory method)."""


def point_ratio(points, base, ours, bnd, field):
    """(base / ours, "") at one (B, N, D), or (None, why) when either did not pass or was not measured.
    Raises MixedMethods when the two were measured by different methods or on different GPUs."""
    rows = [find_point(points, impl, *bnd) for impl in (base, ours)]
    if all(r is not None for r in rows):
        for key in ("method", "gpu"):
            if rows[0][key] != rows[1][key]:
                raise MixedMethods(f"{field} ratio {base} / {ours} at B={bnd[0]} N={bnd[1]} D={bnd[2]} mixes "
                                   f"{key}s: {rows[0][key]!r} and {rows[1][key]!r}")

    def one(r):
        if r is None:
            return None, "not measured"
        return (r[field], "") if r["ok"] else (None, r["reason"])
    (bv, why_base), (ov, why_ours) = one(rows[0]), one(rows[1])
    if bv is None or ov is None:
        return None, why_base or f"ours: {why_ours}"
    return bv / ov, ""


class Results:
    """Everything the paper draws from: our sweep and its Source, the peers, the published table, the
    originals, the features and the accuracy files; sources lists every file read, with its Source."""

    def __init__(self, sweep_csv, accuracy_csv=None, published_dir=None, originals_csv=None, features_csv=None,
                 accuracy_grid_csv=None, repo=ROOT):
        self.sweep_csv = Path(sweep_csv)
        self.sweep, self.sweep_source = load_sweep(sweep_csv, repo)
        self.setting, self.square = sweep_setting(self.sweep)
        self.ours = sweep_points(self.square, self.sweep_source)
        self.accuracy_csv = Path(accuracy_csv) if accuracy_csv else None
        self.accuracy, self.accuracy_source = load_accuracy(accuracy_csv, repo) if accuracy_csv else (None, None)
        self.accuracy_grid, self.accuracy_grid_source = load_accuracy_grid(accuracy_grid_csv, repo)
        pub = Path(published_dir) if published_dir else None
        peer_files = [pub / "h100-peers-seed-grid.csv", pub / "h100-peers-more.csv"] if pub else []
        peer_files = [p for p in peer_files if p.exists()]
        self.peer_gpu = "NVIDIA H100 80GB"
        self.peers = peer_points(peer_files, self.peer_gpu) if peer_files else pd.DataFrame(columns=POINT_COLUMNS)
        table = pub / "published-sdtw-cuda-torch.csv" if pub else None
        self.published = published_points(table) if table and table.exists() else pd.DataFrame(columns=POINT_COLUMNS)
        self.peer_accuracy_csv = pub / "peers-grad-accuracy.csv" if pub else None
        acc = self.peer_accuracy_csv
        self.peer_accuracy = load_peer_accuracy(acc) if acc and acc.exists() else None
        self.originals_csv = Path(originals_csv) if originals_csv else None
        self.originals_source, self.originals_rows = None, None
        self.originals = pd.DataFrame(columns=POINT_COLUMNS)
        if self.originals_csv and self.originals_csv.exists():
            self.originals, self.originals_rows, self.originals_source = originals_points(self.originals_csv, repo)
        self.features_csv = Path(features_csv) if features_csv else None
        self.features, self.features_source = load_features(self.features_csv, repo) if features_csv else (None, None)
        self.sources = [s for s in (self.sweep_source, self.accuracy_source, self.accuracy_grid_source,
                                    self.originals_source, self.features_source) if s is not None]

    @property
    def meta(self):
        """The sweep's GPU, commit, date and versions, as the text names them."""
        s = self.sweep_source
        reps = sorted(set(self.sweep.loc[self.sweep["disposition"] == "passed", "reps"].dropna().astype(int)))
        return {"gpu": s.gpu, "commit": s.commit_text().removeprefix("commit "), "date": s.date,
                "torch": s.metadata.get("torch", "unknown"), "driver": s.metadata.get("driver", "unknown"),
                "cuda": s.metadata.get("cuda", "unknown"), "reps": ", ".join(map(str, reps)) or "?"}

    def grid(self, name):
        """Our sweep's (B, N, D) points of one grid, in sweep order."""
        rows = self.square[self.square["grid"] == name]
        return list(dict.fromkeys(zip(rows["B"], rows["N"], rows["D"])))

    def all_points(self):
        frames = [f for f in (self.ours, self.peers, self.published, self.originals) if not f.empty]
        return pd.concat(frames, ignore_index=True)

    def source_of(self, name):
        """The Source of the file called name among those read, or None (published and peer files have none)."""
        return next((s for s in self.sources if s.name == name), None)

    def stamp(self, files=None):
        """Each file a figure draws from (default: the sweep's) with its GPU, commit (STALE) and date;
        files without a sidecar (the published table, the one-process re-run) by name."""
        files = [self.sweep_csv.name] if files is None else list(dict.fromkeys(files))
        return "   |   ".join(self.source_of(f).stamp() if self.source_of(f) else f"{f} · re-measured or published"
                               for f in files)

    def features_stamp(self):
        return self.features_source.stamp()

    def features_method(self, kind):
        """features.py's own words for how it measured kind, from its sidecar (its timer and reps) or, in a
        file whose sidecar has neither, from its first row."""
        first = dict(self.features.iloc[0])
        meta = dict(self.features_source.metadata)
        meta.setdefault("timer", first["method"])
        meta["method"] = meta["timer"]
        meta.setdefault("reps", first["reps"])
        return method_text(meta, (kind,))

    def features_source_text(self, kind):
        """The file, where and when it ran, and how it measured kind: what a claim from it states beside it."""
        s = self.features_source
        return (f"`{s.name}` ({s.gpu}, {s.commit_text()}, {s.date}; pytorch/bench/features.py). "
                f"Method: {self.features_method(kind)}")
