"""features.md from features.csv and its sidecar: cdist throughput, barycenter time per iteration against
softdtw-cuda-torch, the features' targets with met or not met, and how it was all measured.

    PYTHONPATH=harness/python python3 pytorch/bench/features_report.py results/h100/features.csv > features.md
"""
import sys

import sdtw_results
from step_report import _f, _num, provenance

# features.csv's columns after the common ones (mode is cdist or barycenter; B is cdist's B1).
EXTRA_COLUMNS = (
    "B2 iterations lr pairs_per_s ms_per_iter baseline_time_ms_median baseline_time_ms_p10 baseline_time_ms_p90 "
    "baseline_ms_per_iter ratio objective baseline_objective objective_rel_diff target target_met "
    "baseline_disposition baseline_message baseline_unfused_time_ms_median baseline_unfused_time_ms_p10 "
    "baseline_unfused_time_ms_p90 baseline_unfused_ms_per_iter baseline_unfused_ratio baseline_unfused_objective "
    "baseline_unfused_objective_rel_diff baseline_unfused_disposition baseline_unfused_message"
).split()
COLUMNS = sdtw_results.header(EXTRA_COLUMNS)
BASELINE = "softdtw-cuda-torch"
# The baseline's barycenter in both of its modes: (column prefix, its `fused` keyword). None is its default,
# which picks the fused mode on CUDA; its unfused mode builds the cost matrix first.
BASELINE_MODES = (("baseline_", None), ("baseline_unfused_", False))
BASELINE_LABEL = {"baseline_": f"{BASELINE} (default, fused)", "baseline_unfused_": f"{BASELINE} (unfused)"}
# Where each mode's ratio and objective difference to ours go: the default's in the bare ratio columns.
RATIO_PREFIX = {"baseline_": "", "baseline_unfused_": "baseline_unfused_"}
# The barycenter limits, here so that features.py and the paper read one source.
RATIO_MIN, OBJECTIVE_REL_MAX = 20.0, 1e-3
WARMUP_ITERATIONS = 5
TIMERS = {"cuda-events": "CUDA events around each call", "wall-clock": "the wall clock around each call (CPU)"}


METHOD = {
    "cdist": "cdist: the warm-up is one untimed call of the same function; `cdist_soft_dtw(X, Y)` values only "
             "under `torch.no_grad`; "
             "pairs/s = B1 x B2 / median; verified on a random sample of pairs against `soft_dtw` in float64 on the "
             "CPU (largest |error| over largest |value|).",
    "barycenter": f"Barycenter: the warm-up call runs {WARMUP_ITERATIONS} iterations, the timed calls the iterations "
                  f"given per point; `softdtw_barycenter` with early stopping off, ours and {BASELINE}'s in both of its "
                  "modes (its default `fused=None`, fused on CUDA, and `fused=False`, unfused) on the same data and "
                  "settings in the same process; ms per iteration = call / iterations; objective = mean "
                  "soft-DTW of the result to the series, float64 on the CPU.",
}


def method_text(meta, kinds=tuple(METHOD)):
    """How the points of a run (its metadata) were measured, for the kinds named."""
    timer = TIMERS.get(meta.get("timer"), meta.get("timer", "?"))
    return " ".join([f"One Python process; per point and implementation one untimed warm-up call, then {timer}, "
                     f"median of {meta.get('reps', '?')} calls (p10-p90 beside it, nearest rank: with few calls, "
                     "the fastest and the slowest)."] + [METHOD[k] for k in kinds])


def where(row):
    if row["mode"] == "cdist":
        return f"cdist {row['B']} x {row['B2']} pairs, N = M = {row['N']}, D = {row['D']}"
    return f"barycenter of {row['B']} series, N = {row['N']}, D = {row['D']}, {row['iterations']} iterations"


def met_word(target_met):
    """A target_met cell (yes / no / anything else) in words: features.md, the paper's text and figures."""
    return {"yes": "met", "no": "not met"}.get(target_met, "not measured")


