"""The paper's scripts on the committed results and on a small synthetic file: the tables hold the
numbers of the CSV files (read back and compared), missing points are never numbers, the committed
outputs are what the scripts produce, and the notebook runs top to bottom."""
import csv
import math
import os
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PAPER = HERE.parent
ROOT = PAPER.parent
sys.path[:0] = [str(PAPER), str(HERE), str(ROOT)]

import data  # noqa: E402
import make_paper  # noqa: E402
from features_report import COLUMNS as FEATURES_COLUMNS  # noqa: E402  (torch/bench, on the path through data)
from report import _fmt  # noqa: E402
from baselines.originals import runner  # noqa: E402
import synthetic  # noqa: E402
from parse_tables import latex_rows, markdown_rows, matches, number  # noqa: E402

TOKENS = {"failed": "fail", "not_supported": "n/s", "out_of_memory": "OOM", "error": "err"}
SWEEP = ROOT / "results/h100/paper.csv"
PUBLISHED = ROOT / "results/published"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def sweep_index(path):
    """(impl, B, N, D) -> row of the sweep CSV (gamma as in the seed grid, N == M), first one wins."""
    out = {}
    for r in read_csv(path):
        if r["N"] == r["M"]:
            out.setdefault((r["impl"], int(r["B"]), int(r["N"]), int(r["D"])), r)
    return out


def expect(cell, row, field):
    """A cell against its CSV row: the number when the point passed, else the disposition's token."""
    if row is None:
        assert number(cell) is None, f"{cell} printed for a point that is not in the CSV"
    elif row["disposition"] == "passed":
        assert matches(cell, float(row[field])), f"{cell} != {row[field]}"
    else:
        assert cell == TOKENS[row["disposition"]], f"{cell} for a point that {row['disposition']}"


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper")
    make_paper.main(["--out", str(out)])
    return out


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    sweep, accuracy, published = synthetic.write(folder)
    originals = synthetic.write_originals(folder, runner.COLUMNS, runner.METHOD)
    features = synthetic.write_features(folder, FEATURES_COLUMNS)
    out = folder / "paper"
    make_paper.main(["--sweep", str(sweep), "--accuracy", str(accuracy), "--published", str(published),
                     "--originals", str(originals), "--features", str(features), "--out", str(out)])
    return sweep, out


def main_table_cells(path):
    text = path.read_text()
    rows = markdown_rows(text)[1] if path.suffix == ".md" else latex_rows(text)
    return [[c.replace("---", "—") for c in r] for r in rows]


def check_main_table(path, sweep_csv):
    """Each row of the main table against the sweep: MB and ms of Maghoumi, unfused, fused; the saving."""
    index = sweep_index(sweep_csv)
    seed = [(int(r["B"]), int(r["N"]), int(r["D"])) for r in read_csv(sweep_csv) if r["grid"] == "seed-grid"]
    rows = main_table_cells(path)
    assert [tuple(int(c) for c in r[:3]) for r in rows] == list(dict.fromkeys(seed))
    impls = ["maghoumi", "ours_unfused", "ours_fused"]
    for r in rows:
        b, n, d = (int(c) for c in r[:3])
        found = [index.get((i, b, n, d)) for i in impls]
        for k, row in enumerate(found):
            expect(r[3 + k], row, "peak_mb")
            expect(r[6 + k], row, "time_ms_median")
        mag, fused = found[0], found[2]
        if mag["disposition"] == "passed" and fused["disposition"] == "passed":
            saving = float(mag["peak_mb"]) - float(fused["peak_mb"])
            assert matches(r[9], saving) and matches(r[10], 100 * saving / float(mag["peak_mb"]))
        else:
            assert number(r[9]) is None and number(r[10]) is None
    return rows


@pytest.mark.parametrize("suffix", [".md", ".tex"])
def test_main_table_holds_the_sweep(committed, suffix):
    rows = check_main_table(committed / "tables" / f"main{suffix}", SWEEP)
    assert len(rows) >= 1


