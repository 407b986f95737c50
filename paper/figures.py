"""The paper's figures (matplotlib, PNG and PDF): memory and runtime against length and dimension,
our speed-up and memory ratios over each baseline, and gradient error against gamma and length.
A point that is missing or did not pass is never drawn as a value: it is a cross in a band above every
value of its panel (a legend entry says so), and the caption says why. One colour per implementation
in every figure (COLOURS); the line style says how it was measured (SOURCE_STYLES)."""
import math
import textwrap
from collections import OrderedDict

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FormatStrFormatter, FuncFormatter, LogLocator, NullFormatter, ScalarFormatter

from data import (METHODS, OBJECTIVE_REL_MAX, PEERS_METHOD, SWEEP_METHOD, label, met_word,
                  objectives_agree, objectives_apart, point_ratio)

# One colour per implementation, whoever measured it.
COLOURS = {
    "ours_fused": "tab:blue",
    "ours_unfused": "tab:green",
    "maghoumi": "tab:red",
    "ours_cpu": "tab:gray",
    "maghoumi_cpu": "tab:olive",
    "pytorch_softdtw_cuda": "tab:orange",
    "sdtw_cuda_torch_fused": "tab:purple",
    "sdtw_cuda_torch_unfused": "tab:pink",
    "pysdtw": "tab:brown",
}
# The names the older files (peers re-run, published, barycenter) give the same implementations.
ALIASES = {"maghoumi": "pytorch_softdtw_cuda", "bgu_fused": "sdtw_cuda_torch_fused",
           "bgu_unfused": "sdtw_cuda_torch_unfused", "ours": "ours_fused", "softdtw-cuda-torch": "sdtw_cuda_torch_fused",
           "softdtw-cuda-torch-unfused": "sdtw_cuda_torch_unfused"}
# How it was measured: (prefix of the point's impl) -> (line style, marker).
SOURCE_STYLES = {"": ("-", "o"), "step:": ("-.", "s"), "peer:": ("--", "^"), "pub:": (":", "v"), "bary:": ("-", "o")}
SPARE = ["black", "tab:cyan", "darkgoldenrod", "slategray"]
STYLES = {}  # series that are no implementation (cdist's B x D lines): their own (colour, marker, line)
# Ratio pairs of the speed-up figure: (baseline, ours), both from one file, one method.
RATIO_PAIRS = [("maghoumi", "ours_fused"), ("ours_unfused", "ours_fused"),
               ("step:pytorch_softdtw_cuda", "step:ours_fused"), ("step:sdtw_cuda_torch_unfused", "step:ours_fused"),
               ("step:sdtw_cuda_torch_fused", "step:ours_fused"), ("step:pysdtw", "step:ours_fused")]
WIDTH, PANEL_H, TITLE_H, PANEL_TITLE_H, LEGEND_ROW_H = 11.0, 3.0, 0.75, 0.2, 0.2
CAPTION_CHARS, CAPTION_LINE_H = 170, 0.135
# The band of crosses for missing points: axes fractions from the top, one lane per implementation.
BAND_FIRST, BAND_LANE, BAND_GAP = 0.035, 0.045, 0.03
MISSING_LEGEND = "× missing point (colour: its implementation; why: caption)"


def method(results):
    text = (f"Solid: {METHODS[SWEEP_METHOD]}, {results.meta['reps']} timed steps. Dashed: {METHODS[PEERS_METHOD]}.")
    if not results.originals.empty:
        text += f" Dash-dot: {METHODS.get(results.originals['method'].iloc[0], 'baselines/originals')}."
    return text


def implementation_of(impl):
    """(implementation, source prefix) of a point's impl: "step:ours_fused" -> ("ours_fused", "step:")."""
    prefix, _, base = impl.rpartition(":")
    prefix = prefix + ":" if prefix else ""
    base, _, device = base.partition("@")
    if prefix in ("peer:", "pub:", "bary:"):
        base = ALIASES.get(base, base)
    return (f"{base}_{device}" if device and not base.endswith(device) else base), prefix


