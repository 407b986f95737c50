"""Loads result files into one tidy table of points: one row per implementation and (B, N, D),
with the GPU it ran on, the method that measured it, peak MB (and step MB where measured), ms,
whether it counts (ok) and, when not, why. A ratio is only taken between two points of one method."""
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT / "torch/bench"))
from features_report import COLUMNS as FEATURES_COLUMNS  # noqa: E402  (features.csv's columns, one source)
from features_report import method_text as features_method  # noqa: E402  (features.md's words, one source)
from features_report import OBJECTIVE_REL_MAX, met_word  # noqa: E402,F401  (features.py's limit and verdicts)
SWEEP_COLUMNS = ["grid", "impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize",
                 "disposition", "time_ms_median", "peak_mb", "grad_err", "message"]
ACCURACY_COLUMNS = ["impl", "device", "N", "gamma", "grad_err", "status"]
PUBLISHED_GPU = "GPU not stated"
POINT_COLUMNS = ["impl", "source", "method", "gpu", "B", "N", "D", "ms", "peak_mb", "step_mb", "ok", "reason"]
# How each source was measured (a ratio never mixes two of them).
SWEEP_METHOD = "sdtw-bench"
PEERS_METHOD = "python-one-process-mean5"
PUBLISHED_METHOD = "published"
METHODS = {
    SWEEP_METHOD: "sdtw-bench sweep (C++ timing loop, median of the timed steps; peak allocated over the timed steps)",
    PEERS_METHOD: "original codes re-run in one Python process for all points (mean of 5 steps; absolute peak "
                  "including what earlier points left)",
    PUBLISHED_METHOD: "as the seed paper published it (GPU not stated)",
    "python-step-fresh-process": "baselines/originals: the user's Python step, each implementation in a fresh "
                                 "process per grid (median of up to 20 steps; absolute peak and step memory)",
}
ORIGINALS_PREFIX = "step:"  # impl names of originals.csv: its ours_fused is another measurement than the sweep's
# The implementations of baselines/originals (originals.csv), as its impl column names them.
ORIGINALS = ["ours_fused", "ours_unfused", "sdtw_cuda_torch_fused", "sdtw_cuda_torch_unfused", "pytorch_softdtw_cuda",
             "pysdtw"]

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
    "bary:softdtw-cuda-torch": "softdtw-cuda-torch, softdtw_barycenter",
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


def load_metadata(csv_path):
    """GPU, commit and date of a sweep, from the .json beside it; a commit the JSON does not know
    is taken from the README table of the same folder (the device copy has no .git)."""
    csv_path = Path(csv_path)
    meta = {}
    json_path = csv_path.with_suffix(".json")
    if json_path.exists():
        meta = json.loads(json_path.read_text()).get("metadata", {})
    commit = meta.get("git_commit") or "unknown"
    if commit == "unknown":
        commit = _commit_from_readme(csv_path) or "unknown"
    if str(meta.get("git_dirty")).lower() == "true":
        commit += " (tree recorded as modified)"
    return {"gpu": meta.get("gpu") or "unknown GPU", "commit": commit, "date": (meta.get("date") or "unknown date")[:10],
            "torch": meta.get("torch", "unknown"), "driver": meta.get("driver", "unknown"),
            "sweep": meta.get("sweep", csv_path.stem), "reps": meta.get("settings", {}).get("reps", "?")}


def _commit_from_readme(csv_path):
    readme = csv_path.parent / "README.md"
    if not readme.exists():
        return None
    for line in readme.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 1 and csv_path.name in cells[0]:
            match = re.match(r"`?([0-9a-f]{7,40})\b", cells[-1])
            return match.group(1) if match else None
    return None


def load_sweep(csv_path):
    """An sdtw-bench sweep, validated, one row per distinct point (grids may repeat a point)."""
    df = pd.read_csv(csv_path, keep_default_na=False, na_values=[""])
    _require(df, SWEEP_COLUMNS, csv_path)
    bad = set(df["disposition"]) - {"passed"} - set(DISPOSITION_WORDS)
    if bad:
        raise ValueError(f"{csv_path}: unknown dispositions {sorted(bad)}")
    df["message"] = df["message"].fillna("").astype(str)
    df = df.drop_duplicates(subset=["impl", "device", "dtype", "B", "N", "M", "D", "gamma", "bandwidth", "normalize"])
    return df.reset_index(drop=True)


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


