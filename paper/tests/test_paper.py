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
import figures  # noqa: E402
import make_paper  # noqa: E402
import sources  # noqa: E402
from report import _fmt  # noqa: E402
import sdtw_results  # noqa: E402
import synthetic  # noqa: E402
from parse_tables import latex_rows, markdown_rows, matches, number  # noqa: E402

TOKENS = {"failed": "fail", "not_supported": "n/s", "out_of_memory": "OOM", "error": "err"}
SWEEP = ROOT / "results/h100/paper.csv"
PUBLISHED = ROOT / "results/published"
# The committed results are regenerated in the schema by scripts/reproduce.sh; until then they are skipped.
NEW_LAYOUT = sources.read_sidecar(SWEEP).get("schema") == sources.SCHEMA if SWEEP.exists() else False
committed_layout = pytest.mark.skipif(not NEW_LAYOUT, reason="results/h100 is not in the sdtw-results/1 layout yet")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def sweep_index(path):
    """(impl, B, N, D) -> row of the sweep CSV (gamma as in the seed grid, N == M), first one wins."""
    out = {}
    for r in read_csv(path):
        if r["N"] == r["M"]:
            out.setdefault((sources.implementation(r["impl"], r["mode"]), int(r["B"]), int(r["N"]), int(r["D"])), r)
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
    if not NEW_LAYOUT:
        pytest.skip("results/h100 is not in the sdtw-results/1 layout yet (scripts/reproduce.sh regenerates it)")
    out = tmp_path_factory.mktemp("paper")
    # Staleness as of the commit that made the committed outputs: a later change of the code marks them
    # STALE when make_paper runs again (test_staleness checks that marking), but they stay what the
    # scripts made from the committed results.
    made_at = sources.git(ROOT, "log", "-1", "--format=%H", "--", "paper/report.md") or "HEAD"
    make_paper.main(["--out", str(out), "--readme", "none", "--stale-as-of", made_at])
    return out


def write_synthetic(folder):
    sweep, accuracy, published, grid = synthetic.write(folder)
    synthetic.write_originals(folder)
    synthetic.write_features(folder)
    return sweep


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    folder = tmp_path_factory.mktemp("synthetic")
    sweep = write_synthetic(folder)
    out = folder / "paper"
    make_paper.main(["--results", str(folder), "--published", str(folder / "published"), "--out", str(out)])
    return sweep, out


@pytest.fixture(scope="module")
def synth_figures(synth):
    sweep, _ = synth
    folder = sweep.parent
    results = data.Results(sweep, folder / "grad-accuracy.csv", folder / "published", folder / "originals.csv",
                           folder / "features.csv", folder / "accuracy-grid.csv")
    return results, figures.all_figures(results)


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
            expect(r[3 + k], row, "abs_peak_mb")
            expect(r[6 + k], row, "time_ms_median")
        mag, fused = found[0], found[2]
        if mag["disposition"] == "passed" and fused["disposition"] == "passed":
            saving = float(mag["abs_peak_mb"]) - float(fused["abs_peak_mb"])
            assert matches(r[9], saving) and matches(r[10], 100 * saving / float(mag["abs_peak_mb"]))
        else:
            assert number(r[9]) is None and number(r[10]) is None
    return rows


@committed_layout
@pytest.mark.parametrize("suffix", [".md", ".tex"])
def test_main_table_holds_the_sweep(committed, suffix):
    rows = check_main_table(committed / "tables" / f"main{suffix}", SWEEP)
    assert len(rows) >= 1


@committed_layout
@pytest.mark.parametrize("suffix", [".md", ".tex"])
@pytest.mark.parametrize("field", ["memory", "runtime"])
def test_comparison_table_holds_every_source(committed, suffix, field):
    """Columns in order: published (Maghoumi), peer, our reimpl., published unfused, peer unfused,
    published fused, peer fused, ours unfused, ours fused; each compared with its own CSV."""
    unit = {"memory": ("mb", "peak_mb", "abs_peak_mb"), "runtime": ("ms", "ms", "time_ms_median")}[field]
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
    assert "Synthetic GPU 1GB" in md and "abc1234 STALE" in md and "2030-01-02" in md
    assert not (out / "tables/compare_memory.md").exists()  # no published numbers given


