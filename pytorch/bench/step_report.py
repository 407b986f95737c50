"""step.md from step.csv and its sidecar: the step's times, launches and an account of its memory.

    PYTHONPATH=harness/python python3 pytorch/bench/step_report.py results/h100/step.csv > results/h100/step.md
"""
import sys

import sdtw_results

EAGER_OVER_GRAPH_MAX = 1.3
LAUNCHES_MAX = {"fused": 4, "unfused": 6}
BYTES_PER_CELL_MAX = {"fused": 4.5, "unfused": 12.5}  # at N >= 512
WARMUP, STEPS = 5, 30  # step.py's defaults; its rows record the counts they ran with (warmup, reps)


def _num(row, key):
    value = row.get(key, "")
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _f(value, digits=3):
    return "-" if value != value else f"{value:.{digits}g}"


REFERENCE_API = "torch-mse"
SECOND_ORDER_API = "module-double-backward"  # a Hessian-vector product through the loss: no bound here
DIST_API = "module-dist"  # the module's step once per named dist, fused, divided by squared Euclidean's
DISTS = ("sqeuclidean", "l1", "euclidean", "cosine", "negative_dot")
BOUND_POINTS = ((16, 128, 64), (32, 512, 64))  # eager / graph
COMPILE_BOUND_POINTS = ((16, 128, 64),)  # compile / graph


def account(row):
    """Bytes per cell live at the step's peak, as traced (step.py): the state (and values), the cost
    D and the alignment E of unfused mode, everything else, and the allocator's rounding (these sum
    to B/cell by construction); then the traced state less the workspace model (workspace_bytes), so
    a kernel workspace that differs from its model shows. Rows from before the trace had the model
    state + 4 B (D) + 4 B (E) in unfused mode instead, and no traced state to compare."""
    if row.get("disposition", "passed") != "passed":  # nothing was measured
        return [float("nan")] * 6
    parts = [_num(row, f"peak_{p}_bpc") for p in ("state", "cost", "alignment", "other", "rounding")]
    if any(v != v for v in parts):
        state = _num(row, "state_bytes_per_cell")
        cost = alignment = 4.0 if row["mode"] == "unfused" else 0.0
        return [state, cost, alignment, float("nan"), float("nan"), float("nan")]
    return parts + [parts[0] - _num(row, "state_bytes_per_cell")]


def bytes_per_cell(row):
    """(peak - x/y-shaped bytes) / cells from the exact byte counts when the row has them; the column
    itself only for rows without them (old rows wrote it to 4 digits, which can round a value just
    over a bound onto it)."""
    step, xy = _num(row, "step_bytes"), _num(row, "xy_bytes")
    if step == step and xy == xy:
        return (step - xy) / (int(row["B"]) * int(row["N"]) * int(row["M"]))
    return _num(row, "bytes_per_cell")


def _point(row):
    return int(row["B"]), int(row["N"]), int(row["D"])


def verdicts(row):
    n, mode = int(row["N"]), row["mode"]
    if row.get("api") == SECOND_ORDER_API:
        disposition = row.get("disposition", "passed")
        return "stated, no bound (second order)" if disposition == "passed" else disposition
    out = []
    if _num(row, "launches") > LAUNCHES_MAX[mode]:
        out.append(f"launches > {LAUNCHES_MAX[mode]}")
    if n >= 512 and bytes_per_cell(row) > BYTES_PER_CELL_MAX[mode]:
        out.append(f"B/cell > {BYTES_PER_CELL_MAX[mode]}")
    if _point(row) in BOUND_POINTS and _num(row, "eager_over_graph") > EAGER_OVER_GRAPH_MAX:
        out.append(f"eager/graph > {EAGER_OVER_GRAPH_MAX}")
    if _point(row) in COMPILE_BOUND_POINTS and _num(row, "compile_over_graph") > EAGER_OVER_GRAPH_MAX:
        out.append(f"compile/graph > {EAGER_OVER_GRAPH_MAX}")
    if row.get("disposition", "passed") != "passed":
        out.append(row["disposition"])
    timed = _point(row) in BOUND_POINTS or _point(row) in COMPILE_BOUND_POINTS
    return ", ".join(out) or ("ok" if timed else "ok (no time bound here)")


def eager_minus_graph(row):
    """ms the eager step spends beyond its graph replay: the host's part of the step."""
    return _num(row, "time_ms_median") - _num(row, "graph_ms")


