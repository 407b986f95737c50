"""paper/report.md: each claim stated with the numbers computed here from the results, and the
figure or table that shows them; regenerated with the tables, so it cannot drift from the data.
Every ratio is taken between two points of one file measured one way (data.point_ratio refuses
anything else), and each claim names that file and method."""
from data import (METHODS, OBJECTIVE_REL_MAX, ORIGINALS, ORIGINALS_GRAD_TOL, SWEEP_METHOD, UNFUSED_MEANS, label,
                  met_word, objectives_agree, objectives_apart, point_ratio)
from sources import CODE_PATHS_TEXT
from tables import to_markdown

OURS_STEP = "step:ours_fused"


def _fmt(x):
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def every_point(points):
    """Every (B, N, D) of a table of points, in its order."""
    return list(dict.fromkeys(zip(points["B"], points["N"], points["D"])))


def _range(values):
    """min-max of (value, where) pairs, as text naming where each end is."""
    lo, hi = min(values), max(values)
    return f"{_fmt(lo[0])}× ({lo[1]}) to {_fmt(hi[0])}× ({hi[1]})"


def _where(bnd):
    return "B={} N={} D={}".format(*bnd)


def ratios(results, base, ours, field, keys):
    pts = results.all_points()
    out = []
    for bnd in keys:
        v, _ = point_ratio(pts, base, ours, bnd, field)
        if v is not None:
            out.append((v, _where(bnd)))
    return out


def sweep_source(results):
    return f"`{results.sweep_csv.name}`, {METHODS[SWEEP_METHOD]}"


def originals_source(results):
    methods = sorted(set(results.originals["method"]))
    s = results.originals_source
    return f"`{s.name}` ({s.gpu}, {s.commit_text()}), " + "; ".join(METHODS.get(m, m) for m in methods)


# The optional results files: what writes each, and the command that does.
OPTIONAL = {"originals": ("baselines/originals", "`python3 -m baselines.originals --peers DIR --out results/<gpu>` on "
                          "a GPU (baselines/originals/README.md)"),
            "features": ("pytorch/bench/features.py",
                         "`python3 pytorch/bench/features.py --out results/<gpu> --peers DIR` on a GPU")}


def missing(results, which, claim):
    """The note standing for the claims of an absent optional file (OPTIONAL): what is not claimed, and
    how to make the file."""
    path = getattr(results, which + "_csv")
    made_by, command = OPTIONAL[which]
    name = f"`{path.name}`" if path else f"the {which} file"
    return [f"**Not measured yet:** {name} ({made_by}) is absent, so {claim}. It is written by {command}."]


def claim_length(results):
    ours = results.ours[results.ours["impl"].str.startswith("ours")]
    passed = ours[ours["ok"]]
    text = [f"Ours (fused and unfused) passed verification against the float64 reference at {len(passed)} of "
            f"{len(ours)} points of the sweep ({sweep_source(results)}), up to N = M = "
            f"{passed['N'].max() if len(passed) else 'none'} (the longest length in this sweep)."]
    for r in ours[~ours["ok"]].itertuples():
        text.append(f"Not passed: {label(r.impl)} at {_where((r.B, r.N, r.D))}: {r.reason}.")
    text += subsampled(results.square, sweep_source(results))
    pts = results.all_points()
    impls = ["maghoumi"] + (["step:" + i for i in ORIGINALS if not i.startswith("ours")]
                            if not results.originals.empty else ["peer:maghoumi", "peer:bgu_unfused"])
    for impl in impls:
        # Points never attempted (not measured, or a run's budget spent) say nothing about lengths.
        reason = pts["reason"].fillna("")
        tried = pts[(pts["impl"] == impl) & ~reason.str.startswith("not measured") & ~reason.str.contains("not run:")]
        bad = tried[~tried["ok"] & ~tried["reason"].fillna("").str.startswith("failed")]
        if len(bad):
            first = bad.sort_values("N").iloc[0]
            source = originals_source(results) if impl.startswith("step:") else sweep_source(results)
            passed_n = tried.loc[tried["ok"], "N"]
            if passed_n.empty or passed_n.max() < first["N"]:
                what = f"does not run from N = {first['N']}"
            else:
                what = (f"fails at N = {', '.join(str(n) for n in sorted(set(bad['N'])))} but passes up to "
                        f"N = {passed_n.max()}")
            text.append(f"{label(impl)} ({first['gpu']}; {source}) {what}: {first['reason']}.")
    if results.originals_rows is not None:
        text += subsampled(results.originals_rows, originals_source(results))
    if not results.originals.empty:
        step = results.originals[results.originals["impl"].str.startswith("step:ours") & results.originals["ok"]]
        if len(step):
            text.append(f"Through the Python package (`{results.originals_csv.name}`), ours passed at "
                        f"{len(step)} points up to N = {step['N'].max()}.")
    return ("Tiled kernels: any length", text, ["figures/length.png", "figures/seed_grid.png", "tables/main.md",
                                                      "tables/compare_runtime.md"])