@pytest.mark.parametrize("suffix", [".md", ".tex"])
@pytest.mark.parametrize("field", ["memory", "runtime"])
def test_comparison_table_holds_every_source(committed, suffix, field):
    """Columns in order: published (Maghoumi), peer, our reimpl., published unfused, peer unfused,
    published fused, peer fused, ours unfused, ours fused; each compared with its own CSV."""
    unit = {"memory": ("mb", "peak_mb", "peak_mb"), "runtime": ("ms", "ms", "time_ms_median")}[field]
    published = {(int(r["B"]), int(r["N"]), int(r["D"])): r for r in read_csv(PUBLISHED / "published-sdtw-cuda-torch.csv")}
    peers = {}
    for name in ("h100-peers-seed-grid.csv", "h100-peers-more.csv"):
        for r in read_csv(PUBLISHED / name):
            peers.setdefault((r["impl"], int(r["B"]), int(r["N"]), int(r["D"])), r)
    ours = sweep_index(SWEEP)
    rows = main_table_cells(committed / "tables" / f"compare_{field}{suffix}")
    assert len(rows) == len(published)
    for r in rows:
        key = tuple(int(c) for c in r[:3])
        sources = [("pub", "maghoumi"), ("peer", "maghoumi"), ("ours", "maghoumi"), ("pub", "ours_unfused"),
                   ("peer", "bgu_unfused"), ("pub", "ours_fused"), ("peer", "bgu_fused"), ("ours", "ours_unfused"),
                   ("ours", "ours_fused")]
        for cell, (kind, impl) in zip(r[3:], sources):
            if kind == "pub":
                v = published[key][f"{impl}_{unit[0]}"]
                assert matches(cell, float(v)) if v else number(cell) is None
            elif kind == "peer":
                row = peers.get((impl,) + key)
                v = float(row[unit[1]]) if row else math.nan
                assert matches(cell, v) if not math.isnan(v) else number(cell) is None
            else:
                expect(cell, ours.get((impl,) + key), unit[2])


def test_committed_outputs_are_what_the_scripts_make(committed):
    """paper/ holds what `python3 paper/make_paper.py` makes from the committed results (text exactly;
    figures by name: PNG bytes depend on the font stack)."""
    for rel in ["report.md"] + [f"tables/{p.name}" for p in (committed / "tables").iterdir()]:
        assert (PAPER / rel).read_text() == (committed / rel).read_text(), \
            f"paper/{rel} is stale: run python3 paper/make_paper.py and commit"
    assert sorted(p.name for p in (committed / "figures").iterdir()) == \
        sorted(p.name for p in (PAPER / "figures").iterdir())


def test_figures_name_gpu_commit_and_date(committed):
    report = (committed / "report.md").read_text()
    assert "NVIDIA H100" in report and "commit" in report
    for png in (committed / "figures").glob("*.png"):
        assert png.stat().st_size > 10_000
        assert png.with_suffix(".pdf").exists()


def test_synthetic_main_table_marks_missing_points(synth):
    sweep, out = synth
    for suffix in (".md", ".tex"):
        check_main_table(out / "tables" / f"main{suffix}", sweep)
    md = (out / "tables/main.md").read_text()
    assert "n/s = not supported (synthetic: too long for one block)" in md
    assert "fail = failed verification (synthetic: gradient off)" in md
    assert "measured 0.32 ms" in md  # what the failed point did measure is in its note
    assert "Synthetic GPU 1GB" in md and "abc1234" in md and "2030-01-02" in md
    assert not (out / "tables/compare_memory.md").exists()  # no published numbers given


def test_synthetic_figures_leave_missing_points_out(synth):
    """No missing point is drawn as a value (the line has NaN there, never 0), and each reason is in
    the caption."""
    import data
    import figures
    sweep, out = synth
    results = data.Results(sweep, sweep.parent / "accuracy.csv", sweep.parent / "published")
    figs = figures.all_figures(results)
    assert set(figs) == {"length", "dimension", "seed_grid", "speedup", "grad_error"}
    missing_x = {"length": ("Maghoumi", 64), "dimension": ("ours, fused", 8)}
    for name, (who, x) in missing_x.items():
        lines = [l for ax in figs[name].axes for l in ax.get_lines() if l.get_label().startswith(who)]
        assert lines
        for l in lines:
            xs, ys = list(l.get_xdata()), list(l.get_ydata())
            assert 0 not in ys
            assert math.isnan(ys[xs.index(x)])
    captions = {n: f.texts[-1].get_text().replace("\n", " ") for n, f in figs.items()}
    assert "out of memory at N = 64" in captions["length"]
    assert "error (synthetic: launch error) at D = 8" in captions["dimension"]
    assert "not supported (synthetic: too long for one block) at B = 2, N = 32, D = 1" in captions["speedup"]
    assert "not supported at N = 32, gamma in {1, 0.1}" in captions["grad_error"]
    for f in figs.values():
        assert "Synthetic GPU 1GB" in f.texts[0].get_text() + "".join(t.get_text() for t in f.texts)
    report = (out / "report.md").read_text()
    assert "synthetic: launch error" in report and "out of memory" in report