def style(impl, markers_only=False):
    if impl in STYLES:
        color, marker, line = STYLES[impl]
    else:
        base, prefix = implementation_of(impl)
        if base not in COLOURS:
            COLOURS[base] = SPARE[len(COLOURS) % len(SPARE)]
        color = COLOURS[base]
        line, marker = SOURCE_STYLES.get(prefix, ("-.", "x"))
    if markers_only:
        return {"color": color, "marker": marker, "linestyle": "none", "markersize": 6, "markerfacecolor": "none"}
    return {"color": color, "marker": marker, "linestyle": line, "markersize": 4, "linewidth": 1.3}


class Gaps:
    """The points a figure could not draw: (impl, point, reason), for its caption."""

    def __init__(self):
        self.items = OrderedDict()

    def add(self, impl, where, reason):
        points = self.items.setdefault(impl, OrderedDict()).setdefault(reason, [])
        if where not in points:
            points.append(where)

    def caption(self):
        if not self.items:
            return "No point is missing."
        parts = []
        for impl, reasons in self.items.items():
            said = "; ".join(f"{reason} at {compact(points)}" for reason, points in reasons.items())
            parts.append(f"{label(impl)}: {said}")
        return "Missing (× in the band above the values, no value drawn): " + "; ".join(parts) + "."


def compact(points):
    """Points (tuples of (name, value)) as "N = 1024, D in {1, 64}" when they form a full product."""
    names = [n for n, _ in points[0]]
    values = [list(dict.fromkeys(p[i][1] for p in points)) for i in range(len(names))]
    size = 1
    for v in values:
        size *= len(v)
    if size == len(points):
        return ", ".join(f"{n} = {v[0]:g}" if len(v) == 1 else f"{n} in {{{', '.join(f'{x:g}' for x in v)}}}"
                         for n, v in zip(names, values))
    return ", ".join("(" + " ".join(f"{n}={v:g}" for n, v in p) + ")" for p in points)


def missing_y(lane):
    """Height (axes fraction) of the crosses of an implementation's lane: in the band at the top."""
    return 1 - BAND_FIRST - BAND_LANE * lane


def draw(ax, impl, xs, values, gaps, where, markers_only=False):
    """One implementation's line; None values are missing: a cross in the band at the top of the panel
    where the point ran and did not pass, only the caption where its file has no such point.
    values: list of (value, reason) with value None when missing; where(x): the point, for the caption.
    Each implementation with crosses in a panel gets its own height (lane) so crosses do not overlap."""
    kw = style(impl, markers_only)
    # NaN, not a skipped point: the line breaks at a missing point instead of bridging it.
    ys = [float("nan") if v is None or v != v else v for v, _ in values]
    line = None
    if any(v == v for v in ys):
        line, = ax.plot(xs, ys, label=label(impl), **kw)
    for x, (v, reason) in zip(xs, values):
        if (v is None or v != v) and reason in ("", "not measured"):
            gaps.add(impl, where(x), "not measured (not in its file)")  # said in the caption, not drawn
        elif v is None or v != v:
            lanes = ax.__dict__.setdefault("sdtw_lanes", {})
            lane = lanes.setdefault(impl, len(lanes))
            ax.plot([x], [missing_y(lane)], transform=ax.get_xaxis_transform(), marker="x", color=kw["color"],
                    markersize=6, linestyle="none", clip_on=False, gid="missing")
            gaps.add(impl, where(x), reason)
    return line


def log_axes(ax, xs, xlabel, ylabel, base=2):
    """Log-log panel with the measured x values as ticks; the y label only where tick labels show."""
    ax.set_xscale("log", base=base)
    ax.set_yscale("log")
    ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_locator(LogLocator(subs="auto"))
    ax.set_xlabel(xlabel)
    if ax.get_subplotspec().is_first_col() or not ax.get_shared_y_axes().get_siblings(ax)[1:]:
        ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def values_of(ax):
    """Every value drawn in a panel (lines and reference lines, not the missing crosses)."""
    return [y for line in ax.get_lines() if line.get_gid() != "missing" for y in line.get_ydata() if y == y and y > 0]


def band_bottom(lanes):
    """Axes fraction under which every value stays: below the lowest lane of crosses, with a gap."""
    return missing_y(lanes - 1) - BAND_GAP if lanes else 1.0


