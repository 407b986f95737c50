"""Staleness, on synthetic files in a temporary git repository: a file measured before the last commit
that changed the measured code (sources.CODE_PATHS) is STALE in make_paper's output, report.md, the tables'
captions, the figure stamps and results/<gpu>/README.md; a file measured at or after it is not. Also the
kernels' accuracy grid turned into a CSV, and the README's counts."""
import csv
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import accuracy_grid  # noqa: E402
import make_paper  # noqa: E402
import sources  # noqa: E402
import synthetic  # noqa: E402


def commit(repo, path, text):
    """Writes path (relative to repo), commits it; returns the new commit's hash."""
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    env = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "-C", str(repo), *env, "add", path], check=True)
    subprocess.run(["git", "-C", str(repo), *env, "commit", "-q", "-m", path], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A repository: kernels changed (old), pytorch/python changed (code), then only docs (docs)."""
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    old = commit(repo, "kernels/src/forward.cu", "kernel code")
    code = commit(repo, "pytorch/python/sdtw_torch/__init__.py", "module code")
    docs = commit(repo, "README.md", "docs")
    return repo, {"old": old, "code": code, "docs": docs}


def test_is_ancestor_decides(history):
    repo, c = history
    assert sources.code_commit(repo) == c["code"]
    assert not sources.measured_after(repo, c["code"], c["old"])
    assert sources.measured_after(repo, c["code"], c["code"]) and sources.measured_after(repo, c["code"], c["docs"])
    assert not sources.measured_after(repo, c["code"], "unknown")


def test_a_kernel_header_change_makes_earlier_files_stale(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    measured = commit(repo, "kernels/src/forward.cu", "kernel code")
    header = commit(repo, "kernels/include/sdtw/kernels/costs.cuh", "cost policies")
    assert sources.code_commit(repo) == header
    assert not sources.measured_after(repo, header, measured)


def test_stale_files_are_marked_everywhere(history, tmp_path, capsys):
    repo, c = history
    folder = tmp_path / "results"
    folder.mkdir()
    # The sweep and the accuracy files at the docs commit (current), the originals before the code change.
    sweep, _, published, _ = synthetic.write(folder, commit=c["docs"])
    synthetic.write_originals(folder, commit=c["old"])
    synthetic.write_features(folder, commit=c["code"])
    out = tmp_path / "paper"
    make_paper.main(["--results", str(folder), "--published", str(published), "--out", str(out), "--repo", str(repo)])
    printed = capsys.readouterr().out
    old, code, docs = c["old"][:7], c["code"][:7], c["docs"][:7]
    assert f"originals.csv: originals at commit {old} STALE" in printed
    assert f"paper.csv: sweep at commit {docs} on" in printed and f"features.csv: features at commit {code} on" in printed
    assert "1 source file(s) STALE" in printed
    report = (out / "report.md").read_text()
    assert report.startswith("# What the results show\n\n**STALE:** `originals.csv` was measured before")
    sources_table = report.split("## Sources")[1].split("## 1.")[0]
    assert f"| `originals.csv` | originals | Synthetic GPU 1GB | commit {old} **STALE** (measured at {old}, before " \
           f"{code} changed" in sources_table
    assert f"commit {docs} |" in sources_table and f"commit {code} |" in sources_table
    assert sources_table.count("STALE") == 1
    assert f"commit {old} STALE" in (out / "tables/originals_runtime.md").read_text()
    assert "STALE" not in (out / "tables/main.md").read_text()
    readme = (folder / "README.md").read_text()
    assert f"| [originals.csv](originals.csv) | originals | 18 (15 passed, 2 error, 1 out_of_memory) | `{old}` **STALE**" \
           in readme
    assert f"| [paper.csv](paper.csv) | sweep | 24 (20 passed, 1 error, 1 failed, 1 not_supported, 1 out_of_memory) " \
           f"| `{docs}` |" in readme



def test_staleness_as_of_the_commit_that_made_the_outputs(history, tmp_path, capsys):
    """--stale-as-of judges by the code as it was at that commit (what the committed outputs were made
    at): a file stale at HEAD is current there, and make_paper judges by HEAD again afterwards."""
    repo, c = history
    folder = tmp_path / "results"
    folder.mkdir()
    _, _, published, _ = synthetic.write(folder, commit=c["old"])
    common = ["--results", str(folder), "--published", str(published), "--readme", "none", "--repo", str(repo)]
    make_paper.main(common + ["--out", str(tmp_path / "then"), "--stale-as-of", c["old"]])
    assert "no source file stale" in capsys.readouterr().out
    assert "STALE" not in (tmp_path / "then/report.md").read_text()
    make_paper.main(common + ["--out", str(tmp_path / "now")])
    assert "source file(s) STALE" in capsys.readouterr().out
    assert (tmp_path / "now/report.md").read_text().startswith("# What the results show\n\n**STALE:**")

def test_figure_stamps_carry_stale(history, tmp_path):
    import data
    import figures
    repo, c = history
    sweep, accuracy, published, _ = synthetic.write(tmp_path, commit=c["old"])
    results = data.Results(sweep, accuracy, published, repo=repo)
    figs = figures.all_figures(results)
    for name in ("length", "speedup", "grad_error"):
        assert f"commit {c['old'][:7]} STALE" in figures.stamp_of(figs[name])
    fresh = data.Results(*synthetic.write(tmp_path, commit=c["docs"])[:3], repo=repo)
    assert "STALE" not in figures.stamp_of(figures.all_figures(fresh)["length"])


GRID_LOG = """[ RUN      ] Lengths/AccuracyGrid.Float32GradientWithin1e4/1
[ seed     ] accuracy grid: 17
[ accuracy ] N=2048 gamma=1 value_rel=2.51e-08 grad_rel_l2=9.35e-06 (against the float64 cost 1.02e-05; the float32 cost alone moves the reference by 2.91e-06)
[ seed     ] accuracy grid: 899408978
[ accuracy ] N=2048 gamma=0.01 value_rel=6.08e-09 grad_rel_l2=5.31e-06 (against the float64 cost 0.000324, of which the float32 cost alone 0.000319)
[ accuracy ] N=2048 gamma=0.001 value_rel=6.61e-09 grad_rel_l2=0.000131 (against the float64 cost 1.58e-05; the float32 cost alone moves the reference by 1.58e-05)
[  PASSED  ] 1 test.
"""


def test_accuracy_grid_lines_become_rows_of_the_schema(tmp_path):
    log = tmp_path / "grid.txt"
    log.write_text(GRID_LOG)
    out = tmp_path / "accuracy-grid.csv"
    assert accuracy_grid.main(["--out", str(out), f"known-worst-input={log}"]) == 0
    rows, source = sources.read(out, tmp_path)
    assert list(rows.columns[:len(sources.COLUMNS)]) == list(sources.COLUMNS) and source.tool == "accuracy"
    assert list(rows["seed"]) == [17, 899408978, 899408978] and list(rows["N"]) == [2048] * 3
    assert list(rows["grad_err"]) == [9.35e-06, 5.31e-06, 0.000131]
    assert list(rows["grad_err_end_to_end"]) == [1.02e-05, 0.000324, 1.58e-05]
    assert list(rows["grad_err_cost_only"]) == [2.91e-06, 0.000319, 1.58e-05]
    assert list(rows["disposition"]) == ["passed", "passed", "failed"]  # the own error over 1e-4
    with pytest.raises(SystemExit):
        accuracy_grid.main(["--out", str(out), f"x={tmp_path / 'absent.txt'}"])
    empty = tmp_path / "empty.txt"
    empty.write_text("[  PASSED  ] 0 tests.\n")
    with pytest.raises(SystemExit):
        accuracy_grid.main(["--out", str(out), f"x={empty}"])


def test_an_old_layout_file_is_refused_by_name(tmp_path):
    path = tmp_path / "old.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([["point", "impl", "peak_mb"], [0, "ours_fused", 1.0]])
    with pytest.raises(ValueError, match=r"old.csv: not a sdtw-results/1 file: missing columns \['tool'"):
        sources.read(path, tmp_path)


def test_features_give_the_baseline_in_both_of_its_modes(tmp_path):
    """softdtw-cuda-torch's barycenter in the baseline_ (default, fused) and baseline_unfused_ columns of
    ours' row, as features.py writes them: the paper reads a ratio per mode, only where both ran."""
    import data
    rows, _ = data.load_features(synthetic.write_features(tmp_path), tmp_path)
    bary = rows[rows["kind"] == "barycenter"].set_index(["B", "N", "D"])
    assert bary["unfused_ok"].all() and bary["unfused_ratio"].notna().sum() == bary["ok"].sum()
    fused, unfused = synthetic.BARYCENTER_SLOWER["sdtw_cuda_torch_fused"], synthetic.BARYCENTER_SLOWER[
        "sdtw_cuda_torch_unfused"]
    for (b, n, d), r in bary.iterrows():
        if r["ok"]:
            assert r["unfused_ratio"] == pytest.approx(unfused(n, d))
            assert r["baseline_ratio"] == pytest.approx(fused(n, d)) if r["baseline_ok"] else pd.isna(
                r["baseline_ratio"])
    assert bary.loc[(5, 40, 3), "baseline_reason"] == "not supported (synthetic: needs CUDA (numba))"
    assert pd.isna(bary.loc[(5, 20, 3), "unfused_ratio"])  # ours failed there: no ratio to either mode