def sweep_points(df, gpu):
    rows = []
    for r in df.itertuples():
        ok = r.disposition == "passed"
        impl = r.impl if r.device == "cuda" else f"{r.impl}@{r.device}"
        rows.append({"impl": impl, "source": "ours" if r.impl.startswith("ours") else "reproduced",
                     "method": SWEEP_METHOD, "gpu": gpu if r.device == "cuda" else "CPU", "B": r.B, "N": r.N,
                     "D": r.D, "ms": r.time_ms_median, "peak_mb": r.peak_mb, "step_mb": math.nan, "ok": ok,
                     "reason": "" if ok else _reason(r.disposition, r.message)})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def peer_points(paths, gpu):
    """The original peers re-measured (impl,B,N,D,peak_mb,ms,note); nan with a note is a failed run."""
    frames = [pd.read_csv(p) for p in paths]
    df = pd.concat(frames).drop_duplicates(subset=["impl", "B", "N", "D"])
    _require(df, ["impl", "B", "N", "D", "peak_mb", "ms", "note"], paths)
    rows = []
    for r in df.itertuples():
        ok = not (pd.isna(r.peak_mb) or pd.isna(r.ms))
        note = "" if pd.isna(r.note) else str(r.note)
        reason = "" if ok else "error (" + (_short_error(note) or "no value") + ")"
        rows.append({"impl": "peer:" + r.impl, "source": "reproduced", "method": PEERS_METHOD, "gpu": gpu,
                     "B": r.B, "N": r.N, "D": r.D, "ms": r.ms, "peak_mb": r.peak_mb, "step_mb": math.nan,
                     "ok": ok, "reason": reason})
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
                         "B": r["B"], "N": r["N"], "D": r["D"], "ms": ms, "peak_mb": mb, "step_mb": math.nan, "ok": ok,
                         "reason": "" if ok else "not reported (NaN in the published table)"})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def originals_points(csv_path, gpu):
    """baselines/originals output: every implementation (ours included) measured one way, per row's
    `method`; impl names get the "step:" prefix. Non-square or other-gamma rows are left out."""
    df = pd.read_csv(csv_path, keep_default_na=False, na_values=[""])
    _require(df, ["method", "impl", "device", "B", "N", "M", "D", "disposition", "time_ms_median", "peak_mb",
                  "step_mb", "grad_err", "reps", "message"], csv_path)
    bad = set(df["disposition"]) - {"passed"} - set(DISPOSITION_WORDS)
    if bad:
        raise ValueError(f"{csv_path}: unknown dispositions {sorted(bad)}")
    df["message"] = df["message"].fillna("").astype(str)
    rows = []
    for r in df[df["N"] == df["M"]].itertuples():
        ok = r.disposition == "passed"
        rows.append({"impl": ORIGINALS_PREFIX + r.impl, "source": "ours" if r.impl.startswith("ours") else "original",
                     "method": r.method, "gpu": gpu if r.device == "cuda" else "CPU", "B": r.B, "N": r.N, "D": r.D,
                     "ms": r.time_ms_median, "peak_mb": r.peak_mb, "step_mb": r.step_mb, "ok": ok,
                     "reason": "" if ok else _reason(r.disposition, _short_error(r.message))})
    return pd.DataFrame(rows, columns=POINT_COLUMNS), df


