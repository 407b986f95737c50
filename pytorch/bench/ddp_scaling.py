#!/usr/bin/env python3
"""Data-parallel training on 1 and 2 processes (one GPU each, or CPU workers with gloo): steady-state
throughput of examples/train_ddp.py with the same per-process batch (weak scaling), and whether
two processes sharing one global batch end with the parameters of one process on the whole batch.
Writes one results file (tool "ddp") through sdtw_results:

    PYTHONPATH=harness/python:pytorch/python python3 pytorch/bench/ddp_scaling.py --out results/h100x2

Each run is a torchrun of examples/train_ddp.py (--report gives rank 0's step times and final
parameters). Step time = one optimiser step, host clock, after --warmup untimed steps; the step
ends with loss.item(), which waits for the GPU. sequences_per_s = processes x batch / median step.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import sdtw_results

ROOT = Path(__file__).resolve().parents[2]
TRAIN_DDP = ROOT / "examples" / "train_ddp.py"
GAMMA = 0.1  # examples/train.py's default
# Parameters of two processes on one global batch against one process: float32 sums in another
# order, through SGD's steps; a real difference (a rank's rows lost or counted twice) moves them ~1e-2.
PARAMETER_TOL = 1e-4
# SGD's step for that check: the loss is ~1.6e4 at 32 x 512 x 64, and SGD at train.py's Adam rate
# (3e-3) reached NaN within four steps on the CPU, while 1e-5 kept every step finite.
SGD_LR = 1e-5


def parse_size(text):
    try:
        b, n, d = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes: each size is BxNxD with positive integers (got {text!r})")
    if min(b, n, d) < 1:
        raise argparse.ArgumentTypeError(f"--sizes: B, N and D must be >= 1 (got {text!r})")
    return b, n, d


def run_training(processes, batch, n, d, args, report, split):
    """split: every rank draws the global batch and takes its rows; SGD then, so that the two runs
    differ by float32 summation order only and not by Adam's scaling of near-zero gradients."""
    # --redirects 1 --tee 1: Debian's torch 1.13 launcher on Python 3.11 fails in to_map without them.
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}",
           "--redirects", "1", "--tee", "1",
           str(TRAIN_DDP), "--device", args.device, "--batch", str(batch), "--length", str(n),
           "--channels", str(d), "--warmup", str(args.warmup), "--steps", str(args.steps), "--report", str(report)]
    if split:
        cmd += ["--split-global-batch", "--optimizer", "sgd", "--lr", str(SGD_LR)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "examples"), os.environ.get("PYTHONPATH", "")]))
    begin = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - begin
    if done.returncode != 0 or not report.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, wall, f"exit {done.returncode}: {tail[0][:300]}"
    return json.loads(report.read_text()), wall, ""


def base_row(args, processes, batch, n, d, mode):
    return {"grid": "ddp", "impl": "ours", "api": "module", "mode": mode, "device": args.device,
            "dtype": "float32", "B": batch, "N": n, "M": n, "D": d, "gamma": GAMMA, "bandwidth": "none",
            "normalize": "true", "warmup": args.warmup, "processes": processes}


def throughput_rows(args, writer, tmp):
    for b, n, d in args.sizes:
        single = None
        for processes in (1, 2):
            row = base_row(args, processes, b, n, d, f"weak-scaling x{processes}")
            report, wall, error = run_training(processes, b, n, d, args, tmp / f"w{processes}_{b}_{n}_{d}.json", False)
            row["wall_s"] = round(wall, 3)
            if report is None:
                writer.append(dict(row, disposition="error", message=error))
                continue
            times_ms = [s * 1e3 for s in report["step_seconds"]]
            spread = sdtw_results.spread(times_ms)
            rate = processes * b / (spread["time_ms_median"] / 1e3)
            row.update(spread, disposition="passed", sequences_per_s=round(rate, 1),
                       eval_loss_start=report["eval_loss_start"], eval_loss_end=report["eval_loss_end"])
            if processes == 1:
                single = rate
            elif single:
                row["weak_scaling_efficiency"] = round(rate / (2 * single), 4)
            writer.append(row)
            print(f"B={b} N={n} D={d} x{processes}: {rate:.0f} sequences/s", flush=True)


def max_relative_difference(a, b):
    """max |a - b| / max |a| over all parameters; NaN where either holds a non-finite value (a run
    that diverged proves nothing), the absolute difference where a is all zero."""
    values_a = [u for pa in a for u in pa]
    values_b = [v for pb in b for v in pb]
    if len(values_a) != len(values_b) or not all(math.isfinite(u) for u in values_a + values_b):
        return math.nan
    worst = max((abs(u - v) for u, v in zip(values_a, values_b)), default=0.0)
    scale = max((abs(u) for u in values_a), default=0.0)
    return worst / scale if scale > 0 else worst


def equality_rows(args, writer, tmp):
    b, n, d = args.sizes[0]
    row = base_row(args, 2, b, n, d, f"two processes vs one, same global batch, SGD lr {SGD_LR:g}")
    one, wall_one, error = run_training(1, 2 * b, n, d, args, tmp / "one.json", True)
    two, wall_two, error_two = (None, 0.0, "") if one is None else run_training(2, b, n, d, args, tmp / "two.json", True)
    row["wall_s"] = round(wall_one + wall_two, 3)
    if one is None or two is None:
        writer.append(dict(row, disposition="error", message=error or error_two))
        return
    diff = max_relative_difference(one["parameters"], two["parameters"])
    ok = diff <= PARAMETER_TOL
    reason = ("parameters not finite, or not the same count, after training" if math.isnan(diff) else
              f"parameters differ by {diff:.3g} (max |a-b| / max |a|) > {PARAMETER_TOL}")
    writer.append(dict(row, disposition="passed" if ok else "failed", message="" if ok else reason,
                       parameter_max_rel_diff=f"{diff:.3g}", parameter_tol=PARAMETER_TOL))
    print(f"two processes vs one on the global batch B={2 * b}: parameters differ by {diff:.3g}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder of the results file ddp.csv (+ ddp.json)")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--sizes", type=parse_size, nargs="+", default=[(32, 512, 64), (8, 4096, 16)],
                        help="per-process B x N x D (default 32x512x64 8x4096x16)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per torchrun")
    args = parser.parse_args()
    for name in ("warmup", "steps"):
        if getattr(args, name) < (0 if name == "warmup" else 1):
            parser.error(f"--{name} must be {'>= 0' if name == 'warmup' else '>= 1'} (got {getattr(args, name)})")
    meta = sdtw_results.collect("ddp", seed=0, device=args.device)
    extras = ("processes", "sequences_per_s", "weak_scaling_efficiency", "eval_loss_start", "eval_loss_end",
              "parameter_max_rel_diff", "parameter_tol")
    with sdtw_results.ResultsWriter(Path(args.out) / "ddp.csv", "ddp", meta, extras) as writer, \
            tempfile.TemporaryDirectory() as tmp:
        throughput_rows(args, writer, Path(tmp))
        equality_rows(args, writer, Path(tmp))


if __name__ == "__main__":
    main()