def subsampled(rows, source):
    """Where verification checked only some pairs (the `verified` column says "(subsample)"), said per point."""
    sub = rows[rows["verified"].str.contains("subsample", na=False)]
    if sub.empty:
        return []
    where = {}
    for r in sub.itertuples():
        where.setdefault(f"{_where((r.B, r.N, r.D))}: {r.verified}", None)
    return [f"Verified on a subsample of the pairs, not all ({source}, column `verified`): " + "; ".join(where) + "."]


def seeds_per_cell(acc):
    """"k seed(s)" per (implementation, N, gamma) cell of the accuracy file, as a range when they differ."""
    counts = acc.groupby(["impl", "N", "gamma"])["seed"].nunique()
    lo, hi = int(counts.min()), int(counts.max())
    return f"{lo} seed{'s' if hi > 1 else ''}" if lo == hi else f"{lo} to {hi} seeds"


def known_worst(results):
    """The kernels' accuracy grid: its worst own error, and the known worst input with both errors."""
    grid, s = results.accuracy_grid, results.accuracy_grid_source
    if grid is None:
        return []
    where = f"`{s.name}` ({s.gpu}, {s.commit_text()}; the kernels' AccuracyGrid test)"
    text = []
    for name, rows in grid.groupby("grid", sort=False):
        worst = rows.loc[rows["grad_err_end_to_end"].idxmax()]
        own = rows.loc[rows["grad_err"].idxmax()]
        text.append(f"Kernels' accuracy grid `{name}` ({where}; {rows['seed'].nunique()} seed(s): "
                    f"{', '.join(map(str, sorted(set(rows['seed']))))}): the worst end-to-end gradient error is "
                    f"{worst['grad_err_end_to_end']:.3g} (N = {worst['N']}, gamma = {worst['gamma']:g}, seed "
                    f"{worst['seed']}), against the float64 reference on the float64 cost; there the kernels' own error "
                    f"(against the float64 reference on the same float32 cost) is {worst['grad_err']:.3g}, and the "
                    f"float32 cost alone moves the reference by {worst['grad_err_cost_only']:.3g}. The largest own "
                    f"error is {own['grad_err']:.3g} (N = {own['N']}, gamma = {own['gamma']:g}); tolerance "
                    f"{rows['grad_tol'].max():g} on the own error.")
    return text