def make_room(ax):
    """Sets a (log) panel's y limits so that every value, over all panels sharing its y axis, lies below
    the band of crosses of missing points (and a dotted line between them)."""
    group = [a for a in ax.get_shared_y_axes().get_siblings(ax) if a.get_visible()]
    lanes = max(len(a.__dict__.get("sdtw_lanes", {})) for a in group)
    ys = [y for a in group for y in values_of(a)]
    if not ys:
        return
    lo, hi = math.log10(min(ys)), math.log10(max(ys))
    bottom, top = 0.06, band_bottom(lanes) if lanes else 0.94
    scale = max(hi - lo, 1.0) / (top - bottom)  # log10 units per axes height
    low = lo - bottom * scale
    ax.set_ylim(10 ** low, 10 ** (low + scale))
    if lanes and not ax.__dict__.get("sdtw_band"):
        ax.sdtw_band = True
        ax.axhline(10 ** (low + (top + BAND_GAP / 2) * scale), color="0.75", linewidth=0.6, linestyle=":",
                   gid="missing")


def readable_ticks(ax):
    """A log y axis spanning less than two decades gets labelled ticks at 2 and 5 times each power of ten."""
    lo, hi = ax.get_ylim()
    if ax.get_yscale() == "log" and lo > 0 and math.log10(hi / lo) < 2:
        ax.yaxis.set_minor_locator(LogLocator(subs=(2, 5)))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.tick_params(axis="y", which="minor", labelsize=7)


def legend_handles(legend_impls, markers_only, extra, has_missing):
    handles = [Line2D([], [], label=label(i), **style(i, i in markers_only)) for i in legend_impls] + list(extra)
    if has_missing:
        handles.append(Line2D([], [], marker="x", color="0.3", linestyle="none", label=MISSING_LEGEND))
    return handles


def finish(fig, axes, title, stamp, caption, legend_impls, markers_only=(), extra=()):
    """Title, stamp (each source file with its GPU, commit and date), one legend for the figure inside
    the canvas (an entry for missing points where a panel has some), and the caption under it."""
    for ax in axes.flat:
        if ax.get_visible():
            make_room(ax)
            readable_ticks(ax)
    has_missing = any(line.get_gid() == "missing" for ax in axes.flat for line in ax.get_lines())
    handles = legend_handles(legend_impls, markers_only, extra, has_missing)
    titled = any(ax.get_title() for ax in axes.flat)
    wrapped = textwrap.fill(caption, CAPTION_CHARS)
    stamp = textwrap.fill(stamp, 2 * CAPTION_CHARS // 3)
    cap_h = CAPTION_LINE_H * (wrapped.count("\n") + 1) + 0.15
    stamp_h = 0.16 * stamp.count("\n")
    ncol = min(len(handles), 4) or 1
    w, h0 = fig.get_size_inches()
    while True:
        head_h = TITLE_H + stamp_h + LEGEND_ROW_H * -(-len(handles) // ncol) + (PANEL_TITLE_H if titled else 0)
        h = h0 + cap_h + head_h
        fig.set_size_inches(w, h)
        legend = fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1 - (0.5 + stamp_h) / h),
                            ncol=ncol, fontsize=8, frameon=False)
        fig.canvas.draw()
        box = legend.get_window_extent()
        if ncol == 1 or (box.x0 >= 0 and box.x1 <= fig.bbox.x1):
            break
        legend.remove()
        ncol -= 1
    fig.subplots_adjust(top=1 - head_h / h, bottom=(cap_h + 0.5) / h, left=0.07, right=0.98, hspace=0.55, wspace=0.3)
    fig.suptitle(title, y=1 - 0.08 / h, va="top", fontsize=11)
    fig.text(0.5, 1 - 0.36 / h, stamp, ha="center", va="top", fontsize=7.5, color="0.3", gid="stamp")
    fig.text(0.01, 0.08 / h, wrapped, ha="left", va="bottom", fontsize=7.5, family="sans-serif", gid="caption")
    return fig


def stamp_of(fig):
    return next(t.get_text() for t in fig.texts if t.get_gid() == "stamp")


def caption_of(fig):
    return next(t.get_text() for t in fig.texts if t.get_gid() == "caption").replace("\n", " ")