@pytest.mark.parametrize("which", ["committed", "synthetic"])
def test_notebook_runs_headless(synth, which, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(ROOT / "notebooks/explore_results.ipynb", as_version=4)
    env = {"SDTW_RESULTS": str(synth[0])} if which == "synthetic" else {}
    old = dict(os.environ)
    os.environ.update(env)
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(old)
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) >= 4


def test_latex_tables_are_balanced(committed):
    """No TeX in CI: at least every brace and environment the tables open, they close."""
    for tex in (committed / "tables").glob("*.tex"):
        text = tex.read_text().replace(r"\{", "").replace(r"\}", "")
        assert text.count("{") == text.count("}"), tex.name
        opened = [l.split("{")[1].split("}")[0] for l in text.split(r"\begin")[1:]]
        closed = [l.split("{")[1].split("}")[0] for l in text.split(r"\end")[1:]]
        assert sorted(opened) == sorted(closed), tex.name


def originals_index(path):
    return {(r["impl"], int(r["B"]), int(r["N"]), int(r["D"])): r for r in read_csv(path)}


def _value(row, field):
    return float(row[field]) if row and row["disposition"] == "passed" else None


@pytest.mark.parametrize("field", ["ms", "step_mb", "peak_mb"])
def test_synthetic_originals_tables_hold_the_file_and_its_ratios(synth, field):
    """Each cell is its row of originals.csv; each ratio is two numbers of that one file divided."""
    sweep, out = synth
    index = originals_index(sweep.parent / "originals.csv")
    column = {"ms": "time_ms_median"}.get(field, field)
    name = {"ms": "originals_runtime", "step_mb": "originals_step_memory", "peak_mb": "originals_peak_memory"}[field]
    tokens = {"error": "err", "out_of_memory": "OOM"}
    for suffix in (".md", ".tex"):
        rows = main_table_cells(out / "tables" / f"{name}{suffix}")
        assert [tuple(int(c) for c in r[:3]) for r in rows] == synthetic.ORIGINALS_POINTS
        for r in rows:
            key = tuple(int(c) for c in r[:3])
            found = [index[(impl,) + key] for impl in synthetic.ORIGINALS_IMPLS]
            for c, row in zip(r[3:9], found):
                if row["disposition"] == "passed":
                    assert matches(c, float(row[column]))
                else:
                    assert c == tokens[row["disposition"]]
            ours = _value(found[0], column)
            fused = _value(found[2], column)
            assert matches(r[9], fused / ours)
            best = min(v / ours for v in (_value(row, column) for row in found[2:]) if v is not None)
            assert matches(r[10], best)


def test_synthetic_report_ratios_are_the_originals_file(synth):
    sweep, out = synth
    index = originals_index(sweep.parent / "originals.csv")
    report = (out / "report.md").read_text()
    for field, column, what in [("step_mb", "step_mb", "step memory"), ("peak_mb", "peak_mb", "absolute peak"),
                                ("ms", "time_ms_median", "speed-up")]:
        ratios = []
        for b, n, d in synthetic.ORIGINALS_POINTS:
            base = _value(index[("sdtw_cuda_torch_fused", b, n, d)], column)
            ours = _value(index[("ours_fused", b, n, d)], column)
            ratios.append(base / ours)
        line = next(l for l in report.splitlines()
                    if l.startswith(f"- Against softdtw-cuda-torch, fused (Python step): {what} "))
        shown = [float(v) for v in re.findall(r"([0-9.]+)× \(", line)]
        assert len(shown) == 2 and rounded(shown[0], min(ratios)) and rounded(shown[1], max(ratios)), line