def test_synthetic_figures_leave_missing_points_out(synth_figures):
    """No missing point is drawn as a value (the line has NaN there, never 0), and each reason is in
    the caption."""
    _, figs = synth_figures
    assert set(figs) == {"length", "dimension", "seed_grid", "speedup", "grad_error", "cdist", "barycenter"}
    missing_x = {"length": ("Maghoumi", 64), "dimension": ("ours, fused", 8)}
    for name, (who, x) in missing_x.items():
        lines = [l for ax in figs[name].axes for l in ax.get_lines() if l.get_label().startswith(who)]
        assert lines
        for l in lines:
            xs, ys = list(l.get_xdata()), list(l.get_ydata())
            assert 0 not in ys
            assert math.isnan(ys[xs.index(x)])
    captions = {n: figures.caption_of(f) for n, f in figs.items()}
    assert "out of memory at N = 64" in captions["length"]
    assert "error (synthetic: launch error) at D = 8" in captions["dimension"]
    assert "not supported (synthetic: too long for one block) at B = 2, N = 32, D = 1" in captions["speedup"]
    assert "not supported (synthetic: too long) at N = 32, gamma in {1, 0.1}" in captions["grad_error"]
    # a row that ran over its tolerance is failed, never drawn as a value
    assert "failed verification (grad_err 0.003 > 0.0001) at N = 64" in captions["length"]


def axes_y(ax, y):
    """A data y of ax in axes fractions (0 bottom, 1 top)."""
    return ax.transAxes.inverted().transform(ax.transData.transform((1, y)))[1]


def crosses(ax):
    return [l for l in ax.get_lines() if l.get_gid() == "missing" and l.get_marker() == "x"]


def test_missing_markers_lie_above_every_value_in_a_band_of_their_own():
    """figures.draw and figures.finish on a panel with values and missing points: every cross sits above
    every drawn value (never inside the data range), lanes do not overlap, the legend has an entry."""
    import matplotlib.pyplot as plt
    fig, axes = figures.new_figure(1, 1)
    ax = axes[0][0]
    gaps = figures.Gaps()
    xs = [16, 32, 64]
    figures.draw(ax, "ours_fused", xs, [(1.0, ""), (None, "error (x)"), (100.0, "")], gaps, lambda x: (("N", x),))
    figures.draw(ax, "maghoumi", xs, [(None, "out of memory"), (3.0, ""), (None, "not measured")], gaps,
                 lambda x: (("N", x),))
    figures.log_axes(ax, xs, "N", "ms")
    figures.finish(fig, axes, "t", "stamp", gaps.caption(), ["ours_fused", "maghoumi"])
    fig.canvas.draw()
    top_value = max(axes_y(ax, y) for y in figures.values_of(ax))
    marks = crosses(ax)
    assert len(marks) == 2  # "not measured" is said in the caption, not drawn
    heights = sorted(m.get_ydata()[0] for m in marks)  # axes fractions (x axis transform)
    assert heights[0] > top_value + figures.BAND_GAP / 2 and heights[1] - heights[0] >= figures.BAND_LANE * 0.99
    assert all(h < 1 for h in heights)
    assert figures.MISSING_LEGEND in [t.get_text() for t in fig.legends[0].get_texts()]
    assert "not measured (not in its file) at N = 64" in gaps.caption()
    plt.close(fig)


def test_every_figure_keeps_its_crosses_out_of_the_data_and_its_legend_in_the_canvas(synth_figures):
    _, figs = synth_figures
    for name, fig in figs.items():
        fig.canvas.draw()
        for ax in fig.axes:
            values = figures.values_of(ax)
            if not values or not crosses(ax):
                continue
            top_value = max(axes_y(ax, y) for y in values)
            assert min(m.get_ydata()[0] for m in crosses(ax)) > top_value, f"{name}: a cross inside the data"
        box = fig.legends[0].get_window_extent()
        assert box.x0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1, f"{name}: legend outside"