def claim_accuracy(results):
    text = []
    acc = results.accuracy
    if acc is not None:
        s = results.accuracy_source
        text.append("Relative L2 error of the gradient against the float64 reference, float32 inputs, "
                    f"B = {', '.join(map(str, sorted(set(acc['B']))))}, D = {', '.join(map(str, sorted(set(acc['D']))))}"
                    f", each (implementation, N, gamma) cell {seeds_per_cell(acc)} (`{s.name}`, `sdtw-bench check "
                    f"--accuracy-csv`, {s.gpu}, {s.commit_text()}); the largest over its seeds:")
        for impl in dict.fromkeys(acc["impl"]):
            rows = acc[(acc["impl"] == impl) & acc["ok"]]
            if len(rows):
                worst = rows.loc[rows["grad_err"].idxmax()]
                text.append(f"{label(impl)}: largest gradient error {worst['grad_err']:.3g} (N = {worst['N']}, "
                            f"gamma = {worst['gamma']:g}) over N in {{{', '.join(map(str, sorted(set(rows['N']))))}}}"
                            f" and gamma in {{{', '.join(f'{g:g}' for g in sorted(set(rows['gamma']), reverse=True))}}}.")
    text += known_worst(results)
    if results.peer_accuracy is not None:
        peers = results.peer_accuracy[results.peer_accuracy["ok"]]
        worst = peers.loc[peers["grad_err"].idxmax()]
        text.append(f"The original codes (`{results.peer_accuracy_csv.name}`, as docs/DESIGN.md §3.1 tabulates them; the file "
                    f"states neither GPU nor B and D): up to {worst['grad_err']:.2g} ({label(worst['impl'])}, "
                    f"N = {worst['N']}, gamma = {worst['gamma']:g}).")
    rows = results.originals_rows
    if rows is not None:
        gamma = ", ".join(f"{g:g}" for g in sorted(set(rows["gamma"])))
        text.append(f"Every point of {originals_source(results)} (gamma = {gamma}), judged against the gradient "
                    f"tolerance of its row (where the file states none: {ORIGINALS_GRAD_TOL:g}, the one ours meets); "
                    "a row over it is failed, and no ratio is taken with it:")
        for impl in dict.fromkeys(rows["impl"]):
            mine = rows[(rows["impl"] == impl) & rows["grad_err"].notna()]
            if len(mine):
                worst = mine.loc[mine["grad_err"].idxmax()]
                over = mine[mine["disposition"] == "failed"]
                text.append(f"{label('step:' + impl)}: {len(mine) - len(over)} of the {len(mine)} rows that ran are "
                            f"within the tolerance; largest gradient error {worst['grad_err']:.3g} at "
                            f"{_where((worst['B'], worst['N'], worst['D']))}.")
    ours = results.ours[results.ours["impl"].str.startswith("ours") & results.ours["ok"]]
    sweep = results.square.loc[results.square["impl"].str.startswith("ours") & (results.square["disposition"] == "passed")]
    if len(ours) and sweep["grad_err"].notna().any():
        text.append(f"In the sweep ({sweep_source(results)}), every passed point of ours has gradient error <= "
                    f"{sweep['grad_err'].max():.2g} "
                    f"(tolerance {sweep['grad_tol'].max():g}).")
    return ("Stable and accurate backward", text, ["figures/grad_error.png"])


def against_originals(results, parts):
    """For each (intro, field, what): the intro, then one line per original with its field / ours
    fused's over every point of the originals file; or the note that the file is absent."""
    if results.originals.empty:
        return missing(results, "originals", "no ratio against the original codes is claimed here")
    keys = every_point(results.originals)
    text = [f"Ours fused against the original codes, one file measured one way ({originals_source(results)}); "
            f"ours there is the code at {results.originals_source.commit_text()}, which may differ from the "
            "sweep's."]
    for intro, field, what in parts:
        text.append(intro)
        for impl in ORIGINALS:
            r = ratios(results, "step:" + impl, OURS_STEP, field, keys) if not impl.startswith("ours") else []
            if r:
                text.append(f"Against {label('step:' + impl)}: {what} {_range(r)}.")
    return text


