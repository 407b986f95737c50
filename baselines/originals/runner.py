"""Runs every implementation over every grid, each (implementation, grid) in a fresh process, and
writes <out>/originals.csv (one row per implementation and point, in the results schema of
sdtw_results, appended as each job finishes) and originals.json (its sidecar).
A point that cannot run is a row with a disposition and the error text; a process that dies or
hangs (point_timeout) makes its point an error row and a fresh process goes on with the rest."""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import sdtw_results
from sdtw_results import verify

from baselines.originals import config as configs
from baselines.originals import metadata
from baselines.originals.implementations import CUDA_ONLY, registry

ROOT = metadata.ROOT
METHOD = "python-step-fresh-process"
METHOD_TEXT = ("each implementation in its own process per grid, called as a user does (ours through the "
               "sdtw_torch package); per point: same float32 inputs, warm-up, then forward + backward of "
               "sum(sdtw(x, y)) on fresh leaf copies, timed with CUDA events (nearest-rank median, p10, p90 of "
               "the steps); abs_peak_mb = max_memory_allocated since the point started (after freeing what "
               "earlier points left; the seed paper's absolute peak), step_peak_mb = peak minus "
               "memory_allocated() just before a step (largest over the steps); MB = 2^20 bytes; every "
               "implementation judged against value_tol and grad_tol (ours' float32 tolerance)")
# After the common columns: what the device held before the point's inputs (a CUDA context's tensors).
EXTRA_COLUMNS = ["resident_mb"]
COLUMNS = sdtw_results.header(EXTRA_COLUMNS)
DISPOSITIONS = sdtw_results.DISPOSITIONS


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m baselines.originals", description=__doc__)
    ap.add_argument("--config", type=Path, default=ROOT / "configs/originals.yaml", help="grids and settings (YAML)")
    ap.add_argument("--quick", action="store_true", help="the smoke test: configs/originals-quick.yaml")
    ap.add_argument("--peers", type=Path, help="folder with pytorch-softdtw-cuda/, sdtw-cuda-torch/, pysdtw/ "
                                                "(default: the originals as installed packages)")
    ap.add_argument("--out", type=Path, required=True, help="writes originals.csv and originals.json here")
    ap.add_argument("--impl", help="comma-separated implementations (default: the config's)")
    ap.add_argument("--grid", help="comma-separated grids (default: all)")
    ap.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    ap.add_argument("--plugin", action="append", default=[], type=Path,
                    help="a Python file defining IMPLEMENTATIONS (a list of Impl) to measure too")
    ap.add_argument("--work", type=Path, help="scratch folder for the processes' logs and outputs (default: temporary)")
    for name in ("reps", "min_reps", "warmup", "point_seconds", "point_timeout", "verify_max_cells", "budget_seconds"):
        ap.add_argument("--" + name.replace("_", "-"), type=float, dest=name, help=f"overrides the config's {name}")
    return ap.parse_args(argv)


def check_args(args, impls):
    if args.peers is not None and not args.peers.is_dir():
        raise SystemExit(f"--peers: {args.peers} is not a folder")
    for p in args.plugin:
        if not p.is_file():
            raise SystemExit(f"--plugin: {p} is not a file")
    unknown = [i for i in args.impl.split(",") if i not in impls] if args.impl else []
    if unknown:
        raise SystemExit(f"--impl: unknown {unknown}; known: {sorted(impls)}")


def base_row(point, impl, device, settings):
    mode = next((m for m in ("unfused", "fused") if impl.endswith("_" + m)), "")
    return {"grid": point.grid, "impl": impl, "api": "module", "mode": mode, "device": device, "dtype": "float32",
            "B": point.B, "N": point.N, "M": point.N, "D": point.D, "gamma": settings["gamma"], "bandwidth": "none",
            "normalize": False, "seed": input_seed(point, settings), "gpu": "0" if device == "cuda" else ""}


def input_seed(point, settings):
    """The point's seed in the one scheme (sdtw_results.point_seed): the inputs sdtw-bench draws too."""
    return sdtw_results.point_seed(int(settings["seed"]), point.B, point.N, point.N, point.D)