def test_stamps_name_their_own_files_and_commits(synth_figures):
    results, figs = synth_figures
    folder = results.sweep_csv.parent
    expected = {"length": ["paper.csv", "originals.csv"], "speedup": ["paper.csv", "originals.csv"],
                "grad_error": ["grad-accuracy.csv"], "cdist": ["features.csv"], "barycenter": ["features.csv"]}
    for name, files in expected.items():
        stamp = figures.stamp_of(figs[name]).replace("\n", " ")
        for f in files:
            meta = sources.read_sidecar(folder / f)
            assert f"{f} · {meta['gpu']} · commit {meta['commit'][:7]} STALE" in stamp, (name, stamp)
    assert "paper.csv" not in figures.stamp_of(figs["grad_error"])  # its own file, not the sweep's


def test_one_colour_per_implementation_across_figures(synth_figures):
    _, figs = synth_figures
    colours = {}
    for fig in figs.values():
        for ax in fig.axes:
            for line in ax.get_lines():
                if line.get_gid() == "missing" or not line.get_label() or line.get_label().startswith("_"):
                    continue
                impl = line.get_label().replace(" (Python step)", "").replace(", softdtw_barycenter", "")
                colours.setdefault(impl, set()).add(line.get_color())
    assert all(len(c) == 1 for c in colours.values()), colours
    assert colours["ours, fused"] == {figures.COLOURS["ours_fused"]}
    assert colours["softdtw-cuda-torch, fused"] == colours["softdtw-cuda-torch (fused)"]
    assert len({next(iter(c)) for k, c in colours.items() if not k.startswith("B1")}) >= 6


def test_peak_and_step_memory_on_separate_panels_and_a_tolerance_line(synth_figures):
    _, figs = synth_figures
    labels = [ax.get_ylabel() for ax in figs["speedup"].axes]
    assert "absolute peak ratio (×)" in labels and "step memory ratio (×)" in labels
    assert not any("saving" in l for l in labels)
    length = [ax.get_ylabel() for ax in figs["length"].axes]
    assert "absolute peak memory (MB)" in length and "step memory (MB)" in length
    tolerance = [l for ax in figs["grad_error"].axes for l in ax.get_lines() if list(l.get_ydata()) == [1e-4, 1e-4]]
    assert tolerance and "tolerance 0.0001 (ours)" in [t.get_text() for t in figs["grad_error"].legends[0].get_texts()]


def test_cdist_has_several_y_tick_labels(synth_figures):
    _, figs = synth_figures
    ax = figs["cdist"].axes[0]
    figs["cdist"].canvas.draw()
    lo, hi = ax.get_ylim()
    shown = [t for t in ax.yaxis.get_majorticklabels() + ax.yaxis.get_minorticklabels()
             if t.get_text() and lo <= t.get_position()[1] <= hi]
    assert len(shown) >= 3, [t.get_text() for t in shown]