def claim_memory(results):
    keys = every_point(results.square)
    text = [f"Ours against our reimplementation of Maghoumi's scheme and against our own unfused path, one file "
            f"measured one way ({sweep_source(results)}):"]
    for field, what in (("peak_mb", "absolute peak"), ("step_mb", "step memory (peak minus what was allocated "
                                                                "just before the step)")):
        pct = [(100 * (1 - 1 / v), w) for v, w in ratios(results, "maghoumi", "ours_fused", field, keys)]
        if pct:
            lo, hi = min(pct), max(pct)
            text.append(f"{what.capitalize()}: ours fused uses {lo[0]:.1f}% ({lo[1]}) to {hi[0]:.1f}% ({hi[1]}) "
                        "less than Maghoumi's scheme (our reimplementation, same GPU) where that passes.")
        r = ratios(results, "ours_unfused", "ours_fused", field, keys)
        if r:
            larger = [w for v, w in r if v < 1]
            text.append(f"{what.capitalize()}, against {label('ours_unfused')}: {_range(r)} smaller"
                        + (f"; below 1 (ours fused larger) at {', '.join(larger)}." if larger else "."))
    text += against_originals(results, [
        ("Step memory (peak minus what was allocated just before the step), original / ours fused:", "step_mb",
         "step memory"),
        ("Absolute peak (`max_memory_allocated` from the point's start, inputs and workspaces included: the seed "
         "paper's number), original / ours fused; at the smallest points fixed allocations (inputs, and cuBLAS "
         "workspaces where a code runs matmuls) make most of a peak, so the largest of "
         "these ratios say little about the DP:",
         "peak_mb", "absolute peak")])
    extra = [] if results.originals.empty else ["tables/originals_step_memory.md", "tables/originals_peak_memory.md"]
    return ("Fused memory savings", text, ["tables/main.md"] + extra + ["tables/compare_memory.md", "figures/speedup.png"])


# A median this many times its run's p10 is set by the host (launch jitter), not the kernels.
JITTER = 1.5


def jittery(square, impls):
    """The points of the sweep where a passed row of impls has median / p10 > JITTER."""
    rows = square[square["impl"].isin(impls) & (square["disposition"] == "passed")]
    rows = rows[rows["time_ms_median"] > JITTER * rows["time_ms_p10"]]
    return [_where(k) for k in dict.fromkeys(zip(rows["B"], rows["N"], rows["D"]))]


def claim_speed(results):
    keys = every_point(results.square)
    text = [f"Ours fused against our reimplementation of Maghoumi's scheme and our own unfused path "
            f"({sweep_source(results)}):"]
    for base in ["maghoumi", "ours_unfused"]:
        r = ratios(results, base, "ours_fused", "ms", keys)
        if r:
            slower = [w for v, w in r if v < 1]
            text.append(f"Against {label(base)}: speed-up {_range(r)}"
                        + (f"; below 1 (ours fused slower) at {', '.join(slower)}." if slower
                           else "; faster at every point both ran."))
    noisy = jittery(results.square, ["ours_fused", "ours_unfused", "maghoumi"])
    if noisy:
        text.append(f"Host jitter: at {', '.join(noisy)} a median step is more than {JITTER:g}x its run's p10; "
                    "ratios at those points rest on the host more than on the kernels.")
    text += against_originals(results, [("Median step time, original / ours fused:", "ms", "speed-up")])
    extra = [] if results.originals.empty else ["tables/originals_runtime.md"]
    return ("Speed", text, ["tables/main.md"] + extra + ["tables/compare_runtime.md", "figures/speedup.png"])


def _features_where(r):
    batch = f"B1 = B2 = {r['B1']}" if r["kind"] == "cdist" else f"B = {r['B']}"
    return f"{batch}, N = {r['N']}, D = {r['D']}"


def not_passed(rows, prefix, who):
    return [f"{who} at {_features_where(r)}: {r[prefix + 'reason']}." for _, r in rows[~rows[prefix + "ok"]].iterrows()]


