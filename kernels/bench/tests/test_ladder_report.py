"""ladder_report.py on a synthetic sdtw_kernels_ladder output: the CSV's columns (the results
schema), the nearest-rank spread, each rung's loss against the rung it adds to, worked out by hand,
and the rung named as losing most."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import sdtw_results

REPORT = Path(__file__).resolve().parents[1] / "ladder_report.py"
_spec = importlib.util.spec_from_file_location("ladder_report", REPORT)
ladder_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ladder_report)

DEVICE = {"device": "Fake H100", "sms": 132, "clock_khz": 1980000, "quick": False, "reps": 5, "warmup": 2}
SPREAD = (1.2, 1.0, 0.9, 1.1, 1.0)  # x median: nearest-rank median 1.0, p10 0.9, p90 1.2


def rung(name, previous, mode, b, n, d, median_ms, cells=None, bandwidth=-1, lengths=False):
    return {"rung": name, "label": f"rung {name}", "mode": mode, "previous": previous, "B": b, "N": n, "M": n,
            "D": d, "bandwidth": bandwidth, "lengths": lengths, "cells": cells or b * n * n, "warmup": 2,
            "times_ms": [t * median_ms for t in SPREAD]}


# Synthetic rungs: 2^30 cells each. Production at B16 N128 D8 (2^18 cells): d loses 16x against b at
# D 8 (the most), d' 1.25x, e 2x, f 1.5x, g gains 2x; the cdist row has b at D 8 before it too.
GIGA = 2 ** 30
B_D8_MS = 3.0
D_MS = 2 ** 18 / (GIGA / B_D8_MS) * 16
RUNGS = [
    rung("0", "", "forward", 2 ** 20, 32, 1, 1.0, cells=GIGA),
    rung("0", "", "backward-cell", 2 ** 20, 32, 1, 0.8, cells=GIGA),
    rung("0", "", "hard-min", 2 ** 20, 32, 1, 0.25, cells=GIGA),
    rung("a", "0", "forward", 2 ** 20, 32, 8, 2.0, cells=GIGA),
    rung("a'", "a", "forward", 2 ** 20, 32, 8, 2.5, cells=GIGA),
    rung("b", "a'", "forward", 2 ** 20, 32, 8, B_D8_MS, cells=GIGA),
    rung("c", "b", "forward", 2 ** 20, 32, 8, 3.3, cells=GIGA),
    rung("a", "0", "forward", 2 ** 20, 32, 64, 4.0, cells=GIGA),
    rung("d", "b", "values", 16, 128, 8, D_MS),
    rung("d'", "d", "forward", 16, 128, 8, D_MS * 1.25),
    rung("e", "d'", "forward+sweep", 16, 128, 8, D_MS * 2.5),
    rung("f", "e", "step", 16, 128, 8, D_MS * 3.75),
    rung("g", "f", "step", 16, 128, 8, D_MS * 1.875, bandwidth=32, lengths=True),
    rung("d", "b", "cdist", 4096, 128, 8, 2 ** 26 / (GIGA / B_D8_MS) * 2),
    rung("d", "b", "values", 16, 128, 16, 1.0),  # no rung b at D 16 in this run
]


@pytest.fixture
def run(tmp_path):
    text = "\n".join(json.dumps(r) for r in [DEVICE] + RUNGS) + "\n"
    (tmp_path / "ladder.jsonl").write_text(text)
    md = subprocess.run([sys.executable, str(REPORT), str(tmp_path / "ladder.jsonl"), "--commit", "abc", "--date",
                         "2026-11-26", "--csv", str(tmp_path / "ladder.csv")],
                        capture_output=True, text=True, check=True).stdout
    rows, sidecar = sdtw_results.read_results(tmp_path / "ladder.csv")
    return md, rows, sidecar


def by_key(rows):
    return {(r["rung"], r["mode"], int(r["B"]), int(r["D"])): r for r in rows}


def test_the_csv_is_a_results_file_of_the_schema(run):
    md, rows, sidecar = run
    assert list(rows[0]) == ladder_report.COLUMNS == sdtw_results.COLUMNS + ladder_report.EXTRA_COLUMNS
    assert len(rows) == len(RUNGS)
    meta = sidecar["metadata"]
    assert (meta["tool"], meta["gpu"], meta["commit"], meta["date"], meta["sms"]) == (
        "ladder", "Fake H100", "abc", "2026-11-26", 132)
    for r in rows:
        assert (r["tool"], r["grid"], r["api"], r["dtype"], r["disposition"], r["verified"]) == (
            "ladder", "ladder", "kernel", "float32", "passed", "off")
        assert r["impl"] == ("synthetic" if r["rung"] in ("0", "a", "a'", "b", "c") else "ours")
    g = by_key(rows)[("g", "step", 16, 8)]
    assert (g["bandwidth"], g["lengths"]) == ("32", "true")
    assert by_key(rows)[("f", "step", 16, 8)]["bandwidth"] == "none"


def test_time_is_the_nearest_rank_spread_and_cells_per_second_its_median(run):
    _, rows, _ = run
    r = by_key(rows)[("b", "forward", 2 ** 20, 8)]
    assert (float(r["time_ms_median"]), float(r["time_ms_p10"]), float(r["time_ms_p90"])) == pytest.approx(
        (3.0, 2.7, 3.6))
    assert (r["reps"], r["warmup"], r["cells"]) == ("5", "2", str(GIGA))
    assert float(r["cells_per_s"]) == pytest.approx(GIGA / 3e-3)


def test_each_rung_loses_against_the_rung_it_adds_to(run):
    _, rows, _ = run
    k = by_key(rows)
    expected = {("a", "forward", 2 ** 20, 8): 2.0, ("a'", "forward", 2 ** 20, 8): 1.25, ("b", "forward", 2 ** 20, 8): 1.2,
                ("c", "forward", 2 ** 20, 8): 1.1, ("a", "forward", 2 ** 20, 64): 4.0,
                ("d", "values", 16, 8): 16.0, ("d'", "forward", 16, 8): 1.25, ("e", "forward+sweep", 16, 8): 2.0,
                ("f", "step", 16, 8): 1.5, ("g", "step", 16, 8): 0.5, ("d", "cdist", 4096, 8): 2.0}
    for key, loss in expected.items():
        assert float(k[key]["loss_vs_previous"]) == pytest.approx(loss), key
    for key in [("0", "forward", 2 ** 20, 1), ("0", "hard-min", 2 ** 20, 1), ("d", "values", 16, 16)]:
        assert k[key]["loss_vs_previous"] == "", key


def test_the_markdown_names_the_rung_that_loses_most(run):
    md, _, _ = run
    assert "GPU: Fake H100 (132 SMs); commit: abc; date: 2026-11-26;" in md
    assert md.count("\n| ") == 1 + len(RUNGS)  # the header and a row per rung
    assert "**Loses most: rung d (rung d) at B16 N128 D8, 16.00x against rung b at 1048576 threads x 32 x 32, D 8.**" in md
    assert "| g (step) | rung g | B16 N128 D8, band 32, lengths |" in md
    assert "| a' (forward) | rung a' | 1048576 threads x 32 x 32, D 8 |" in md
    assert "| 0.50 |" in md
    # per point, the largest loss among its production rungs
    assert "- B16 N128 D8: rung d (rung d), 16.00x" in md and "- B4096 N128 D8 (cdist): rung d (rung d), 2.00x" in md
    assert "B16 N128 D16:" not in md  # its only rung has no previous rung here


def test_the_markdown_walks_each_point_from_the_ceiling_to_its_step(run):
    md, _, _ = run
    # 2 x 1.25 x 1.2 x 16 x 1.25 x 2 x 1.5 = 180: the ceiling's 2^30 cells in 1 ms against f's
    assert ("- B16 N128 D8: 0 -> a 2.00 -> a' 1.25 -> b 1.20 -> d 16.00 -> d' 1.25 -> e 2.00 -> f 1.50 = 180.0x "
            "below the ceiling; most: rung d (rung d), 16.00x") in md
    # cdist's path ends at its only rung, d, after b at D 8: 2 x 1.25 x 1.2 x 2 = 6
    assert "- B4096 N128 D8 (cdist): 0 -> a 2.00 -> a' 1.25 -> b 1.20 -> d 2.00 = 6.0x below the ceiling" in md
    assert md.count(" below the ceiling; most: ") == 2  # B16 N128 D16 has no path to the ceiling here


def test_fewer_than_five_repetitions_are_refused():
    short = dict(RUNGS[0], times_ms=[1.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="4 timed repetitions, the ladder needs at least 5"):
        ladder_report.read_lines(json.dumps(DEVICE) + "\n" + json.dumps(short))
    with pytest.raises(ValueError, match="device line"):
        ladder_report.read_lines(json.dumps(RUNGS[0]))