def rounded(shown, value):
    """True when shown is value as the report prints a ratio."""
    return shown == float(_fmt(value))


def test_a_ratio_between_two_methods_is_refused(synth):
    """ours_fused of the sweep (sdtw-bench) against an original of originals.csv (Python step), or the
    one-process re-run against the sweep: point_ratio raises instead of dividing."""
    sweep, _ = synth
    results = data.Results(sweep, None, sweep.parent / "published", sweep.parent / "originals.csv")
    pts = results.all_points()
    with pytest.raises(data.MixedMethods, match="mixes methods"):
        data.point_ratio(pts, "step:sdtw_cuda_torch_fused", "ours_fused", (2, 16, 1), "ms")
    value, _ = data.point_ratio(pts, "step:sdtw_cuda_torch_fused", "step:ours_fused", (2, 16, 1), "ms")
    assert value == pytest.approx(synthetic.originals_value("sdtw_cuda_torch_fused", 16, 1, "ms")
                                  / synthetic.originals_value("ours_fused", 16, 1, "ms"))
    committed = data.Results(SWEEP, None, PUBLISHED).all_points()
    with pytest.raises(data.MixedMethods):
        data.point_ratio(committed, "peer:bgu_fused", "ours_fused", (16, 128, 64), "peak_mb")
    with pytest.raises(data.MixedMethods):
        data.point_ratio(committed, "pub:bgu_fused", "ours_fused", (16, 128, 64), "ms")


def test_without_the_originals_and_features_files_no_ratio_against_the_originals_is_claimed(tmp_path):
    make_paper.main(["--originals", str(tmp_path / "absent.csv"), "--features", str(tmp_path / "nofeatures.csv"),
                     "--out", str(tmp_path)])
    report = (tmp_path / "report.md").read_text()
    claims = report.split("## Tables")[0]
    assert claims.count("**Not measured yet:** `absent.csv` (baselines/originals) is absent") == 2
    for original in ("softdtw-cuda-torch", "pytorch-softdtw-cuda", "pysdtw"):
        assert f"Against {original}" not in claims
    assert not list((tmp_path / "tables").glob("originals_*"))
    assert claims.count("**Not measured yet:** `nofeatures.csv` (torch/bench/features.py) is absent") == 2
    assert not (tmp_path / "figures/cdist.png").exists() and not (tmp_path / "figures/barycenter.png").exists()


def features_rows(folder, kind):
    return [r for r in read_csv(folder / "features.csv") if r["kind"] == kind]


def test_synthetic_features_figures_leave_missing_points_out(synth):
    """cdist pairs/s and barycenter ms per iteration: a point that did not pass is NaN on its line and
    its reason is in the caption; the stamp is features.csv's GPU and commit."""
    import figures
    sweep, out = synth
    results = data.Results(sweep, None, None, None, sweep.parent / "features.csv")
    figs = {n: f for n, f in figures.all_figures(results).items() if n in ("cdist", "barycenter")}
    assert set(figs) == {"cdist", "barycenter"}
    line = lambda fig, who: next(l for ax in fig.axes for l in ax.get_lines() if l.get_label() == who)  # noqa: E731
    cdist = line(figs["cdist"], "B1 = B2 = 4, D = 1")
    xs, ys = list(cdist.get_xdata()), list(cdist.get_ydata())
    assert math.isnan(ys[xs.index(64)]) and 0 not in ys
    passed = {int(r["N"]): float(r["pairs_per_s"]) for r in features_rows(sweep.parent, "cdist")
              if (r["B1"], r["D"], r["disposition"]) == ("4", "1", "passed")}
    assert passed and all(ys[xs.index(n)] == pytest.approx(v) for n, v in passed.items())
    captions = {n: f.texts[-1].get_text().replace("\n", " ") for n, f in figs.items()}
    assert "error (RuntimeError: synthetic cdist launch error) at B = 4, D = 1, N = 64" in captions["cdist"]
    assert "failed verification (sampled value error 3e-05 > 1e-05) at B = 8, D = 1, N = 16" in captions["cdist"]
    assert "target ms <= 5" in captions["cdist"] and "CUDA events" in captions["cdist"]
    assert "not supported (synthetic: needs CUDA (numba)) at D = 3, N = 40" in captions["barycenter"]
    assert "error (RuntimeError: synthetic barycenter error) at D = 3, N = 20" in captions["barycenter"]
    # a ratio is written only where the objectives agree; the point over the limit is named instead
    ratios = [t for ax in figs["barycenter"].axes for t in ax.texts if t.get_text().endswith("×")]
    agree = [r for r in features_rows(sweep.parent, "barycenter")
             if r["ratio"] and float(r["objective_rel_diff"]) <= data.OBJECTIVE_REL_MAX]
    assert len(ratios) == len(agree) and "no ratio where they differ: D = 3, N = 80: 0.004" in captions["barycenter"]
    for f in figs.values():
        assert any(synthetic.FEATURES_GPU in t.get_text() and synthetic.FEATURES_COMMIT in t.get_text()
                   for t in f.texts)
    assert (out / "figures/cdist.png").exists() and (out / "figures/barycenter.pdf").exists()