def claim_cdist(results):
    if results.features is None:
        return "Pairwise distances (cdist)", missing(results, "features", "no claim on cdist is made here"), []
    rows = results.features[results.features["kind"] == "cdist"]
    passed = rows[rows["ok"]]
    text = [f"`cdist_soft_dtw(X, Y)` of B1 x B2 pairs, values only, from {results.features_source_text('cdist')}"]
    for _, r in rows[rows["target"] != ""].iterrows():
        got = (f"{_fmt(r['ms'])} ms (p10-p90 {_fmt(r['p10_ms'])}-{_fmt(r['p90_ms'])}), "
               f"{r['pairs_per_s']:.3g} pairs/s" if r["ok"] else r["reason"])
        text.append(f"Target point {_features_where(r)}: {got}; target {r['target']}: "
                    f"**{met_word(r['target_met'])}**.")
    if len(passed):
        lo, hi = passed.loc[passed["pairs_per_s"].idxmin()], passed.loc[passed["pairs_per_s"].idxmax()]
        text.append(f"Over the {len(passed)} passed points: {lo['pairs_per_s']:.3g} pairs/s ({_features_where(lo)}) "
                    f"to {hi['pairs_per_s']:.3g} pairs/s ({_features_where(hi)}); sampled value error at most "
                    f"{passed['value_err'].max():.2g} (tolerance {passed['value_tol'].max():g}).")
    return "Pairwise distances (cdist)", text + not_passed(rows, "", "Not passed"), ["figures/cdist.png"]


# softdtw-cuda-torch's barycenter modes: the column prefix of each in the features table, and its words.
BARYCENTER_BASELINES = [("baseline_", "softdtw-cuda-torch in its default fused mode"),
                        ("unfused_", "softdtw-cuda-torch in its unfused mode")]


def claim_barycenter(results):
    if results.features is None:
        return "Barycenters", missing(results, "features", "no claim on barycenters is made here"), []
    rows = results.features[results.features["kind"] == "barycenter"]
    text = [f"`softdtw_barycenter`, ours and softdtw-cuda-torch's, in both of its modes, on the same data and "
            f"settings, from {results.features_source_text('barycenter')}"]
    for idx, r in rows[rows["target"] != ""].iterrows():
        got = []
        for p, who in BARYCENTER_BASELINES:
            if not (r["ok"] and r[p + "ok"]):
                got.append(f"{who}: no ratio (" + (r["reason"] if not r["ok"] else r[p + "reason"]) + ")")
                continue
            agree = objectives_agree(rows, p)[idx]
            got.append(f"{who} {_fmt(r[p + 'ms_per_iter'])} ms per iteration, "
                       + (f"ratio {_fmt(r[p + 'ratio'])}×" if agree else "no ratio (the objectives differ)")
                       + f", objective relative difference {r[p + 'objective_rel_diff']:.2g}")
        ours = f"ours {_fmt(r['ms_per_iter'])} ms per iteration; " if r["ok"] else ""
        text.append(f"Target point {_features_where(r)}, {r['iterations']} iterations: {ours}{'; '.join(got)}; "
                    f"target {r['target']} (against the default mode): **{met_word(r['target_met'])}**.")
    ours = rows[rows["ok"]]
    if len(ours):
        lo, hi = ours.loc[ours["ms_per_iter"].idxmin()], ours.loc[ours["ms_per_iter"].idxmax()]
        text.append(f"Ours over its {len(ours)} passed points: {_fmt(lo['ms_per_iter'])} ms per iteration "
                    f"({_features_where(lo)}) to {_fmt(hi['ms_per_iter'])} ({_features_where(hi)}).")
    for p, who in BARYCENTER_BASELINES:
        both = rows[objectives_agree(rows, p)]
        if len(both):
            ratio = [(r[p + "ratio"], _features_where(r)) for _, r in both.iterrows()]
            worst = both.loc[both[p + "objective_rel_diff"].idxmax()]
            text.append(f"Against {who}, where both ran and their objectives agree (relative difference <= "
                        f"{OBJECTIVE_REL_MAX:g}; {len(both)} points), its time per iteration / ours: {_range(ratio)}; "
                        f"objective relative difference at most {worst[p + 'objective_rel_diff']:.2g} "
                        f"({_features_where(worst)}).")
        for _, r in objectives_apart(rows, p).iterrows():
            text.append(f"No ratio against {who} at {_features_where(r)}: both ran, but the objectives differ by "
                        f"{r[p + 'objective_rel_diff']:.2g} (relative, over the limit {OBJECTIVE_REL_MAX:g}).")
    text += not_passed(rows, "", "Ours not passed")
    for p, who in BARYCENTER_BASELINES:
        text += not_passed(rows, p, f"{who} not measured")
    return "Barycenters", text, ["figures/barycenter.png"]