def new_figure(nrows, ncols, sharey=False):
    fig, axes = plt.subplots(nrows, ncols, figsize=(WIDTH, PANEL_H * nrows), squeeze=False,
                             sharey="row" if sharey else False)
    return fig, axes


MEASURES = [("peak_mb", "absolute peak memory (MB)"), ("step_mb", "step memory (MB)"), ("ms", "forward + backward (ms)")]


def sweep_axis(results, axis, combos, only=None):
    """Absolute peak MB, step MB and ms against one axis (N or D), the other two fixed at each of combos,
    every implementation with a point there (ours, our reimplementation, the peers re-run, the published
    table; step memory only where a file measured it). One combo: the measures side by side; several: a
    row per measure, a column per combo. only: the x values to draw (default: every value there)."""
    everything = results.all_points()
    fig, axes = new_figure(1, 3) if len(combos) == 1 else new_figure(3, len(combos), sharey=True)
    gaps = Gaps()
    name = {"N": "sequence length N = M", "D": "feature dimension D"}[axis]
    legend, files = [], []
    for col, fixed in enumerate(combos):
        pts = everything
        for k, v in fixed.items():
            pts = pts[pts[k] == v]
        xs = sorted(set(pts[axis]) if only is None else set(only[col]))
        pts = pts[pts[axis].isin(xs)]
        impls = list(dict.fromkeys(pts["impl"]))
        legend += impls
        files += list(pts["file"])
        where = (lambda x: ((axis, x),)) if len(combos) == 1 else (lambda x, f=fixed: tuple(f.items()) + ((axis, x),))
        for row, (field, ylabel) in enumerate(MEASURES):
            ax = axes[0][row] if len(combos) == 1 else axes[row][col]
            for impl in impls:
                rows = pts[pts["impl"] == impl].set_index(axis)
                if rows[field].isna().all():
                    continue  # a file that does not measure this (step memory of the published table)
                values = []
                for x in xs:
                    r = rows.loc[x] if x in rows.index else None
                    values.append((r[field], "") if r is not None and r["ok"] else
                                  (None, "not measured" if r is None else r["reason"]))
                draw(ax, impl, xs, values, gaps if field == "ms" else Gaps(), where)
            log_axes(ax, xs, name, ylabel)
            if len(combos) > 1:
                ax.set_title(", ".join(f"{k} = {v}" for k, v in fixed.items()), fontsize=9)
    fixed_text = "; ".join(", ".join(f"{k} = {v}" for k, v in f.items()) for f in combos)
    published = any(i.startswith("pub:") for i in legend)
    caption = (f"Forward + backward of sum(sdtw(x, y)), float32, gamma = {results.setting['gamma']}, {fixed_text}; "
               "values measured in different ways side by side, never divided. Absolute peak: the most allocated "
               "during the point, inputs included; step memory: that peak minus what was allocated just before the "
               f"step. Ours and our Maghoumi reimplementation: {results.meta['gpu']}; the original codes (dashed): "
               f"re-run on an {results.peer_gpu}"
               + ("; dotted: as the seed paper published them (GPU not stated). " if published else ". ")
               + method(results) + " Failed verification counts as missing. " + gaps.caption())
    title = f"Memory and runtime against {name}" + (f" ({fixed_text})" if len(combos) == 1 else "")
    return finish(fig, axes, title, results.stamp(files), caption, list(dict.fromkeys(legend)))


RATIOS = [("ms", "speed-up (×)"), ("peak_mb", "absolute peak ratio (×)"), ("step_mb", "step memory ratio (×)")]


