"""The user's training step through sdtw_torch, measured the way a user runs it.

For each point (B, N, D), API (module / functional), mode (fused / unfused) and precision
(float32 / bfloat16 autocast): the eager step (fresh leaf copies of x and y, loss.sum().backward(),
CUDA events), the same step captured once and replayed as a CUDA graph, torch.compile(mode=
"reduce-overhead", fullgraph=True), kernel time and CUDA launches of the loss from the profiler,
and step memory (peak minus allocated before the step) in bytes per DP cell, with the bytes live at
the peak by who allocated them. At the torch.compile points the same step with torch's own
mse_loss (api torch-mse) measures what the host adds to any loss, by the same method. At the
second-order points (api module-double-backward, fused, float32, no torch.compile) the step is one
Hessian-vector product through the loss: its gradient in x with create_graph=True, then
<gradient, v>.backward() for a fixed direction v; its kernel time, launches and memory are of that
whole step. At the named-cost points (api module-dist, fused, float32, no torch.compile) the
module's step runs once per `dist` (squared Euclidean, L1, Euclidean, cosine, negative dot product),
back to back in one process, so that step.md can divide each by squared Euclidean's.

    PYTHONPATH=harness/python:pytorch/python python3 pytorch/bench/step.py --out results/h100   # step.csv, step.json, step.md

step.csv is a results file of sdtw_results' schema: time_ms_* are the eager step's, step_peak_mb the
step's own memory, abs_peak_mb the point's absolute peak; then the columns of EXTRA_COLUMNS.
"""
import argparse
import math
import sys
import time
from pathlib import Path

import torch

import sdtw_results
import sdtw_torch
from step_report import DIST_API, DISTS, REFERENCE_API, SECOND_ORDER_API, STEPS, WARMUP, markdown

POINTS = ((16, 128, 64), (32, 128, 1), (32, 512, 64), (32, 1024, 64), (16, 2048, 64), (1, 32768, 8))
COMPILE_POINTS = ((16, 128, 64), (32, 512, 64))
SECOND_ORDER_POINTS = ((32, 512, 64),)
DIST_POINTS = ((32, 512, 64), (16, 2048, 64))
# Where each byte live at the step's peak was allocated (C++ frames of the allocation), first match wins.
# An "xy" match counts only up to the size of an x- or y-shaped tensor in float64: the double
# backward also casts cost-shaped tensors (_to_copy), which are not x or y.
PEAK_PARTS = (
    ("xy", ("sqeuclidean_backward_cuda", "sqeuclidean_cost_backward_cuda", "fused_backward_cuda", "_to_copy",
            "mse_loss_backward")),
    ("alignment", ("alignment_backward_cuda", "cost_backward_cuda")),
    ("cost", ("sqeuclidean_cost_cuda",)),
    ("state", ("sqeuclidean_forward_cuda", "fused_forward_cuda", "cost_forward_cuda")),
)
EXTRA_COLUMNS = (
    "precision graph_ms compile_ms kernel_ms launches memsets eager_over_graph compile_over_graph step_bytes xy_bytes "
    "bytes_per_cell state_bytes_per_cell peak_state_bpc peak_cost_bpc peak_alignment_bpc peak_other_bpc "
    "peak_rounding_bpc compile_skips dist"
).split()
COLUMNS = sdtw_results.header(EXTRA_COLUMNS)
BASE_SEED, GAMMA, MIB = 0, 1.0, float(1 << 20)


def mse_per_pair(x, y):
    return torch.nn.functional.mse_loss(x, y, reduction="none").sum((1, 2))


def loss_function(api, mode, gamma=1.0, dist="sqeuclidean"):
    fused = mode == "fused"
    if api == REFERENCE_API:
        return mse_per_pair
    if api in ("module", DIST_API):
        return sdtw_torch.SoftDTW(gamma=gamma, fused=fused, dist=dist)
    return lambda x, y: sdtw_torch.soft_dtw(x, y, gamma=gamma, fused=fused)