def _tail(path, limit=400):
    text = Path(path).read_text(errors="replace") if Path(path).exists() else ""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return " ".join(" ".join(lines[-4:]).split())[-limit:]


def _events(path):
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line cut by a killed process
    return out


class Job:
    """One implementation over the points of one grid, in fresh processes until every point has a row."""

    def __init__(self, impl, grid, points, device, settings, args, work):
        self.impl, self.grid, self.points = impl, grid, points  # points: [(index, point dict)]
        self.device, self.settings, self.args, self.work = device, settings, args, work

    def run(self):
        rows, attempt = {}, 0
        while len(rows) < len(self.points):
            attempt += 1
            pending = [(i, p) for i, p in self.points if i not in rows]
            got = self._process(pending, attempt)
            rows.update(got)
            if not got:
                break
        return rows

    def _process(self, pending, attempt):
        stem = self.work / f"{self.impl}-{self.grid}-{attempt}"
        outputs = self.work / "outputs" / self.impl
        outputs.mkdir(parents=True, exist_ok=True)
        job = {"impl": self.impl, "device": self.device, "points": pending, "settings": self.settings,
               "peers": str(self.args.peers) if self.args.peers else None, "plugins": [str(p) for p in self.args.plugin],
               "events": str(stem) + ".jsonl", "outputs": str(outputs)}
        Path(str(stem) + ".json").write_text(json.dumps(job))
        env = dict(os.environ, PYTHONUNBUFFERED="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        log_path = Path(str(stem) + ".log")
        events_path = Path(job["events"])
        with open(log_path, "w") as log:
            proc = subprocess.Popen([sys.executable, "-m", "baselines.originals.child", str(stem) + ".json"],
                                    stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
            timed_out, seen_bytes, started_at = None, 0, None
            while proc.poll() is None:
                time.sleep(0.1)
                size = events_path.stat().st_size if events_path.exists() else 0
                if size != seen_bytes:  # parsed again only when the child has written an event
                    seen_bytes, events = size, _events(events_path)
                    if events:
                        last = events[-1]
                        started_at = time.monotonic() if last["event"] == "start" else None
                if started_at and time.monotonic() - started_at > self.settings["point_timeout"]:
                    timed_out = last["index"]
                    os.killpg(proc.pid, signal.SIGKILL)  # the child's own session: it and anything it started
                    proc.wait()
        rows, in_flight = {}, None
        for e in _events(events_path):
            if e["event"] == "start":
                in_flight = e["index"]
            else:
                rows[e["index"]] = {k: v for k, v in e.items() if k not in ("event", "index")}
                in_flight = None if in_flight == e["index"] else in_flight
        code = proc.returncode
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        if in_flight is not None:
            why = (f"timeout: still running after {self.settings['point_timeout']:g} s, process killed"
                   if timed_out == in_flight else f"the process died ({how})")
            rows[in_flight] = {"disposition": "error", "message": f"{why}: {_tail(log_path)}"}
        elif not rows:
            for i, _ in pending:
                rows[i] = {"disposition": "error", "message": f"the process ended ({how}) before its first point: "
                                                              f"{_tail(log_path)}"}
        return rows


def compute_references(points, settings):
    """point index -> (pairs, (values, grad_x, grad_y)) in float64, for every point, in parallel."""
    import torch
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    def one(item):
        i, p = item
        x, y = sdtw_results.make_inputs(input_seed(p, settings), p.B, p.N, p.N, p.D)
        pairs = verify.verified_pairs(p.B, p.N, p.N, int(settings["verify_max_cells"]))
        return i, (pairs, verify.reference(x, y, pairs, settings["gamma"]))

    with ThreadPoolExecutor(max_workers=min(8, max(1, os.cpu_count() or 1))) as pool:
        return dict(pool.map(one, list(enumerate(points))))


def finish_row(row, impl, point, pairs, ref, outputs):
    """Verifies a measured point against the reference: passed within the tolerances, else failed
    with the reason; both errors recorded."""
    import torch
    if row.get("disposition") != "measured":
        return row
    row["verified"] = verify.verified_text(pairs, point.B)
    path = outputs / impl / f"{row.pop('index_key')}.pt"
    if not pairs:  # timed, not verified, as sdtw-bench does past verify_max_cells
        row["disposition"] = "passed"
        return row
    try:
        saved = torch.load(path)
        value_err, grad_err = verify.errors((saved["values"], saved["grad_x"], saved["grad_y"]), ref)
    except Exception as exc:
        row.update(disposition="error", message=f"verification: {type(exc).__name__}: {exc}")
        return row
    tol = verify.FLOAT32_TOLERANCE
    disposition, message = verify.judge(value_err, grad_err, tol["value_tol"], tol["grad_tol"])
    row.update(disposition=disposition, value_err=value_err, grad_err=grad_err, message=message, **tol)
    return row


def main(argv=None):
    args = parse_args(argv)
    t_start = time.monotonic()
    config_path = ROOT / "configs/originals-quick.yaml" if args.quick else args.config
    overrides = {k: getattr(args, k) for k in ("reps", "min_reps", "warmup", "point_seconds", "point_timeout",
                                                 "verify_max_cells", "budget_seconds")}
    cfg = configs.load(config_path, overrides)
    impls = registry(args.plugin)
    check_args(args, impls)
    names = args.impl.split(",") if args.impl else cfg.impls
    grids = {g: pts for g, pts in cfg.grids.items() if not args.grid or g in args.grid.split(",")}
    if not grids:
        raise SystemExit(f"--grid: none of {args.grid} in {sorted(cfg.grids)}")
    import torch
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    if device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch.cuda.is_available() is False")
    points = [p for pts in grids.values() for p in pts]
    meta = metadata.collect(device, args.peers, cfg.settings, config_path, METHOD, METHOD_TEXT, verify.REFERENCE)
    print(f"originals: {len(names)} implementations x {len(points)} points on {meta['gpu'] or 'the CPU'} "
          f"({device}); float64 references ...", flush=True)
    refs = compute_references(points, cfg.settings)
    print(f"originals: references in {time.monotonic() - t_start:.1f} s", flush=True)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="sdtw-originals-"))
    work.mkdir(parents=True, exist_ok=True)
    index = {p: i for i, p in enumerate(points)}
    out_rows = []
    budget = cfg.settings["budget_seconds"]
    with sdtw_results.ResultsWriter(args.out / "originals.csv", "originals", meta, EXTRA_COLUMNS) as writer:
        for grid, pts in grids.items():
            for name in names:
                impl = impls[name]
                spent = time.monotonic() - t_start
                todo, got = [], {}
                for p in pts:
                    why = CUDA_ONLY if impl.needs_cuda and device != "cuda" else impl.unsupported(p.B, p.N, p.D)
                    if why:
                        got[index[p]] = {"disposition": "not_supported", "message": why}
                    elif budget and spent > budget:
                        got[index[p]] = {"disposition": "error", "message": f"not run: the run's budget of {budget:g} "
                                                                            "s was spent (budget_seconds)"}
                    else:
                        todo.append((index[p], {"B": p.B, "N": p.N, "D": p.D, "seed": input_seed(p, cfg.settings),
                                                "pairs": refs[index[p]][0]}))
                t0 = time.monotonic()
                if todo:
                    got.update(Job(name, grid, todo, device, cfg.settings, args, work).run())
                counts = {}
                # Appended as each job ends: a run stopped from outside still leaves the rows it measured.
                for i in sorted(got):
                    p = points[i]
                    r = finish_row(dict(got[i], index_key=i), name, p, *refs[i], work / "outputs")
                    r.pop("index_key", None)
                    row = {**base_row(p, name, device, cfg.settings), **r}
                    writer.append(row)
                    out_rows.append(row)
                    counts[row["disposition"]] = counts.get(row["disposition"], 0) + 1
                print(f"  {grid:10s} {name:24s} {time.monotonic() - t0:6.1f} s  {counts}", flush=True)
                writer.update_metadata(wall_s=round(time.monotonic() - t_start, 1))
        writer.update_metadata(wall_s=round(time.monotonic() - t_start, 1), complete=True)
    summary = {d: sum(r["disposition"] == d for r in out_rows) for d in DISPOSITIONS}
    print(f"originals: {len(out_rows)} rows {summary} in {round(time.monotonic() - t_start, 1)} s -> "
          f"{args.out}/originals.csv", flush=True)
    return 0
