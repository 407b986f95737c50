"""The sidecar's metadata: what ran, where, on which code (the keys of docs/DESIGN.md §5). git as sdtw-bench
reads it (harness/src/core/metadata.cpp git_info)."""
import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _run(cmd, cwd=ROOT):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=cwd).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def git_commit(environ=None):
    """(commit, dirty): SDTW_GIT_COMMIT names the commit of a copy whose .git is stale or missing (a
    lent GPU machine), dirty then from SDTW_GIT_DIRTY, else "unknown"; otherwise git, results/ left
    out of the dirty check."""
    env = os.environ if environ is None else environ
    commit = env.get("SDTW_GIT_COMMIT")
    if commit:
        return commit, env.get("SDTW_GIT_DIRTY") or "unknown"
    commit = _run(["git", "rev-parse", "HEAD"]) or "unknown"
    status = _run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"])
    return commit, "unknown" if commit == "unknown" else ("true" if status else "false")


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def device_info(torch, device):
    """gpu, gpu_count, driver, cuda of the run: empty on the CPU."""
    if device != "cuda":
        return {"gpu": "", "gpu_count": 0, "driver": "", "cuda": ""}
    driver = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"])
    return {"gpu": torch.cuda.get_device_name(0), "gpu_count": torch.cuda.device_count(),
            "driver": driver.splitlines()[0] if driver else "", "cuda": torch.version.cuda or ""}


def collect(tool, seed, device, command=None, **extra):
    """The metadata of a run of `tool` on `device` ("cuda" or "cpu"); extra keys after the common ones."""
    import torch
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"collect: tool must be a non-empty name, got {tool!r}")
    commit, dirty = git_commit()
    meta = {"tool": tool, "command": list(sys.argv if command is None else command), "commit": commit,
            "dirty": dirty, "date": utc_now(), "host": platform.node(), **device_info(torch, device),
            "torch": torch.__version__, "seed": seed}
    clash = sorted(set(extra) & set(meta))
    if clash:
        raise ValueError(f"collect: extra keys {clash} repeat common metadata keys")
    meta.update(extra)
    return meta