def make_step(loss_fn, precision):
    """loss.sum().backward() on leaves x, y; bfloat16 leaves under autocast for 'bf16-autocast'."""
    def step(x, y):
        if precision == "float32":
            loss = loss_fn(x, y).sum()
        else:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = loss_fn(x, y).sum()
        loss.backward()
        return loss
    return step


def make_double_backward_step(loss_fn, v):
    """The loss's gradient in x with create_graph=True, then <gradient, v>.backward() on leaves x, y:
    one Hessian-vector product through the loss (the double backward), the gradient penalty's step."""
    def step(x, y):
        loss = loss_fn(x, y).sum()
        (gx,) = torch.autograd.grad(loss, x, create_graph=True)
        (gx * v).sum().backward()
        return loss
    return step


def leaves(x0, y0):
    return x0.clone().requires_grad_(), y0.clone().requires_grad_()


def timed(run, steps):
    """Per-step times (ms) by CUDA events around each call of run()."""
    times = []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def eager_times(step, x0, y0, warmup, steps):
    for _ in range(warmup):
        step(*leaves(x0, y0))
    return timed(lambda: step(*leaves(x0, y0)), steps)


def graph_times(step, x0, y0, warmup, steps):
    """The same step (copies included) captured once and replayed."""
    x_in, y_in = x0.clone(), y0.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(*leaves(x_in, y_in))
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(*leaves(x_in, y_in))
    for _ in range(warmup):
        graph.replay()
    return timed(graph.replay, steps)


def compile_times(loss_fn, precision, x0, y0, warmup, steps):
    """torch.compile of the loss (forward and backward captured by Inductor's CUDA graphs)."""
    import torch._dynamo
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(lambda x, y: loss_fn(x, y).sum(), mode="reduce-overhead", fullgraph=True)
    step = make_step(compiled, precision)

    def run():
        torch.compiler.cudagraph_mark_step_begin()
        step(*leaves(x0, y0))

    for _ in range(max(warmup, 3)):
        run()
    times = timed(run, steps)
    skips = counters["inductor"].get("cudagraph_skips", 0)
    return times, int(skips)


def profile_loss(step, x0, y0):
    """Kernel time and launches of one loss forward + backward (leaves made outside)."""
    from torch.profiler import ProfilerActivity, profile

    x, y = leaves(x0, y0)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(x, y)
        torch.cuda.synchronize()
    launches = memsets = 0
    kernel_us = 0.0
    for event in prof.events():
        name = event.name
        if event.device_type == torch.autograd.DeviceType.CPU:
            if "LaunchKernel" in name:
                launches += 1
            elif "Memset" in name:
                memsets += 1
        elif event.device_type == torch.autograd.DeviceType.CUDA and not name.lower().startswith("memset"):
            kernel_us += event.device_time if hasattr(event, "device_time") else event.cuda_time
    return kernel_us / 1e3, launches, memsets


def step_memory(step, x0, y0):
    """Peak minus allocated before the step, the absolute peak since the point started (what was
    allocated before included), the bytes of x- and y-shaped tensors live at the peak
    (gradients, and casts where autocast makes any; none when the peak comes before the gradients exist),
    and the bytes live at the peak by who allocated them (PEAK_PARTS; 'rounding' is the
    allocator's block rounding: the measured peak less the traced one)."""
    x, y = leaves(x0, y0)
    step(x, y)  # warm the caches of this shape
    x, y = leaves(x0, y0)
    torch.cuda.synchronize()
    absolute = torch.cuda.max_memory_allocated()
    torch.cuda.memory._record_memory_history(max_entries=100000, stacks="all")
    try:
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        step(x, y)
        torch.cuda.synchronize()
        absolute = max(absolute, torch.cuda.max_memory_allocated())
        peak = torch.cuda.max_memory_allocated() - before
        trace = torch.cuda.memory._snapshot()["device_traces"][torch.cuda.current_device()]
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    parts = peak_parts(trace, peak, xy_limit=8 * max(x.numel(), y.numel()))
    return peak, absolute, parts["xy"], parts