def target_line(row):
    got = (f"{_f(_num(row, 'time_ms_median'))} ms" if row["mode"] == "cdist" else
           f"{_f(_num(row, 'ratio'))}x faster per iteration, objective rel. diff. "
           f"{_f(_num(row, 'objective_rel_diff'))}")
    verdict = met_word(row["target_met"])
    verdict = f"**{verdict}**" if row["target_met"] in ("yes", "no") else verdict
    return f"- {where(row)}: target {row['target']}; measured {got}: {verdict}"


def status(row, prefix=""):
    disposition = row.get(prefix + "disposition", "")
    return "ok" if disposition == "passed" else disposition or "-"


def cdist_table(rows):
    lines = ["| B1 x B2 | N = M | D | ms (p10-p90) | pairs/s | verified | max rel. err | check |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['B']} x {r['B2']} | {r['N']} | {r['D']} | {_f(_num(r, 'time_ms_median'))} "
                     f"({_f(_num(r, 'time_ms_p10'))}-{_f(_num(r, 'time_ms_p90'))}) | {_f(_num(r, 'pairs_per_s'))} | "
                     f"{r['verified'] or '-'} | {_f(_num(r, 'value_err'), 2)} | {status(r)} |")
    return lines


def comparable_ratio(row, prefix=""):
    """The time ratio, which features.py writes only where both objectives agree within
    OBJECTIVE_REL_MAX (the two ran the same problem to the same answer); otherwise why there is none."""
    diff = _num(row, prefix + "objective_rel_diff")
    if diff <= OBJECTIVE_REL_MAX:
        return _f(_num(row, prefix + "ratio"))
    if diff > OBJECTIVE_REL_MAX:
        return f"- (objectives differ by {_f(diff, 2)})"
    return "-"


def barycenter_table(rows):
    """ours against each mode of the baseline: its ms per iteration, the ratio, its objective's difference."""
    head = ["B", "N", "D", "iterations", "ours ms/iter", "objective ours"]
    for p, _ in BASELINE_MODES:
        head += [f"{BASELINE_LABEL[p]} ms/iter", "ratio", "rel. diff"]
    head += ["ours"] + [BASELINE_LABEL[p] for p, _ in BASELINE_MODES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["B"], r["N"], r["D"], r["iterations"], _f(_num(r, "ms_per_iter")), _f(_num(r, "objective"), 7)]
        for p, _ in BASELINE_MODES:
            q = RATIO_PREFIX[p]
            cells += [_f(_num(r, p + "ms_per_iter")), comparable_ratio(r, q), _f(_num(r, q + "objective_rel_diff"), 2)]
        cells += [status(r)] + [status(r, p) for p, _ in BASELINE_MODES]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return lines


def markdown(rows, meta):
    rows = [{k: ("" if r.get(k) is None else str(r.get(k))) for k in COLUMNS} for r in rows]
    lines = ["# Pairwise soft-DTW and barycenters (pytorch/bench/features.py)", "",
             f"{provenance(meta)}. Method: " + method_text(meta), "", "Targets (stated for the H100):", ""]
    targets = [r for r in rows if r["target"]]
    lines += [target_line(r) for r in targets] or ["- none of the target points is in this run"]
    for kind, table in (("cdist", cdist_table), ("barycenter", barycenter_table)):
        mine = [r for r in rows if r["mode"] == kind]
        if mine:
            lines += ["", f"## {kind}", ""] + table(mine)
    errors = [(r, p) for r in rows for p in ("", *(p for p, _ in BASELINE_MODES)) if r[p + "message"]]
    if errors:
        lines += ["", "Not measured or failed:", ""] + [
            f"- {where(r)}, {BASELINE_LABEL.get(p, 'ours')}: {r[p + 'disposition']}: "
            f"{r[p + 'message']}" for r, p in errors]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    rows, sidecar = sdtw_results.read_results(sys.argv[1])
    sys.stdout.write(markdown(rows, (sidecar or {}).get("metadata", {})))