def speedup(results):
    """Our fused speed-up, absolute peak and step memory ratios (baseline / ours, x) over each baseline
    measured in the same file the same way, on the seed paper's grid: a column per (B, D), N along x."""
    pts = results.all_points()
    pairs = [p for p in RATIO_PAIRS if p[0] in set(pts["impl"])]
    baselines = [base for base, _ in pairs]
    keys = results.grid("seed-grid")
    combos = list(dict.fromkeys((b, d) for b, _, d in keys))
    fig, axes = new_figure(len(RATIOS), max(len(combos), 1), sharey=True)
    gaps = Gaps()
    for col, (b, d) in enumerate(combos):
        xs = sorted({n for bb, n, dd in keys if (bb, dd) == (b, d)})
        for row, (field, ylabel) in enumerate(RATIOS):
            ax = axes[row][col]
            for base, ours in pairs:
                values = [point_ratio(pts, base, ours, (b, n, d), field) for n in xs]
                draw(ax, base, xs, values, gaps if row == 0 else Gaps(), lambda n: (("B", b), ("N", n), ("D", d)))
            ax.axhline(1.0, color="0.4", linewidth=0.8)
            log_axes(ax, xs, "sequence length N = M", ylabel)
            ax.set_title(f"B = {b}, D = {d}", fontsize=9)
    files = [results.sweep_csv.name] + ([results.originals_csv.name] if not results.originals.empty else [])
    originals = ("the original codes against ours through the Python package (dash-dot), both from "
                 f"{results.originals_csv.name} ({METHODS.get(results.originals['method'].iloc[0], '')})"
                 if not results.originals.empty else
                 "the original codes are left out until baselines/originals has measured them")
    caption = (f"Ratio baseline / ours fused (above 1: ours is faster or smaller), each ratio between two numbers of "
               f"one file measured one way; absolute peak and step memory on their own rows, never mixed. Solid: our "
               f"Maghoumi reimplementation and our own unfused path against ours fused ({results.sweep_csv.name}, "
               f"{METHODS[SWEEP_METHOD]}); {originals}. The published numbers and the one-process re-run are never "
               "divided. " + gaps.caption())
    return finish(fig, axes, "Our speed-up and memory ratios over each baseline (seed paper's grid)",
                  results.stamp(files), caption, baselines)


def grad_error(results):
    """Relative L2 error of the gradient against the float64 reference, the largest over a cell's seeds:
    against gamma for each N (top), against N for each gamma (bottom), every implementation of
    `sdtw-bench check`, with ours' tolerance as a line."""
    acc = results.accuracy
    cells = (acc.groupby(["impl", "N", "gamma"], sort=False)
             .agg(grad_err=("grad_err", "max"), ok=("ok", "all"), reason=("reason", lambda r: next(
                 (x for x in r if x), "")), seeds=("seed", "nunique")).reset_index())
    frames = [cells[["impl", "N", "gamma", "grad_err", "ok", "reason"]]]
    files = [results.accuracy_source.name]
    if results.peer_accuracy is not None:
        frames.append(results.peer_accuracy[["impl", "N", "gamma", "grad_err", "ok", "reason"]])
        files.append(results.peer_accuracy_csv.name)
    rows = pd.concat(frames, ignore_index=True)
    ns, gammas = sorted(set(acc["N"])), sorted(set(acc["gamma"]), reverse=True)
    impls = list(dict.fromkeys(rows["impl"]))
    tol = acc.loc[acc["impl"].str.startswith("ours"), "grad_tol"].max()
    fig, axes = new_figure(2, max(len(ns), len(gammas)), sharey=True)
    gaps = Gaps()
    for top, (fixed, along, panels, xs) in enumerate([("N", "gamma", ns, gammas), ("gamma", "N", gammas, ns)]):
        for col, v in enumerate(panels):
            ax = axes[top][col]
            sub = rows[rows[fixed] == v]
            for impl in impls:
                mine = sub[sub["impl"] == impl].set_index(along)
                here = [x for x in xs if x in mine.index]
                values = [(mine.loc[x, "grad_err"], "") if mine.loc[x, "ok"] else (None, mine.loc[x, "reason"])
                          for x in here]
                if here:
                    draw(ax, impl, here, values, gaps if top == 0 else Gaps(),
                         lambda x, v=v: tuple(sorted(((fixed, v), (along, x)), key=lambda t: t[0] != "N")),
                         markers_only=impl.startswith("peer:"))
            if tol == tol:
                ax.axhline(tol, color="black", linestyle="--", linewidth=0.9)
            if along == "gamma":
                log_axes(ax, xs, "gamma", "gradient rel. L2 error", base=10)
                ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
                ax.invert_xaxis()
                ax.set_title(f"N = M = {v}", fontsize=9)
            else:
                log_axes(ax, xs, "sequence length N = M", "gradient rel. L2 error")
                ax.set_title(f"gamma = {v:g}", fontsize=9)
        for col in range(len(panels), axes.shape[1]):
            axes[top][col].set_visible(False)
    b = ", ".join(map(str, sorted(set(acc["B"]))))
    d = ", ".join(map(str, sorted(set(acc["D"]))))
    seeds = sorted(set(cells["seeds"]))
    caption = (f"Relative L2 error of the gradient against a float64 reference, float32 inputs, B = {b}, D = {d}, the "
               f"largest over each cell's {'/'.join(map(str, seeds))} seed(s) (`sdtw-bench check`, ours and our "
               f"Maghoumi reimplementation on {results.accuracy_source.gpu} and on the CPU). Dashed line: ours' "
               f"tolerance {tol:g}. Open markers: the original codes as docs/DESIGN.md §3.1 tabulates them (its GPU, B and D not "
               "stated; only the points it lists). " + gaps.caption())
    peers = [i for i in impls if i.startswith("peer:")]
    extra = [Line2D([], [], color="black", linestyle="--", linewidth=0.9, label=f"tolerance {tol:g} (ours)")]
    return finish(fig, axes, "Gradient error against gamma and sequence length", results.stamp(files), caption, impls,
                  markers_only=peers, extra=extra if tol == tol else ())