def test_synthetic_features_claims_are_the_file(synth):
    """The cdist and barycenter claims: the target verdicts and the numbers as the CSV has them, the
    ratio range only over points where both implementations passed."""
    sweep, out = synth
    claims = (out / "report.md").read_text().split("## Tables")[0]
    cdist = claims.split("## 5. Pairwise distances (cdist)")[1].split("## 6.")[0]
    bary = claims.split("## 6. Barycenters")[1]
    target = next(r for r in features_rows(sweep.parent, "cdist") if r["target"])
    assert f"Target point B1 = B2 = 8, N = 32, D = 2: {_fmt(float(target['ms']))} ms" in cdist
    assert f"target ms <= 5: **{'met' if target['target_met'] == 'yes' else 'not met'}**" in cdist
    assert "Not passed at B1 = B2 = 4, N = 64, D = 1: error (RuntimeError: synthetic cdist launch error)." in cdist
    assert synthetic.FEATURES_COMMIT in cdist and "CUDA events" in cdist
    rows = features_rows(sweep.parent, "barycenter")
    both = [float(r["ratio"]) for r in rows if r["ratio"] and float(r["objective_rel_diff"]) <= data.OBJECTIVE_REL_MAX]
    apart = [r for r in rows if r["ratio"] and float(r["objective_rel_diff"]) > data.OBJECTIVE_REL_MAX]
    assert len(apart) == len(synthetic.OBJECTIVE_APART) and max(float(r["ratio"]) for r in apart) > max(both)
    line = next(l for l in bary.splitlines() if l.startswith("- Where both ran"))
    shown = [float(v) for v in re.findall(r"([0-9.]+)× \(", line)]
    assert line.startswith(f"- Where both ran and their objectives agree (relative difference <= 0.001; "
                           f"{len(both)} points)")
    assert rounded(shown[0], min(both)) and rounded(shown[1], max(both)), line
    for r in apart:  # left out of the range, and said so with its difference
        where = f"B = {r['B']}, N = {r['N']}, D = {r['D']}"
        assert f"No ratio at {where}: both ran, but the objectives differ by " \
               f"{float(r['objective_rel_diff']):.2g}" in bary
        assert where not in line
    target = next(r for r in rows if r["target"])
    assert target["target_met"] == "yes" and "**met**" in bary
    assert f"ratio {_fmt(float(target['ratio']))}×" in bary
    assert "softdtw-cuda-torch not measured at B = 5, N = 40, D = 3: not supported (synthetic: needs CUDA" in bary
    assert "[figures/cdist.png]" in cdist and "[figures/barycenter.png]" in bary


def test_jitter_names_points_whose_median_the_host_set():
    import pandas as pd
    from report import jittery

    square = pd.DataFrame({"impl": ["ours_fused", "ours_fused", "maghoumi", "ours_fused"], "B": [16, 32, 16, 8],
                           "N": [128, 512, 256, 64], "D": [64, 64, 1, 1],
                           "disposition": ["passed", "passed", "passed", "failed"],
                           "time_ms_median": [0.676, 0.61, 1.2, 9.0], "time_ms_min": [0.225, 0.60, 1.0, 1.0]})
    assert jittery(square, ["ours_fused", "maghoumi"]) == ["B=16 N=128 D=64"]  # failed rows do not count