def peak_parts(trace, peak, xy_limit):
    """Bytes live at the traced peak of an allocation trace, by PEAK_PARTS (else 'other'); a block
    larger than xy_limit bytes is never 'xy'."""
    live, total, best, at_best = {}, 0, -1, {}
    for event in trace:
        if event["action"] == "alloc":
            live[event["addr"]] = event
            total += event["size"]
            if total > best:
                best, at_best = total, dict(live)
        elif event["action"] == "free_requested" and event["addr"] in live:
            total -= live.pop(event["addr"])["size"]
    parts = dict.fromkeys([name for name, _ in PEAK_PARTS] + ["other"], 0)
    for event in at_best.values():
        names = " ".join(frame.get("name", "") for frame in event.get("frames", []))
        part = next((name for name, keys in PEAK_PARTS
                     if any(k in names for k in keys) and (name != "xy" or event["size"] <= xy_limit)), "other")
        parts[part] += event["size"]
    parts["rounding"] = peak - max(best, 0)
    return parts


def point_row(args, b, n, d, api, mode, precision, dist):
    """The common columns of a point before it runs (the eager step's time and memory fill the rest)."""
    impl = "torch-mse" if api == REFERENCE_API else f"ours_{mode}"
    return dict(grid=args.grid, impl=impl, api=api, mode="" if api == REFERENCE_API else mode,
                dist="" if api == REFERENCE_API else dist, device="cuda",
                dtype="float32" if precision == "float32" else "bfloat16", B=b, N=n, M=n, D=d, gamma=GAMMA,
                bandwidth="none", normalize=False, disposition="passed", warmup=args.warmup, verified="off",
                seed=sdtw_results.point_seed(BASE_SEED, b, n, n, d), gpu=str(torch.cuda.current_device()),
                precision=precision)