# The barycenter's implementations: (column prefix in the features table, who).
BARYCENTER_IMPLS = {"bary:ours": "", "bary:softdtw-cuda-torch": "baseline_", "bary:softdtw-cuda-torch-unfused": "unfused_"}


def features_series(rows, x, field, prefix=""):
    """(value, reason) of each x (N) of rows: None where the point is absent or did not pass."""
    by_x = rows.set_index("N")
    return [(by_x.loc[n, field], "") if n in by_x.index and by_x.loc[n, prefix + "ok"] else
            (None, by_x.loc[n, prefix + "reason"] if n in by_x.index else "not measured") for n in x]


def cdist_throughput(results):
    """Pairs per second of cdist_soft_dtw (values only) against N = M, a line per (B1 x B2, D); the
    issue's target point circled."""
    rows = results.features[results.features["kind"] == "cdist"]
    xs = sorted(set(rows["N"]))
    fig, axes = new_figure(1, 1)
    ax, gaps, legend = axes[0][0], Gaps(), []
    bs, ds = sorted(set(rows["B1"])), sorted(set(rows["D"]))
    for (b, d), mine in rows.groupby(["B1", "D"]):
        impl = f"B1 = B2 = {b}, D = {d}"  # colour by B, marker and line by D
        STYLES.setdefault(impl, (f"C{bs.index(b) % 10}", "os^Dv"[ds.index(d) % 5], "-:"[ds.index(d) % 2]))
        draw(ax, impl, xs, features_series(mine, xs, "pairs_per_s"), gaps,
             lambda n, b=b, d=d: (("B", b), ("D", d), ("N", n)))
        legend.append(impl)
    targets = []
    for r in rows[rows["target"] != ""].itertuples():
        verdict = met_word(r.target_met)
        if r.ok:
            ax.plot([r.N], [r.pairs_per_s], marker="o", markersize=13, markerfacecolor="none", color="black",
                    linestyle="none")
        measured = f"measured {r.ms:.3g} ms" if r.ok else r.reason
        targets.append(f"B1 = B2 = {r.B1}, N = {r.N}, D = {r.D}: target {r.target}, {measured}, {verdict}")
    log_axes(ax, xs, "sequence length N = M", "pairs per second")
    caption = (f"cdist_soft_dtw(X, Y) of B1 x B2 pairs, values only, float32, gamma = {rows['gamma'].iloc[0]:g}. "
               f"Method: {results.features_method('cdist')} Circled, the issue's target point"
               + (f" ({'; '.join(targets)})" if targets else " (not in this run)") + ". " + gaps.caption())
    return finish(fig, axes, "Pairwise soft-DTW (cdist): pairs per second against length", results.features_stamp(),
                  caption, legend)