def counts(row):
    """The method text's warm-up and timed-step counts, from the row (step.py records them) or said to be
    missing (older rows)."""
    if not (row.get("warmup") and row.get("reps")):
        return (f"the warm-up and timed-step counts are not recorded in this file (step.py's defaults: {WARMUP} "
                f"untimed warm-up steps, then {STEPS} timed)")
    return (f"per point, eager, graph and compile each run {row['warmup']} untimed warm-up steps (graph: after 3 "
            f"steps on a side stream and the capture; compile: at least 3), then {row['reps']} timed steps")


def reference_table(rows):
    """torch's own mse_loss through the same step: what this host's autograd engine, CUDA graph
    replay and torch.compile cost a loss with next to no GPU work."""
    refs = [r for r in rows if r.get("api") == REFERENCE_API]
    if not refs:
        return []
    lines = [
        "",
        "## The same step with torch's own loss",
        "",
        "`torch.nn.functional.mse_loss(x, y, reduction='none').sum((1, 2))` in place of soft-DTW, by the same "
        "method, in the same process: a loss with almost no GPU work, so its eager − graph ms is this host's cost "
        "of a step for that loss (Python, the autograd engine, launches that the replay does without). Compare "
        "milliseconds, not ratios: its eager / graph divides by a graph time of next to nothing, so it says "
        "nothing about another loss's. Measured once per point, after the soft-DTW rows of that point (not "
        "interleaved with them), so host drift between the two shows here too.",
        "",
        "| B | N | D | eager ms (p10-p90) | graph ms | eager − graph ms | compile ms | kernels ms | "
        "launches (+memsets) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in refs:
        lines.append(
            f"| {r['B']} | {r['N']} | {r['D']} | {_f(_num(r, 'time_ms_median'))} ({_f(_num(r, 'time_ms_p10'))}-"
            f"{_f(_num(r, 'time_ms_p90'))}) | {_f(_num(r, 'graph_ms'))} | {_f(eager_minus_graph(r))} | "
            f"{_f(_num(r, 'compile_ms'))} | {_f(_num(r, 'kernel_ms'))} | {r.get('launches', '')} "
            f"(+{r.get('memsets', '')}) |"
        )
    return lines


def dist_table(rows):
    """The module's fused step for each named dist, and each over squared Euclidean's at the same point
    (same process, measured back to back): the user's view of the kernels' cost_over_sqeuclidean."""
    dists = [r for r in rows if r.get("api") == DIST_API]
    if not dists:
        return []
    lines = [
        "",
        "## Named costs: the module's step for each dist",
        "",
        "`SoftDTW(gamma=1, dist=..., fused=True)`, float32, by the method above, the five dists of a point run "
        "back to back in the same process. Over sqeuclidean: the eager median and the graph median each divided "
        "by squared Euclidean's at the same point. The bound of 1.2x in kernels.csv is the kernel benchmark's; "
        "these ratios add the host's and torch's part of the step (for cosine, its rows' normalisation).",
        "",
        "| B | N | D | dist | eager ms (p10-p90) | graph ms | eager over sqeuclidean | graph over sqeuclidean | "
        "kernels ms | launches (+memsets) | B/cell |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    base = {_point(r): r for r in dists if r.get("dist") == "sqeuclidean" and r.get("disposition") == "passed"}
    for r in dists:
        sq = base.get(_point(r), {})
        over_eager = _num(r, "time_ms_median") / _num(sq, "time_ms_median") if sq else float("nan")
        over_graph = _num(r, "graph_ms") / _num(sq, "graph_ms") if sq else float("nan")
        lines.append(
            f"| {r['B']} | {r['N']} | {r['D']} | {r.get('dist', '')} | {_f(_num(r, 'time_ms_median'))} "
            f"({_f(_num(r, 'time_ms_p10'))}-{_f(_num(r, 'time_ms_p90'))}) | {_f(_num(r, 'graph_ms'))} | "
            f"{_f(over_eager)} | {_f(over_graph)} | {_f(_num(r, 'kernel_ms'))} | {r.get('launches', '')} "
            f"(+{r.get('memsets', '')}) | {_f(bytes_per_cell(r), 6)} |"
        )
    return lines


def provenance(meta):
    """"GPU g, commit c (modified tree), date" from a results file's metadata."""
    dirty = " (modified tree)" if meta.get("dirty") == "true" else ""
    return f"GPU {meta.get('gpu') or '?'}, commit {meta.get('commit', '?')}{dirty}, {meta.get('date', '?')}"


def markdown(rows, meta):
    rows = [{k: ("" if v is None else str(v)) for k, v in r.items()} for r in rows]
    head = rows[0] if rows else {}
    lines = [
        "# The user's training step (pytorch/bench/step.py)",
        "",
        f"{provenance(meta)}. Method: one Python "
        "process; each step makes fresh leaf copies of x and y and runs `loss.sum().backward()`; "
        f"{counts(head)}; times are CUDA events around each step (median of "
        "the timed steps, p10-p90 beside it). Graph: the same step, copies included, captured once and replayed. "
        "Compile: `torch.compile(mode='reduce-overhead', fullgraph=True)` of the loss, backward included; the "
        "leaf copies are made eagerly, outside the compiled region, and timed with the step, as the graph replay "
        "includes them. Kernel time and launches: the profiler over one loss forward + backward (leaves made "
        "outside; launches = kernel launches, memsets counted apart); one profiled step, so its kernel time "
        "carries the profiler's overhead and can exceed the graph median. "
        "Memory: peak minus allocated just before the step, less the tensors of x and y live at the "
        "peak (their gradients; casts, where autocast makes any: blocks that the gradient or cast functions "
        "allocated, no larger than x or y in float64), per DP cell (B x N x M); beside it the "
        "bytes live "
        "at the peak of an allocation trace of the same step, by the function that allocated them (state: "
        "the forward's workspace and values; cost D and E: unfused mode's; other: the rest; rounding: the "
        "caching allocator's block rounding, measured peak less traced peak; these sum to B/cell); state − model: "
        "the traced state less the workspace model (`workspace_bytes`), non-zero where a kernel's workspace "
        "differs from it. Rows of api module-double-backward time another step: the loss's gradient in x with "
        "`create_graph=True`, then `<gradient, v>.backward()` for a fixed direction v (one Hessian-vector product "
        "through the loss), with no torch.compile; their kernel time, launches and memory are of that whole step; "
        "their E column also holds the Hessian product's workspace and result (`alignment_backward`); their state "
        "column is the forward's state, which `create_graph` keeps alive though the double backward does not read "
        "it; and the bounds below are the first order's, not theirs.",
        "",
        f"Bounds: eager / graph <= {EAGER_OVER_GRAPH_MAX} at (16,128,64) and (32,512,64), compile / graph <= "
        f"{EAGER_OVER_GRAPH_MAX} at (16,128,64); launches <= "
        f"{LAUNCHES_MAX['fused']} fused, <= {LAUNCHES_MAX['unfused']} unfused; bytes per cell <= "
        f"{BYTES_PER_CELL_MAX['fused']} fused, <= {BYTES_PER_CELL_MAX['unfused']} unfused at N >= 512.",
        "",
        "| B | N | D | api | mode | precision | eager ms (p10-p90) | graph ms | eager − graph ms | compile ms | "
        "kernels ms | eager/graph | compile/graph | launches (+memsets) | B/cell | state | cost D | E | other | "
        "rounding | state − model | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in (r for r in rows if r.get("api") not in (REFERENCE_API, DIST_API)):
        state, cost, alignment, other, rounding, over_model = account(r)
        lines.append(
            f"| {r['B']} | {r['N']} | {r['D']} | {r['api']} | {r['mode']} | {r['precision']} | "
            f"{_f(_num(r, 'time_ms_median'))} ({_f(_num(r, 'time_ms_p10'))}-{_f(_num(r, 'time_ms_p90'))}) | "
            f"{_f(_num(r, 'graph_ms'))} | {_f(eager_minus_graph(r))} | {_f(_num(r, 'compile_ms'))} | "
            f"{_f(_num(r, 'kernel_ms'))} | "
            f"{_f(_num(r, 'eager_over_graph'))} | {_f(_num(r, 'compile_over_graph'))} | "
            f"{r.get('launches', '')} (+{r.get('memsets', '')}) | "
            f"{_f(bytes_per_cell(r), 6)} | {_f(state)} | {_f(cost)} | {_f(alignment)} | {_f(other, 2)} | "
            f"{_f(rounding, 2)} | {_f(over_model, 2)} | "
            f"{verdicts(r)} |"
        )
    lines += reference_table(rows)
    lines += dist_table(rows)
    errors = [r for r in rows if r.get("message")]
    if errors:
        lines += ["", "Errors:", ""] + [
            f"- ({r['B']}, {r['N']}, {r['D']}) {r['api']} {r['mode']} {r['precision']}: {r['message']}" for r in errors
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    rows, sidecar = sdtw_results.read_results(sys.argv[1])
    sys.stdout.write(markdown(rows, (sidecar or {}).get("metadata", {})))