def run_point(args, b, n, d, api, mode, precision, dist="sqeuclidean"):
    start = time.monotonic()
    row = point_row(args, b, n, d, api, mode, precision, dist)
    dtype = torch.float32 if precision == "float32" else torch.bfloat16
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()  # the absolute peak counts from the point's start
    x0, y0 = sdtw_results.make_inputs(row["seed"], b, n, n, d, dtype=dtype, device="cuda")
    if api == SECOND_ORDER_API:
        loss_fn = loss_function("module", mode, GAMMA)
        v = sdtw_results.make_inputs(row["seed"] ^ 1, b, n, 1, d, device="cuda")[0]
        step = make_double_backward_step(loss_fn, v)
    else:
        loss_fn = loss_function(api, mode, GAMMA, dist)
        step = make_step(loss_fn, precision)
    cells = b * n * n
    try:
        eager = eager_times(step, x0, y0, args.warmup, args.steps)
        graph = graph_times(step, x0, y0, args.warmup, args.steps)
        kernel_ms, launches, memsets = profile_loss(step, x0, y0)
        peak, absolute, xy, parts = step_memory(step, x0, y0)
        row.update({f"peak_{part}_bpc": parts[part] / cells for part in ("state", "cost", "alignment", "other",
                                                                        "rounding")})
        graph_ms = sdtw_results.nearest_rank(graph, 0.5)
        row.update(
            **sdtw_results.spread(eager), graph_ms=graph_ms, kernel_ms=kernel_ms, launches=launches,
            memsets=memsets, step_bytes=peak, xy_bytes=xy, step_peak_mb=peak / MIB, abs_peak_mb=absolute / MIB,
            bytes_per_cell=(peak - xy) / cells,
            state_bytes_per_cell=(sdtw_torch._library.cuda_state_bytes(b, n, n, d, -1, False) / cells
                                  if api != REFERENCE_API else 0.0),
        )
        row["eager_over_graph"] = row["time_ms_median"] / graph_ms
        if (b, n, d) in args.compile_points and precision == "float32" and api not in (SECOND_ORDER_API, DIST_API):
            times, skips = compile_times(loss_fn, precision, x0, y0, args.warmup, args.steps)
            row.update(compile_ms=sdtw_results.nearest_rank(times, 0.5), compile_skips=skips)
            row["compile_over_graph"] = row["compile_ms"] / graph_ms
    except torch.cuda.OutOfMemoryError as e:
        row.update(disposition="out_of_memory", message=str(e).splitlines()[0][:200])
    except Exception as e:  # a failed point is a row, never a lost sweep
        row.update(disposition="error", message=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
    torch.cuda.empty_cache()
    row["wall_s"] = time.monotonic() - start
    return row


def fmt(value):
    """A value as step.csv writes it (sdtw_results: 10 digits, so that a column read back judges as the
    value did: bytes per cell next to a bound)."""
    return sdtw_results.schema.text(value)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, type=Path, help="folder for step.csv and step.md")
    parser.add_argument("--points", default=None, help="B,N,D;B,N,D;... (default: the issue's six points)")
    parser.add_argument("--compile-points", default=None, help="points that also run torch.compile (B,N,D;...)")
    parser.add_argument("--second-order-points", default=None,
                        help="points that also time the double-backward step, fused (B,N,D;...; "
                             "default: 32,512,64 without --points, none with it)")
    parser.add_argument("--dist-points", default=None,
                        help="points that also time the module's step for each named dist, fused (B,N,D;...; "
                             "default: 32,512,64;16,2048,64 without --points, none with it)")
    parser.add_argument("--no-compile", action="store_true",
                        help="no torch.compile at any point (its first compilation takes a minute)")
    parser.add_argument("--apis", default="module,functional")
    parser.add_argument("--modes", default="fused,unfused")
    parser.add_argument("--precisions", default="float32,bf16-autocast")
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args(argv)
    args.grid = "points" if args.points else "default"
    parse = lambda s: tuple(tuple(int(v) for v in p.split(",")) for p in s.split(";") if p)  # noqa: E731
    points = parse(args.points) if args.points else POINTS
    args.compile_points = parse(args.compile_points) if args.compile_points else COMPILE_POINTS
    if args.second_order_points is not None:
        second_order_points = parse(args.second_order_points)
    else:  # given points replace the default grid, its second-order point included
        second_order_points = () if args.points else SECOND_ORDER_POINTS
    if args.dist_points is not None:
        dist_points = parse(args.dist_points)
    else:
        dist_points = () if args.points else DIST_POINTS
    if args.no_compile:
        if args.compile_points is not COMPILE_POINTS:
            parser.error("--no-compile: --compile-points names points to compile; give one or the other")
        args.compile_points = ()
    if args.steps < 20:
        parser.error("--steps must be >= 20 (median and spread need enough steps)")
    if not torch.cuda.is_available():
        parser.error("needs a CUDA device (torch.cuda.is_available() is False)")
    meta = sdtw_results.collect("step", BASE_SEED, "cuda", steps=args.steps, warmup=args.warmup)
    rows = []
    with sdtw_results.ResultsWriter(args.out / "step.csv", "step", meta, EXTRA_COLUMNS) as writer:
        for b, n, d in points:
            for api in args.apis.split(","):
                for mode in args.modes.split(","):
                    for precision in args.precisions.split(","):
                        record(writer, rows, run_point(args, b, n, d, api, mode, precision))
            if (b, n, d) in args.compile_points:
                record(writer, rows, run_point(args, b, n, d, REFERENCE_API, "fused", "float32"))
        # Fused only: the unfused loss frees the cost it computed, so its double backward is refused.
        for b, n, d in second_order_points:
            record(writer, rows, run_point(args, b, n, d, SECOND_ORDER_API, "fused", "float32"))
        for b, n, d in dist_points:
            for dist in DISTS:
                record(writer, rows, run_point(args, b, n, d, DIST_API, "fused", "float32", dist))
    return 0


def record(writer, rows, row):
    """Appends a finished row to step.csv, prints it and rewrites step.md."""
    writer.append(row)
    rows.append(row)
    print(" ".join(f"{k}={fmt(row.get(k))}" for k in COLUMNS if row.get(k) not in (None, "")), flush=True)
    (writer.path.parent / "step.md").write_text(markdown(rows, writer.metadata))


if __name__ == "__main__":
    sys.exit(main())
