"""What a run ran on: GPU, driver, CUDA, torch, numba, numpy, our commit, and each original's upstream
commit (from peers/README.md's table), version and a hash of its sources (what exactly was imported)."""
import datetime
import hashlib
import importlib.metadata
import os
import platform
import re
import subprocess
from pathlib import Path

from baselines.originals.implementations import ORIGINALS

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def git_commit():
    """As sdtw-bench (harness/src/core/metadata.cpp git_info): SDTW_GIT_COMMIT names the commit of a
    copy whose .git is stale or missing (the GPU machine), dirty then only from SDTW_GIT_DIRTY (else
    unknown); otherwise git, results/ left out of the dirty check."""
    commit = os.environ.get("SDTW_GIT_COMMIT")
    if commit:
        return commit, os.environ.get("SDTW_GIT_DIRTY") or "unknown"
    commit = _run(["git", "rev-parse", "HEAD"]) or "unknown"
    status = _run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"])
    return commit, "unknown" if commit == "unknown" else ("true" if status else "false")


def commit_label():
    """git_commit() as one field for a results row: the commit, marked ' (dirty)' when the tree was."""
    commit, dirty = git_commit()
    return commit + (" (dirty)" if dirty == "true" else "")


def upstream_commits(peers):
    """folder -> commit, from the table of peers/README.md (| folder/ | upstream | commit | import |)."""
    readme = Path(peers) / "README.md" if peers else None
    out = {}
    if readme and readme.exists():
        for line in readme.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[0].rstrip("/") in ORIGINALS and re.fullmatch(r"[0-9a-f]{7,40}", cells[2]):
                out[cells[0].rstrip("/")] = cells[2]
    return out


def _source_hash(folder):
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*.py")):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def originals(peers):
    commits = upstream_commits(peers)
    out = {}
    for folder, (upstream, module) in ORIGINALS.items():
        entry = {"upstream": upstream, "module": module}
        path = Path(peers) / folder if peers else None
        if path and path.is_dir():
            pyproject = path / "pyproject.toml"
            version = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.M) if pyproject.exists() else None
            init = path / module / "__init__.py"
            version = version or (re.search(r"__version__\s*=\s*['\"]([^'\"]+)", init.read_text()) if init.exists() else None)
            entry.update(source=str(path), commit=commits.get(folder, "unknown (not in peers/README.md)"),
                         version=version.group(1) if version else "unknown", sources_sha256=_source_hash(path))
        else:
            entry.update(source="installed package", commit="unknown", version=_version(module))
        out[folder] = entry
    return out


def collect(torch, device, peers, settings, config_path, method, method_text, reference):
    meta = {"sweep": "originals", "config": str(config_path), "method": method, "method_text": method_text,
            "reference": reference, "settings": settings, "device": device,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(), "torch": torch.__version__, "numba": _version("numba"),
            "numba_cuda": _version("numba-cuda"), "numpy": _version("numpy"), "host": platform.node(),
            "originals": originals(peers)}
    meta["git_commit"], meta["git_dirty"] = git_commit()
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        meta.update(gpu=props.name, gpu_memory_mb=props.total_memory // (1 << 20), cuda=torch.version.cuda,
                    driver=_run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).split("\n")[0]
                    or "unknown")
    else:
        meta.update(gpu="none (CPU run)", cuda=torch.version.cuda or "none", driver="none")
    return meta