def load_features(csv_path):
    """torch/bench/features.py's rows (cdist and barycenter points), validated, with ok / reason for ours
    and baseline_ok / baseline_reason for softdtw-cuda-torch; None when the file is absent or has no row."""
    if not Path(csv_path).exists():
        return None
    df = pd.read_csv(csv_path, keep_default_na=False, na_values=[""])
    _require(df, FEATURES_COLUMNS, csv_path)
    if df.empty:
        return None
    for prefix in ("", "baseline_"):
        df[prefix + "disposition"] = df[prefix + "disposition"].fillna("").astype(str)
        df[prefix + "error"] = df[prefix + "error"].fillna("").astype(str)
        bad = set(df[prefix + "disposition"]) - {"", "passed"} - set(DISPOSITION_WORDS)
        if bad:
            raise ValueError(f"{csv_path}: unknown {prefix}dispositions {sorted(bad)}")
        df[prefix + "ok"] = df[prefix + "disposition"] == "passed"
        df[prefix + "reason"] = [_reason(d, e) if d in DISPOSITION_WORDS else "not measured"
                                 for d, e in zip(df[prefix + "disposition"], df[prefix + "error"])]
    for column in ("target", "target_met", "verified"):
        df[column] = df[column].fillna("").astype(str)
    for column in ("reps", "B1", "B2", "B", "N", "D", "iterations"):  # blank where the other kind's
        df[column] = df[column].astype("Int64")
    return df


def objectives_agree(rows):
    """Barycenter rows where both ran and their objectives agree within features.py's limit: the only
    rows whose time ratio compares like with like."""
    return rows["ok"] & rows["baseline_ok"] & (rows["objective_rel_diff"] <= OBJECTIVE_REL_MAX)


def objectives_apart(rows):
    """Barycenter rows where both ran but their objectives differ: named, never divided."""
    return rows[rows["ok"] & rows["baseline_ok"] & ~objectives_agree(rows)]


def load_accuracy(csv_path):
    """`sdtw-bench check --accuracy-csv`: one row per implementation, device, N and gamma."""
    df = pd.read_csv(csv_path)
    _require(df, ACCURACY_COLUMNS, csv_path)
    df["impl"] = [i if d == "cuda" else f"{i}@{d}" for i, d in zip(df["impl"], df["device"])]
    df["ok"] = (df["status"] == "ok") & df["grad_err"].apply(lambda e: pd.notna(e) and math.isfinite(e))
    df["reason"] = ["" if ok else (s.replace("_", " ") if s != "ok" else "non-finite error")
                    for ok, s in zip(df["ok"], df["status"])]
    return df


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
    """Everything the paper draws from: our sweep, its metadata, the peers and the published table."""

    def __init__(self, sweep_csv, accuracy_csv=None, published_dir=None, originals_csv=None, features_csv=None):
        self.sweep_csv = Path(sweep_csv)
        self.meta = load_metadata(sweep_csv)
        self.sweep = load_sweep(sweep_csv)
        self.setting, self.square = sweep_setting(self.sweep)
        self.ours = sweep_points(self.square, self.meta["gpu"])
        self.accuracy_csv = Path(accuracy_csv) if accuracy_csv else None
        self.accuracy = load_accuracy(accuracy_csv) if accuracy_csv else None
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
        self.originals_meta, self.originals_rows = None, None
        self.originals = pd.DataFrame(columns=POINT_COLUMNS)
        if self.originals_csv and self.originals_csv.exists():
            self.originals_meta = load_metadata(self.originals_csv)
            self.originals, self.originals_rows = originals_points(self.originals_csv, self.originals_meta["gpu"])
        self.features_csv = Path(features_csv) if features_csv else None
        self.features = load_features(self.features_csv) if features_csv else None

    def grid(self, name):
        """Our sweep's (B, N, D) points of one grid, in sweep order."""
        rows = self.square[self.square["grid"] == name]
        return list(dict.fromkeys(zip(rows["B"], rows["N"], rows["D"])))

    def all_points(self):
        frames = [f for f in (self.ours, self.peers, self.published, self.originals) if not f.empty]
        return pd.concat(frames, ignore_index=True)

    def stamp(self):
        m = self.meta
        return f"{m['gpu']} · commit {m['commit']} · {m['date']} · {self.sweep_csv.name}"

    def features_stamp(self):
        first = self.features.iloc[0]
        return f"{first['gpu']} · commit {first['commit']} · {first['date']} · {self.features_csv.name}"

    def features_source(self, kind):
        """The file, where and when it ran, and how it measured kind: what a claim from it states beside it."""
        first = self.features.iloc[0]
        return (f"`{self.features_csv.name}` ({first['gpu']}, commit {first['commit']}, {first['date']}; "
                f"torch/bench/features.py). Method: {features_method(first, (kind,))}")
