"""paper/report.md: each claim stated with the numbers computed here from the results, and the
figure or table that shows them; regenerated with the tables, so it cannot drift from the data."""
from data import label, point_ratio
from tables import to_markdown


def _fmt(x):
    return f"{x:.2g}" if x < 10 else f"{x:.0f}"


def every_point(results):
    """Every (B, N, D) of our sweep: seed grid, length and dimension sweeps."""
    return list(dict.fromkeys(zip(results.square["B"], results.square["N"], results.square["D"])))


def _range(values):
    """min-max of (value, where) pairs, as text naming where each end is."""
    lo, hi = min(values), max(values)
    return f"{_fmt(lo[0])}× ({lo[1]}) to {_fmt(hi[0])}× ({hi[1]})"


def _where(bnd):
    return "B={} N={} D={}".format(*bnd)


def ratios(results, base, field, keys):
    pts = results.all_points()
    out = []
    for bnd in keys:
        v, _ = point_ratio(pts, base, "ours_fused", bnd, field)
        if v is not None:
            out.append((v, _where(bnd)))
    return out


def claim_length(results):
    ours = results.ours[results.ours["impl"].str.startswith("ours")]
    passed = ours[ours["ok"]]
    text = [f"Ours (fused and unfused) passed verification against the float64 reference at {len(passed)} of "
            f"{len(ours)} points of the sweep, up to N = M = {passed['N'].max() if len(passed) else 'none'} "
            "(the longest length in this sweep)."]
    for r in ours[~ours["ok"]].itertuples():
        text.append(f"Not passed: {label(r.impl)} at {_where((r.B, r.N, r.D))}: {r.reason}.")
    pts = results.all_points()
    for impl in ["maghoumi", "peer:maghoumi", "peer:bgu_unfused"]:
        bad = pts[(pts["impl"] == impl) & ~pts["ok"] & ~pts["reason"].str.startswith("failed")
                  & ~pts["reason"].str.startswith("not measured")]
        if len(bad):
            first = bad.sort_values("N").iloc[0]
            text.append(f"{label(impl)} ({first['gpu']}) does not run from N = {bad['N'].min()}: {first['reason']}.")
    return ("Tiled kernels: any length", text, ["figures/length.png", "figures/seed_grid.png", "tables/main.md",
                                                      "tables/compare_runtime.md"])


def claim_accuracy(results):
    text = []
    acc = results.accuracy
    if acc is not None:
        text.append("Relative L2 error of the gradient w.r.t. x against the float64 reference, float32 inputs, "
                    f"B = {', '.join(map(str, sorted(set(acc['B']))))}, D = {', '.join(map(str, sorted(set(acc['D']))))} "
                    "(`sdtw-bench check --accuracy-csv`):")
        for impl in dict.fromkeys(acc["impl"]):
            rows = acc[(acc["impl"] == impl) & acc["ok"]]
            if len(rows):
                worst = rows.loc[rows["grad_err"].idxmax()]
                text.append(f"{label(impl)}: largest gradient error {worst['grad_err']:.3g} (N = {worst['N']}, "
                            f"gamma = {worst['gamma']:g}) over N in {{{', '.join(map(str, sorted(set(rows['N']))))}}}"
                            f" and gamma in {{{', '.join(f'{g:g}' for g in sorted(set(rows['gamma']), reverse=True))}}}.")
    if results.peer_accuracy is not None:
        peers = results.peer_accuracy[results.peer_accuracy["ok"]]
        worst = peers.loc[peers["grad_err"].idxmax()]
        text.append(f"The original codes (DESIGN.md §3): up to {worst['grad_err']:.2g} ({label(worst['impl'])}, "
                    f"N = {worst['N']}, gamma = {worst['gamma']:g}).")
    ours = results.ours[results.ours["impl"].str.startswith("ours") & results.ours["ok"]]
    sweep = results.square.loc[results.square["impl"].str.startswith("ours") & (results.square["disposition"] == "passed")]
    if len(ours) and sweep["grad_err"].notna().any():
        text.append(f"In the sweep, every passed point of ours has gradient error <= {sweep['grad_err'].max():.2g} "
                    f"(tolerance {sweep['grad_tol'].max():g}).")
    return ("Stable and accurate backward", text, ["figures/grad_error.png"])


def claim_memory(results):
    keys = every_point(results)
    text = []
    pct = [(100 * (1 - 1 / v), w) for v, w in ratios(results, "maghoumi", "peak_mb", keys)]
    if pct:
        lo, hi = min(pct), max(pct)
        text.append(f"Ours fused uses {lo[0]:.1f}% ({lo[1]}) to {hi[0]:.1f}% ({hi[1]}) less peak memory than "
                    "Maghoumi's scheme (our reimplementation, same GPU) where that passes.")
    for base in ["peer:bgu_fused", "peer:bgu_unfused", "ours_unfused"]:
        r = ratios(results, base, "peak_mb", keys)
        if r:
            text.append(f"Against {label(base)}: {_range(r)} smaller.")
    return ("Fused memory savings", text, ["tables/main.md", "tables/compare_memory.md", "figures/speedup.png",
                                           "figures/seed_grid.png", "figures/length.png", "figures/dimension.png"])


def claim_speed(results):
    keys = every_point(results)
    text = []
    for base in ["peer:bgu_fused", "peer:bgu_unfused", "peer:maghoumi", "maghoumi", "ours_unfused"]:
        r = ratios(results, base, "ms", keys)
        if r:
            slower = [w for v, w in r if v < 1]
            text.append(f"Ours fused against {label(base)}: speed-up {_range(r)}"
                        + (f"; below 1 (ours fused slower) at {', '.join(slower)}." if slower
                           else "; faster at every point both ran."))
    return ("Speed", text, ["tables/compare_runtime.md", "figures/speedup.png", "figures/seed_grid.png",
                            "figures/length.png"])


def build(results, tables, captions, sources):
    m = results.meta
    lines = ["# What the results show", "",
             "Generated by `python3 paper/make_paper.py` from " + ", ".join(f"`{s}`" for s in sources)
             + f"; our sweep ran on {m['gpu']} (driver {m['driver']}, torch {m['torch']}), commit {m['commit']}, "
             f"{m['date']}. Do not edit by hand: change the data or the scripts and regenerate.", "",
             f"Ratios are baseline / ours fused at gamma = {results.setting['gamma']:g}, over every (B, N, D) of our "
             "sweep (the seed paper's grid, the length and the dimension sweeps) where both ran and passed, on the "
             "same GPU model; the published numbers (GPU not stated) are only compared in the tables.", ""]
    for i, claim in enumerate([claim_length, claim_accuracy, claim_memory, claim_speed], 1):
        title, text, evidence = claim(results)
        lines += [f"## {i}. {title}", ""] + [f"- {t}" for t in text]
        lines += ["", "Supported by: " + ", ".join(f"[{e}]({e})" for e in evidence), ""]
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
