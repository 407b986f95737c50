"""The paper's tables as Markdown and LaTeX: the seed paper's main table from our sweep, and
published versus reproduced versus ours. A point that did not pass is a short token whose reason
is spelled out in the notes below the table, never a number."""
from dataclasses import dataclass

import pandas as pd

from data import (LABELS, METHODS, ORIGINALS, ORIGINALS_PREFIX, PEERS_METHOD, PUBLISHED_METHOD, SWEEP_METHOD, find_point,
                  point_ratio)


DECIMALS = {"int": 0, "mb": 1, "ms": 2, "pct": 1, "x": 2}
TOKENS = [("failed verification", "fail"), ("not supported", "n/s"), ("out of memory", "OOM"),
          ("error", "err"), ("", "—")]
ALL_TOKENS = [t for _, t in TOKENS]


@dataclass
class Missing:
    token: str
    reason: str
    measured: str = ""  # what a point that failed verification did measure, for the notes


@dataclass
class Column:
    header: list  # lines of the header cell
    kind: str     # int, mb, ms or pct: how many decimals


@dataclass
class Table:
    name: str
    caption: str
    columns: list
    rows: list   # lists of numbers or Missing
    notes: list


def missing(reason):
    token = next(t for prefix, t in TOKENS if reason.startswith(prefix))
    return Missing(token, reason)


def cell(row, field):
    if row is None:
        return missing("not measured")
    if row["ok"]:
        return row[field]
    gap = missing(row["reason"])
    if pd.notna(row["ms"]) and pd.notna(row["peak_mb"]):
        gap.measured = f"measured {row['ms']:.2f} ms, {row['peak_mb']:.1f} MB"
    return gap


def fmt(value, kind):
    if isinstance(value, Missing):
        return value.token
    return f"{value:.{DECIMALS[kind]}f}"


def notes_for(table_rows, columns, where):
    """One note per distinct reason: the columns and points it blanks, and what a failed point measured."""
    groups = {}
    for key, row in zip(where, table_rows):
        for col, value in zip(columns, row):
            if isinstance(value, Missing):
                cols, points = groups.setdefault((value.token, value.reason), ({}, {}))
                cols[", ".join(col.header)] = True
                points.setdefault(key, value.measured or points.get(key, ""))
    notes = []
    for (token, reason), (cols, points) in groups.items():
        at = "; ".join(f"B={b} N={n} D={d}" + (f" ({m})" if m else "") for (b, n, d), m in points.items())
        notes.append(f"{token} = {reason}: {' / '.join(cols)} at {at}")
    return notes


def main_table(results):
    """The seed paper's main table, our sweep's seed grid: Maghoumi (our reimplementation), ours
    unfused and fused, and the fused saving over Maghoumi in MB and % (the seed paper's definition)."""
    pts = results.ours
    impls = [("maghoumi", "Maghoumi"), ("ours_unfused", "unfused"), ("ours_fused", "fused")]
    columns = [Column(["B"], "int"), Column(["N"], "int"), Column(["D"], "int")]
    columns += [Column([f"{name} MB"], "mb") for _, name in impls]
    columns += [Column([f"{name} ms"], "ms") for _, name in impls]
    columns += [Column(["fused saving MB"], "mb"), Column(["fused saving %"], "pct")]
    keys = results.grid("seed-grid")
    rows = []
    for b, n, d in keys:
        found = [find_point(pts, impl, b, n, d) for impl, _ in impls]
        mbs = [cell(r, "peak_mb") for r in found]
        mss = [cell(r, "ms") for r in found]
        saving = _saving(mbs[0], mbs[2])
        pct = saving if isinstance(saving, Missing) else 100.0 * saving / mbs[0]
        rows.append([b, n, d] + mbs + mss + [saving, pct])

    caption = (f"Absolute peak memory (MB) and runtime (ms) of forward + backward, float32, "
               f"gamma = {results.setting['gamma']}, from {results.sweep_csv.name} "
               f"on {results.meta['gpu']} (commit {results.meta['commit']}, {results.meta['date']}). "
               "Maghoumi = our reimplementation of Maghoumi's scheme; unfused / fused = ours (unfused: the whole step "
               "through a cost tensor). "
               "Fused saving = Maghoumi MB - fused MB, and that as % of Maghoumi MB.")
    notes = notes_for(rows, columns, keys)
    return Table("main", caption, columns, rows, notes)