@pytest.mark.parametrize("which", ["committed", "synthetic"])
def test_notebook_runs_headless(synth, which, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    if which == "committed" and not NEW_LAYOUT:
        pytest.skip("results/h100 is not in the sdtw-results/1 layout yet")
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


def test_latex_tables_are_balanced(synth):
    """No TeX in CI: at least every brace and environment the tables open, they close."""
    _, out = synth
    for tex in (out / "tables").glob("*.tex"):
        text = tex.read_text().replace(r"\{", "").replace(r"\}", "")
        assert text.count("{") == text.count("}"), tex.name
        opened = [l.split("{")[1].split("}")[0] for l in text.split(r"\begin")[1:]]
        closed = [l.split("{")[1].split("}")[0] for l in text.split(r"\end")[1:]]
        assert sorted(opened) == sorted(closed), tex.name


def originals_index(path):
    return {(sources.implementation(r["impl"], r["mode"]), int(r["B"]), int(r["N"]), int(r["D"])): r
            for r in read_csv(path)}


def _value(row, field):
    """A passed row's field, as the paper judges it (over its tolerance, or 1e-4 where none: not passed)."""
    if not row or row["disposition"] != "passed":
        return None
    if row["grad_err"] and float(row["grad_err"]) > float(row["grad_tol"] or data.ORIGINALS_GRAD_TOL):
        return None
    return float(row[field])


@pytest.mark.parametrize("field", ["ms", "step_mb", "peak_mb"])
def test_synthetic_originals_tables_hold_the_file_and_its_ratios(synth, field):
    """Each cell is its row of originals.csv; each ratio is two numbers of that one file divided."""
    sweep, out = synth
    index = originals_index(sweep.parent / "originals.csv")
    column = {"ms": "time_ms_median", "step_mb": "step_peak_mb", "peak_mb": "abs_peak_mb"}[field]
    name = {"ms": "originals_runtime", "step_mb": "originals_step_memory", "peak_mb": "originals_peak_memory"}[field]
    tokens = {"error": "err", "out_of_memory": "OOM", "failed": "fail"}
    for suffix in (".md", ".tex"):
        rows = main_table_cells(out / "tables" / f"{name}{suffix}")
        assert [tuple(int(c) for c in r[:3]) for r in rows] == synthetic.ORIGINALS_POINTS
        for r in rows:
            key = tuple(int(c) for c in r[:3])
            found = [index[(impl,) + key] for impl in synthetic.ORIGINALS_KEYS]
            for c, row in zip(r[3:9], found):
                v = _value(row, column)
                if v is not None:
                    assert matches(c, v)
                else:
                    judged = "failed" if row["disposition"] == "passed" else row["disposition"]
                    assert c == tokens[judged]
            ours = _value(found[0], column)
            fused = _value(found[2], column)
            assert matches(r[9], fused / ours)
            best = min(v / ours for v in (_value(row, column) for row in found[2:]) if v is not None)
            assert matches(r[10], best)


def test_synthetic_report_ratios_are_the_originals_file(synth):
    sweep, out = synth
    index = originals_index(sweep.parent / "originals.csv")
    report = (out / "report.md").read_text()
    for column, what in [("step_peak_mb", "step memory"), ("abs_peak_mb", "absolute peak"),
                         ("time_ms_median", "speed-up")]:
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
    """ours_fused of the sweep (sdtw-bench) against an original of originals.csv (Python step): point_ratio
    raises instead of dividing."""
    sweep, _ = synth
    results = data.Results(sweep, None, sweep.parent / "published", sweep.parent / "originals.csv")
    pts = results.all_points()
    with pytest.raises(data.MixedMethods, match="mixes methods"):
        data.point_ratio(pts, "step:sdtw_cuda_torch_fused", "ours_fused", (2, 16, 1), "ms")
    value, _ = data.point_ratio(pts, "step:sdtw_cuda_torch_fused", "step:ours_fused", (2, 16, 1), "ms")
    assert value == pytest.approx(synthetic.originals_value("sdtw_cuda_torch_fused", 16, 1, "ms")
                                  / synthetic.originals_value("ours_fused", 16, 1, "ms"))


def test_without_the_originals_and_features_files_no_ratio_against_the_originals_is_claimed(synth, tmp_path):
    sweep, _ = synth
    make_paper.main(["--sweep", str(sweep), "--accuracy", "none", "--originals", str(tmp_path / "absent.csv"),
                     "--features", str(tmp_path / "nofeatures.csv"), "--out", str(tmp_path), "--readme", "none"])
    report = (tmp_path / "report.md").read_text()
    claims = report.split("## Tables")[0]
    assert claims.count("**Not measured yet:** `absent.csv` (baselines/originals) is absent") == 2
    for original in ("softdtw-cuda-torch", "pytorch-softdtw-cuda", "pysdtw"):
        assert f"Against {original}" not in claims
    assert not list((tmp_path / "tables").glob("originals_*"))
    assert claims.count("**Not measured yet:** `nofeatures.csv` (pytorch/bench/features.py) is absent") == 2
    assert not (tmp_path / "figures/cdist.png").exists() and not (tmp_path / "figures/barycenter.png").exists()


def features_rows(folder, kind, impl="ours", mode=""):
    """features.csv's rows of one kind, for ours (its own columns) or softdtw-cuda-torch in one mode (the
    row with that mode's prefixed columns in place of ours')."""
    rows = [r for r in read_csv(folder / "features.csv") if r["mode"] == kind]
    if impl == "ours":
        return rows
    prefix = synthetic.WIDE_PREFIX[mode]
    return [r | {f: r[prefix + f] for f in synthetic.WIDE_FIELDS} for r in rows]


def test_synthetic_features_figures_leave_missing_points_out(synth_figures):
    """cdist pairs/s and barycenter ms per iteration: a point that did not pass is NaN on its line and
    its reason is in the caption; the stamp is features.csv's GPU and commit."""
    results, figs = synth_figures
    folder = results.sweep_csv.parent
    line = lambda fig, who: next(l for ax in fig.axes for l in ax.get_lines() if l.get_label() == who)  # noqa: E731
    cdist = line(figs["cdist"], "B1 = B2 = 4, D = 1")
    xs, ys = list(cdist.get_xdata()), list(cdist.get_ydata())
    assert math.isnan(ys[xs.index(64)]) and 0 not in ys
    passed = {int(r["N"]): 16 / (float(r["time_ms_median"]) / 1e3) for r in features_rows(folder, "cdist")
              if (r["B"], r["D"], r["disposition"]) == ("4", "1", "passed")}
    assert passed and all(ys[xs.index(n)] == pytest.approx(v) for n, v in passed.items())
    captions = {n: figures.caption_of(f) for n, f in figs.items()}
    assert "error (RuntimeError: synthetic cdist launch error) at B = 4, D = 1, N = 64" in captions["cdist"]
    assert "failed verification (sampled value error 3e-05 > 1e-05) at B = 8, D = 1, N = 16" in captions["cdist"]
    assert "target ms <= 5" in captions["cdist"] and "CUDA events" in captions["cdist"]
    assert "not supported (synthetic: needs CUDA (numba)) at D = 3, N = 40" in captions["barycenter"]
    assert "error (RuntimeError: synthetic barycenter error) at D = 3, N = 20" in captions["barycenter"]
    assert "no ratio where they differ: fused at D = 3, N = 80: 0.004" in captions["barycenter"]
    labels = [l.get_label() for ax in figs["barycenter"].axes for l in ax.get_lines()]
    assert "softdtw-cuda-torch (fused), softdtw_barycenter" in labels
    assert "softdtw-cuda-torch (unfused), softdtw_barycenter" in labels


def test_synthetic_claims_say_seeds_worst_input_subsample_modes_and_tolerance(synth):
    """The claims a reader needs to trust the numbers, each from its CSV."""
    sweep, out = synth
    folder = sweep.parent
    report = (out / "report.md").read_text()
    assert f"each (implementation, N, gamma) cell {len(synthetic.ACCURACY_SEEDS)} seeds" in report
    worst = synthetic.WORST
    line = next(l for l in report.splitlines() if "`known-worst-input`" in l)
    assert f"seed {synthetic.WORST_SEED}" in line and f"{worst['end']:.3g}" in line and f"{worst['own']:.3g}" in line
    assert f"N = {worst['N']}, gamma = {worst['gamma']:g}" in line
    subsample = [l for l in report.splitlines() if l.startswith("- Verified on a subsample of the pairs")]
    assert len(subsample) == 2 and all(f"B=2 N={synthetic.SUBSAMPLED_N} D=4: 1/2 pairs (subsample)" in l
                                       for l in subsample)
    assert "`paper.csv`" in subsample[0] and "`originals.csv`" in subsample[1]
    assert "in its default fused mode" in report and "in its unfused mode" in report
    unfused = [float(r["time_ms_median"]) for r in features_rows(folder, "barycenter", "sdtw-cuda-torch", "unfused")]
    ours = [float(r["time_ms_median"]) for r in features_rows(folder, "barycenter") if r["time_ms_median"]]
    assert unfused and ours
    assert "Against softdtw-cuda-torch in its unfused mode, where both ran" in report
    assert "pytorch-softdtw-cuda (Maghoumi) (Python step): 1 of the 2 rows that ran are within the tolerance" in report
    assert '"unfused" is the whole training step' in report and '"cost-tensor DP"' in report


def test_synthetic_features_claims_are_the_file(synth):
    """The cdist and barycenter claims: the target verdicts and the numbers as the CSV has them, the
    ratio range only over points where both implementations passed."""
    sweep, out = synth
    folder = sweep.parent
    claims = (out / "report.md").read_text().split("## Tables")[0]
    cdist = claims.split("## 5. Pairwise distances (cdist)")[1].split("## 6.")[0]
    bary = claims.split("## 6. Barycenters")[1]
    target = next(r for r in features_rows(folder, "cdist") if r["target"])
    assert f"Target point B1 = B2 = 8, N = 32, D = 2: {_fmt(float(target['time_ms_median']))} ms" in cdist
    assert f"target ms <= 5: **{'met' if target['target_met'] == 'yes' else 'not met'}**" in cdist
    assert "Not passed at B1 = B2 = 4, N = 64, D = 1: error (RuntimeError: synthetic cdist launch error)." in cdist
    assert synthetic.FEATURES_COMMIT[:7] in cdist and "CUDA events" in cdist
    ours = {(int(r["N"]), int(r["D"])): float(r["time_ms_median"]) for r in features_rows(folder, "barycenter")
            if r["disposition"] == "passed"}
    fused = {(int(r["N"]), int(r["D"])): (float(r["time_ms_median"]), float(r["objective"]))
             for r in features_rows(folder, "barycenter", "sdtw-cuda-torch", "fused") if r["disposition"] == "passed"}
    objective = {(int(r["N"]), int(r["D"])): float(r["objective"]) for r in features_rows(folder, "barycenter")}
    agree = {k: fused[k][0] / ours[k] for k in ours if k in fused
             and abs(objective[k] - fused[k][1]) / abs(fused[k][1]) <= data.OBJECTIVE_REL_MAX}
    apart = [k for k in ours if k in fused and k not in agree]
    assert len(apart) == len(synthetic.OBJECTIVE_APART)
    line = next(l for l in bary.splitlines() if l.startswith("- Against softdtw-cuda-torch in its default fused mode"))
    shown = [float(v) for v in re.findall(r"([0-9.]+)× \(", line)]
    assert f"{len(agree)} points)" in line
    assert rounded(shown[0], min(agree.values())) and rounded(shown[1], max(agree.values())), line
    for n, d in apart:
        assert f"No ratio against softdtw-cuda-torch in its default fused mode at B = 5, N = {n}, D = {d}" in bary
    assert "**met**" in bary
    assert ("softdtw-cuda-torch in its default fused mode not measured at B = 5, N = 40, D = 3: not supported "
            "(synthetic: needs CUDA") in bary
    assert "[figures/cdist.png]" in cdist and "[figures/barycenter.png]" in bary


def test_jitter_names_points_whose_median_the_host_set():
    import pandas as pd
    from report import jittery

    square = pd.DataFrame({"impl": ["ours_fused", "ours_fused", "maghoumi", "ours_fused"], "B": [16, 32, 16, 8],
                           "N": [128, 512, 256, 64], "D": [64, 64, 1, 1],
                           "disposition": ["passed", "passed", "passed", "failed"],
                           "time_ms_median": [0.676, 0.61, 1.2, 9.0], "time_ms_p10": [0.225, 0.60, 1.0, 1.0]})
    assert jittery(square, ["ours_fused", "maghoumi"]) == ["B=16 N=128 D=64"]  # failed rows do not count


def test_every_supporting_link_is_a_file_the_run_made(synth, tmp_path):
    """A claim links only tables and figures that exist: from a sweep of ours on the CPU alone (fewer
    figures drawn), the links to the figures not drawn go too."""
    sweep, out = synth
    links = lambda report: re.findall(r"\]\(((?:tables|figures)/[^)]+)\)", report.split("## Tables")[0])  # noqa: E731
    assert links((out / "report.md").read_text())
    assert all((out / link).exists() for link in links((out / "report.md").read_text()))
    folder = tmp_path / "nogpu"
    folder.mkdir()
    rows, _ = sdtw_results.read_results(sweep)
    synthetic.write_file(folder / "paper.csv", "sweep", [r | {"device": "cpu"} for r in rows if r["impl"] == "ours"],
                         synthetic.COMMIT)
    make_paper.main(["--results", str(folder), "--published", str(folder), "--out", str(tmp_path / "paper"),
                     "--readme", "none"])
    report = (tmp_path / "paper/report.md").read_text()
    made = {p.name for p in (tmp_path / "paper/figures").glob("*.png")}
    assert made < {p.name for p in (out / "figures").glob("*.png")}  # fewer figures drawn than from the full set
    assert links(report) and all((tmp_path / "paper" / link).exists() for link in links(report))