def barycenter_speed(results):
    """Time per Adam iteration of softdtw_barycenter, ours and softdtw-cuda-torch's in both of its modes,
    against N, a panel per D; above each point of ours the ratio of each mode to ours (one row, one way)."""
    rows = results.features[results.features["kind"] == "barycenter"]
    ds, xs = sorted(set(rows["D"])), sorted(set(rows["N"]))
    fig, axes = new_figure(1, len(ds), sharey=True)
    gaps = Gaps()
    for col, d in enumerate(ds):
        ax, mine = axes[0][col], rows[rows["D"] == d]
        for impl, prefix in BARYCENTER_IMPLS.items():
            draw(ax, impl, xs, features_series(mine, xs, prefix + "ms_per_iter", prefix), gaps,
                 lambda n, d=d: (("D", d), ("N", n)))
        fused, unfused = objectives_agree(mine, "baseline_"), objectives_agree(mine, "unfused_")
        for idx, r in mine[fused | unfused].iterrows():
            text = " / ".join(f"{word} {r[p + 'ratio']:.3g}×" for p, word, agree in
                              (("baseline_", "f", fused), ("unfused_", "u", unfused)) if agree[idx])
            ax.annotate(text, (r["N"], r["ms_per_iter"]), textcoords="offset points", xytext=(0, 6), ha="center",
                        fontsize=7)
        log_axes(ax, xs, "sequence length N", "ms per iteration")
        ax.set_title(f"D = {d}", fontsize=9)
    first = rows.iloc[0]
    apart = [f"{'fused' if p == 'baseline_' else 'unfused'} at D = {r.D}, N = {r.N}: {r[p + 'objective_rel_diff']:.2g}"
             for p in ("baseline_", "unfused_") for _, r in objectives_apart(rows, p).iterrows()]
    caption = (f"softdtw_barycenter of B = {', '.join(map(str, sorted(set(rows['B']))))} series, float32, gamma = "
               f"{first['gamma']:g}, {first['iterations']} Adam iterations, lr {first['lr']:g}, early stopping off; "
               "softdtw-cuda-torch in its default fused mode and in its unfused mode. Above each point of ours: "
               "softdtw-cuda-torch / ours per iteration (f: fused, u: unfused), where the two objectives agree "
               f"(relative difference <= {OBJECTIVE_REL_MAX:g})"
               + (" (no ratio where they differ: " + "; ".join(apart) + ")" if apart else "")
               + f". Method: {results.features_method('barycenter')} " + gaps.caption())
    return finish(fig, axes, "Barycenter: time per iteration, ours and softdtw-cuda-torch (both modes)",
                  results.features_stamp(), caption, list(BARYCENTER_IMPLS))


def all_figures(results):
    """name -> figure, for every figure the data allows."""
    out = OrderedDict()
    for axis, grid, fixed_keys in [("N", "length", ("B", "D")), ("D", "dimension", ("B", "N"))]:
        keys = results.grid(grid)
        if keys:
            b, n, d = keys[0]
            fixed = {k: v for k, v in zip(("B", "N", "D"), (b, n, d)) if k in fixed_keys}
            out[grid] = sweep_axis(results, axis, [fixed])
    seed = results.grid("seed-grid")
    if seed:
        combos = [{"B": b, "D": d} for b, d in dict.fromkeys((b, d) for b, _, d in seed)]
        lengths = [[n for b, n, d in seed if (b, d) == (c["B"], c["D"])] for c in combos]
        out["seed_grid"] = sweep_axis(results, "N", combos, only=lengths)
        out["speedup"] = speedup(results)
    if results.accuracy is not None:
        out["grad_error"] = grad_error(results)
    if results.features is not None:
        kinds = set(results.features["kind"])
        if "cdist" in kinds:
            out["cdist"] = cdist_throughput(results)
        if "barycenter" in kinds:
            out["barycenter"] = barycenter_speed(results)
    return out


def write_figures(results, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = all_figures(results)
    captions = []
    for name, fig in figs.items():
        fig.savefig(out_dir / f"{name}.png", dpi=130, metadata={"Software": None})
        fig.savefig(out_dir / f"{name}.pdf", metadata={"CreationDate": None, "Producer": None, "Creator": None})
        captions.append((name, caption_of(fig)))
        plt.close(fig)
    return captions
