"""The grids and settings of a run, from a YAML file in the format of configs/paper.yaml (axes B, N, D
as a number, a list or {from, to, mul}), plus `points: [[B, N, D], ...]` and `grids_from: FILE` (that
file's grids first). A point already in an earlier grid is run once, under the first grid's name."""
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SETTINGS = {"warmup": 3, "warmup_seconds": 1.0, "reps": 20, "min_reps": 5, "point_seconds": 5.0,
            "point_timeout": 120.0, "seed": 0, "gamma": 1.0, "verify_max_cells": 1 << 25, "budget_seconds": 0.0}


@dataclass(frozen=True)
class Point:
    grid: str
    B: int
    N: int
    D: int


@dataclass
class Config:
    name: str
    settings: dict
    impls: list
    grids: dict = field(default_factory=dict)  # grid name -> [Point], in run order

    def points(self):
        return [p for pts in self.grids.values() for p in pts]


def _axis(spec, name, where):
    if isinstance(spec, int):
        return [spec]
    if isinstance(spec, list) and spec and all(isinstance(v, int) and v > 0 for v in spec):
        return spec
    if isinstance(spec, dict) and set(spec) == {"from", "to", "mul"} and spec["mul"] > 1 and spec["from"] > 0:
        values, v = [], spec["from"]
        while v <= spec["to"]:
            values.append(v)
            v *= spec["mul"]
        return values
    raise ValueError(f"{where}: {name} must be a positive integer, a list of them or {{from, to, mul > 1}}, got {spec!r}")


def _grid_points(grid, where):
    name = grid.get("name")
    if not name:
        raise ValueError(f"{where}: every grid needs a name")
    if "points" in grid:
        pts = grid["points"]
        if not all(isinstance(p, list) and len(p) == 3 and all(isinstance(v, int) and v > 0 for v in p) for p in pts):
            raise ValueError(f"{where}: grid {name}: points must be [[B, N, D], ...] of positive integers")
        return name, [Point(name, *p) for p in pts]
    axes = [_axis(grid.get(k), k, f"{where}: grid {name}") for k in ("B", "N", "D")]
    return name, [Point(name, b, n, d) for b, n, d in itertools.product(*axes)]


def _grids(path, doc=None):
    """The grids of the YAML file at path (doc: its parsed content, when the caller has it)."""
    doc = yaml.safe_load(Path(path).read_text()) if doc is None else doc
    grids = []
    if doc.get("grids_from"):
        grids += _grids(Path(path).parent / doc["grids_from"])
    grids += [_grid_points(g, path) for g in doc.get("grids", [])]
    return grids


def load(path, overrides=None):
    """The Config of a YAML file; overrides (setting -> value, None = keep) replace its settings."""
    doc = yaml.safe_load(Path(path).read_text())
    unknown = set(doc.get("settings", {})) - set(SETTINGS)
    if unknown:
        raise ValueError(f"{path}: unknown settings {sorted(unknown)} (known: {sorted(SETTINGS)})")
    settings = {k: type(v)(doc.get("settings", {}).get(k, v)) for k, v in SETTINGS.items()}
    settings.update({k: type(SETTINGS[k])(v) for k, v in (overrides or {}).items() if v is not None})
    if settings["reps"] < 1 or settings["min_reps"] < 1 or settings["warmup"] < 0:
        raise ValueError(f"reps and min_reps must be >= 1 and warmup >= 0, got {settings}")
    if settings["gamma"] <= 0:
        raise ValueError(f"gamma must be > 0, got {settings['gamma']}")
    config = Config(doc.get("name", Path(path).stem), settings, list(doc.get("impl", [])))
    seen = set()
    for name, pts in _grids(path, doc):
        fresh = [p for p in sorted(pts, key=lambda p: (p.N, p.B, p.D)) if (p.B, p.N, p.D) not in seen]
        seen.update((p.B, p.N, p.D) for p in fresh)
        if fresh:
            config.grids.setdefault(name, []).extend(fresh)
    return config