def sources_section(results):
    """Each file the claims come from: tool, commit and date, STALE when measured before the code changed."""
    lines = ["## Sources", "", "| file | tool | GPU | commit | date | command |", "|---|---|---|---|---|---|"]
    for s in results.sources:
        lines.append(f"| `{s.name}` | {s.tool} | {s.gpu} | {s.commit_text().replace('STALE', '**STALE**')}"
                     + (f" ({s.why_stale})" if s.stale else "") + f" | {s.date} | `{s.command}` |")
    return lines + [""]


def build(results, tables, captions, sources):
    m = results.meta
    stale = [s for s in results.sources if s.stale]
    lines = ["# What the results show", ""]
    if stale:
        lines += [f"**STALE:** {', '.join(f'`{s.name}`' for s in stale)} "
                  f"{'was' if len(stale) == 1 else 'were'} measured before the last change of the code they measure "
                  f"({CODE_PATHS_TEXT}): the claims drawn from them describe older code. "
                  "Run `scripts/reproduce.sh` to measure them again.", ""]
    lines += ["Generated by `python3 paper/make_paper.py` from " + ", ".join(f"`{s}`" for s in sources)
              + f"; our sweep ran on {m['gpu']} (driver {m['driver']}, CUDA {m['cuda']}, torch {m['torch']}), "
              f"commit {m['commit']}, {m['date']}. Do not edit by hand: change the data or the scripts and regenerate.",
              "", f"Words: {UNFUSED_MEANS}", "",
              f"Ratios are baseline / ours fused at gamma = {results.setting['gamma']:g}, taken only between two "
              "points of one file measured one way, on one GPU, where both ran and passed; each claim names its file "
              "and method. Numbers measured another way (the seed paper's published table, the original codes "
              "re-run in one process) are shown beside them in the comparison tables, never divided.", ""]
    lines += sources_section(results)
    claims = [claim_length, claim_accuracy, claim_memory, claim_speed, claim_cdist, claim_barycenter]
    # A claim links only the tables and figures this run made (a sweep without GPU rows draws fewer).
    made = {f"tables/{t.name}.md" for t in tables} | {f"figures/{name}.png" for name, _ in captions}
    for i, claim in enumerate(claims, 1):
        title, text, evidence = claim(results)
        evidence = [e for e in evidence if e in made]
        lines += [f"## {i}. {title}", ""] + [f"- {t}" for t in text] + [""]
        if evidence:
            lines += ["Supported by: " + ", ".join(f"[{e}]({e})" for e in evidence), ""]
    lines += ["## Tables", ""]
    for t in tables:
        lines += [f"### {t.name} ([Markdown](tables/{t.name}.md), [LaTeX](tables/{t.name}.tex))", "", to_markdown(t)]
    lines += ["## Figures", ""]
    for name, caption in captions:
        lines += [f"### {name}", "", f"![{name}](figures/{name}.png)", "",
                  f"{caption} ([PDF](figures/{name}.pdf))", ""]
    return "\n".join(lines).rstrip() + "\n"


def write_report(results, tables, captions, sources, path):
    text = build(results, tables, captions, sources)
    path.write_text(text)
    return text