def _saving(maghoumi_mb, fused_mb):
    for v in (maghoumi_mb, fused_mb):
        if isinstance(v, Missing):
            return v
    return maghoumi_mb - fused_mb


def comparison_columns(results):
    """(impl, header lines) in the order published, reproduced, ours, each naming its GPU."""
    h100, gpu = results.peer_gpu, results.meta["gpu"]
    spec = [("pub:maghoumi", "published", "GPU not stated"), ("peer:maghoumi", "original, re-run", h100),
            ("maghoumi", "our reimpl.", gpu), ("pub:bgu_unfused", "published", "GPU not stated"),
            ("peer:bgu_unfused", "re-run", h100), ("pub:bgu_fused", "published", "GPU not stated"),
            ("peer:bgu_fused", "re-run", h100), ("ours_unfused", "ours", gpu), ("ours_fused", "ours", gpu)]
    names = {"maghoumi": "Maghoumi", "bgu_unfused": "softdtw-cuda-torch unfused", "bgu_fused": "softdtw-cuda-torch fused",
             "ours_unfused": "unfused", "ours_fused": "fused"}
    return [(impl, [names[impl.split(":")[-1]], source, g]) for impl, source, g in spec]


def comparison_table(results, field):
    """Published versus reproduced versus ours on the seed paper's grid, for one field (peak_mb or ms)."""
    pts = results.all_points()
    cols = comparison_columns(results)
    unit = {"peak_mb": "mb", "ms": "ms"}[field]
    keys = list(dict.fromkeys(list(zip(results.published["B"], results.published["N"], results.published["D"]))
                              + results.grid("seed-grid")))
    columns = [Column(["B"], "int"), Column(["N"], "int"), Column(["D"], "int")]
    columns += [Column(header, unit) for _, header in cols]
    rows = [[b, n, d] + [cell(find_point(pts, impl, b, n, d), field) for impl, _ in cols] for b, n, d in keys]
    what = "Peak memory (MB)" if field == "peak_mb" else "Runtime (ms)"
    caption = (f"{what}, forward + backward, published versus reproduced versus ours, side by side: the columns "
               "were measured three ways and are never divided. "
               f"Published: {METHODS[PUBLISHED_METHOD]}. Re-run: on an {results.peer_gpu}, {METHODS[PEERS_METHOD]}. "
               f"Our reimpl. and ours: on {results.meta['gpu']} (commit {results.meta['commit']}, "
               f"{results.meta['date']}), {METHODS[SWEEP_METHOD]}, {results.meta['reps']} timed steps. "
               "Ratios measured one way: the originals tables.")
    return Table(f"compare_{'memory' if field == 'peak_mb' else 'runtime'}", caption, columns, rows,
                 notes_for(rows, columns, keys))


def _fastest(pts, bnd, field, impls):
    """min over impls of impl / ours fused (their fastest or smallest), or the reason none is left."""
    values, why = [], ""
    for impl in impls:
        v, reason = point_ratio(pts, impl, "step:ours_fused", bnd, field)
        if v is None:
            why = why or reason
        else:
            values.append(v)
    return min(values) if values else missing(why or "not measured")


