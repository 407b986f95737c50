"""What a run ran on: the schema's metadata (sdtw_results: GPU, driver, CUDA, torch, commit, ...), then
numba, numpy and each original's upstream commit (from peers/README.md's table), version and a hash of
its sources (what exactly was imported)."""
import hashlib
import importlib.metadata
import platform
import re
from pathlib import Path

import sdtw_results

from baselines.originals.implementations import ORIGINALS

ROOT = Path(__file__).resolve().parents[2]


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


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


def collect(device, peers, settings, config_path, method, method_text, reference):
    extra = {"config": str(config_path), "method": method, "method_text": method_text, "reference": reference,
             "settings": settings, "python": platform.python_version(), "numba": _version("numba"),
             "numba_cuda": _version("numba-cuda"), "numpy": _version("numpy"), "originals": originals(peers),
             "complete": False}
    return sdtw_results.collect("originals", int(settings["seed"]), device, **extra)
