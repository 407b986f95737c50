"""The measuring process: one implementation over the points of one grid, in a fresh process.

    python3 -m baselines.originals.child JOB.json

Per point: inputs on the device; warm-up; timed steps (forward + backward of sum(sdtw(x, y)) on fresh
leaf copies, CUDA events); the absolute peak (max_memory_allocated since the point started, the seed
paper's number) and the step memory (peak minus memory_allocated() just before a step, after a reset
of the peak). Writes one JSON line when a point starts and one with its result to the job's events
file; saves the verified pairs' outputs for the parent, which compares them with the reference."""
import json
import math
import sys
import time
import traceback
from pathlib import Path

MIB = 1024.0 * 1024.0


class Events:
    def __init__(self, path):
        self.f = open(path, "a")

    def write(self, **event):
        self.f.write(json.dumps(event) + "\n")
        self.f.flush()


def disposition_of(exc):
    text = f"{type(exc).__name__}: {exc}"
    if "out of memory" in text.lower() or "OUT_OF_MEMORY" in text:
        return "out_of_memory"
    return "error"


def short(text, limit=300):
    return " ".join(str(text).split())[:limit]


class Device:
    """Timing and memory on CUDA (events, the caching allocator's counters) or the CPU (a clock)."""

    def __init__(self, torch, name):
        self.torch, self.cuda = torch, name == "cuda"
        self.device = torch.device(name)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def release(self):
        """Frees what an earlier point left (cached blocks, cuBLAS workspaces) and starts the peak anew."""
        import gc
        gc.collect()
        if self.cuda:
            self.sync()
            clear = getattr(self.torch._C, "_cuda_clearCublasWorkspaces", None)
            if clear:
                clear()
            self.torch.cuda.empty_cache()
            self.torch.cuda.reset_peak_memory_stats()

    def allocated(self):
        return self.torch.cuda.memory_allocated() if self.cuda else math.nan

    def peak(self):
        return self.torch.cuda.max_memory_allocated() if self.cuda else math.nan

    def healthy(self):
        """False when the CUDA context is broken (a sticky error): the process must be replaced."""
        try:
            self.sync()
            return float(self.torch.ones(1, device=self.device).add_(1).item()) == 2.0
        except Exception:
            return False


def step(dev, sdtw, x, y):
    """One user step on fresh leaf copies: (ms, step bytes, values, grad_x, grad_y)."""
    torch = dev.torch
    dev.sync()
    if dev.cuda:
        torch.cuda.reset_peak_memory_stats()
    before = dev.allocated()
    xs = x.detach().clone().requires_grad_(True)
    ys = y.detach().clone().requires_grad_(True)
    if dev.cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        values = sdtw(xs, ys)
        values.sum().backward()
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
    else:
        t0 = time.perf_counter()
        values = sdtw(xs, ys)
        values.sum().backward()
        ms = 1e3 * (time.perf_counter() - t0)
    return ms, dev.peak() - before, values.detach(), xs.grad, ys.grad


def measure(dev, sdtw, point, settings, pairs, save_to):
    from sdtw_results import make_inputs, spread
    torch = dev.torch
    dev.release()
    resident = dev.allocated()
    x, y = (t.to(dev.device) for t in make_inputs(point["seed"], point["B"], point["N"], point["N"], point["D"]))
    absolute = dev.peak()  # NaN on the CPU: no allocator counters there
    # The first step carries one-time costs (numba's JIT compilation): the warm-up clock starts after it.
    warm, t0 = 0, None
    while warm < max(1, settings["warmup"]) and (t0 is None or time.perf_counter() - t0 < settings["warmup_seconds"]):
        step(dev, sdtw, x, y)
        absolute = max(absolute, dev.peak()) if dev.cuda else absolute
        warm += 1
        t0 = t0 or time.perf_counter()
    times, steps, last = [], [], None
    t0 = time.perf_counter()
    while len(times) < settings["reps"] and (len(times) < settings["min_reps"]
                                              or time.perf_counter() - t0 < settings["point_seconds"]):
        last = None  # the previous step's tensors are freed before the next step starts
        ms, step_bytes, *last = step(dev, sdtw, x, y)
        absolute = max(absolute, dev.peak()) if dev.cuda else absolute
        times.append(ms)
        steps.append(step_bytes)
    idx = torch.tensor(pairs, dtype=torch.long, device=dev.device)
    values, gx, gy = last
    pick = (lambda t: None if t is None else t.index_select(0, idx).cpu())
    torch.save({"values": pick(values), "grad_x": pick(gx), "grad_y": pick(gy)}, save_to)
    return {"disposition": "measured", **spread(times), "warmup": warm, "abs_peak_mb": absolute / MIB,
            "step_peak_mb": max(steps) / MIB, "resident_mb": resident / MIB}


def run(job):
    events = Events(job["events"])
    import torch
    from baselines.originals.implementations import registry
    impl = registry(job["plugins"])[job["impl"]]
    dev = Device(torch, job["device"])
    try:
        sdtw = impl.make(job["peers"], job["settings"]["gamma"])
    except Exception as exc:
        for i, _ in job["points"]:
            events.write(event="row", index=i, disposition="error",
                         message=short(f"import: {type(exc).__name__}: {exc}"))
        return 0
    for i, point in job["points"]:
        events.write(event="start", index=i)
        t0 = time.perf_counter()
        try:
            row = measure(dev, sdtw, point, job["settings"], point["pairs"], Path(job["outputs"]) / f"{i}.pt")
        except Exception as exc:
            row = {"disposition": disposition_of(exc), "message": short(f"{type(exc).__name__}: {exc}")}
            traceback.print_exc()
        row["wall_s"] = time.perf_counter() - t0
        events.write(event="row", index=i, **row)
        if row["disposition"] != "measured" and not dev.healthy():
            return 3  # a broken context: the parent goes on in a fresh process
    return 0


if __name__ == "__main__":
    sys.exit(run(json.loads(Path(sys.argv[1]).read_text())))