def originals_table(results, field):
    """baselines/originals on every point it measured: one field per implementation, and ratios to ours
    fused computed within that file (one method): softdtw-cuda-torch fused's, and the best original's."""
    pts = results.all_points()
    unit = {"ms": "ms", "step_mb": "mb", "peak_mb": "mb"}[field]
    keys = list(dict.fromkeys(zip(results.originals["B"], results.originals["N"], results.originals["D"])))
    impls = [ORIGINALS_PREFIX + i for i in ORIGINALS]
    originals = [i for i in impls if not i.startswith("step:ours")]
    best = "fastest" if field == "ms" else "smallest"
    columns = [Column(["B"], "int"), Column(["N"], "int"), Column(["D"], "int")]
    columns += [Column([LABELS[i]], unit) for i in impls]
    columns += [Column(["softdtw-cuda-torch fused", "/ ours fused"], "x"), Column([f"{best} original", "/ ours fused"], "x")]
    rows = []
    for bnd in keys:
        row = list(bnd) + [cell(find_point(pts, impl, *bnd), field) for impl in impls]
        v, why = point_ratio(pts, "step:sdtw_cuda_torch_fused", "step:ours_fused", bnd, field)
        row += [v if v is not None else missing(why), _fastest(pts, bnd, field, originals)]
        rows.append(row)
    m = results.originals_source
    what = {"ms": "Median step time (ms)", "step_mb": "Step memory (MB: peak minus what was allocated just before "
            "the step)", "peak_mb": "Absolute peak memory (MB: max_memory_allocated from the point's start, the seed "
            "paper's number)"}[field]
    method = METHODS.get(results.originals["method"].iloc[0], results.originals["method"].iloc[0])
    caption = (f"{what}, forward + backward of sum(sdtw(x, y)), float32, every implementation measured one way "
               f"({method}) on {m.gpu} ({m.commit_text()}, {m.date}, {m.name}). "
               f"Ratios: that implementation / ours fused, both from this file; {best} original = the {best} of "
               "the four original codes that ran at that point.")
    name = {"ms": "originals_runtime", "step_mb": "originals_step_memory", "peak_mb": "originals_peak_memory"}[field]
    return Table(name, caption, columns, rows, notes_for(rows, columns, keys))


def to_markdown(table):
    head = [" ".join(c.header) if len(c.header) == 1 else "<br>".join(c.header) for c in table.columns]
    lines = [f"**{table.caption}**", "", "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    lines += ["| " + " | ".join(fmt(v, c.kind) for v, c in zip(row, table.columns)) + " |" for row in table.rows]
    if table.notes:
        lines += [""] + [f"- {n}" for n in table.notes]
    return "\n".join(lines) + "\n"


def _tex(text):
    for a, b in [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("—", "---"), ("<=", r"$\le$"), (">", r"$>$"), ("·", r"$\cdot$")]:
        text = text.replace(a, b)
    return text


def to_latex(table):
    head = [_tex(c.header[0]) if len(c.header) == 1 else r"\shortstack[r]{" + r" \\ ".join(map(_tex, c.header)) + "}"
            for c in table.columns]
    lines = [r"% needs \usepackage{booktabs,graphicx}", r"\begin{table*}[t]", r"\centering", r"\footnotesize",
             f"\\caption{{{_tex(table.caption)}}}", f"\\label{{tab:{table.name}}}",
             r"\resizebox{\textwidth}{!}{\begin{tabular}{" + "r" * len(head) + "}", r"\toprule",
             " & ".join(head) + r" \\", r"\midrule"]
    lines += [" & ".join(_tex(fmt(v, c.kind)) for v, c in zip(row, table.columns)) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}}"]
    if table.notes:
        lines += [r"\par\smallskip\begin{minipage}{\linewidth}\scriptsize"]
        lines += [_tex(n) + r"\par" for n in table.notes]
        lines += [r"\end{minipage}"]
    lines += [r"\end{table*}"]
    return "\n".join(lines) + "\n"


def all_tables(results):
    tables = [main_table(results)]
    if not results.published.empty or not results.peers.empty:
        tables += [comparison_table(results, "peak_mb"), comparison_table(results, "ms")]
    if not results.originals.empty:
        tables += [originals_table(results, f) for f in ("ms", "step_mb", "peak_mb")]
    return tables


def write_tables(results, out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = all_tables(results)
    for t in tables:
        (out_dir / f"{t.name}.md").write_text(to_markdown(t))
        (out_dir / f"{t.name}.tex").write_text(to_latex(t))
    return tables
