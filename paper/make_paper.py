#!/usr/bin/env python3
"""Rebuilds every table, figure and the report of the paper from one results folder, and that folder's
README.md from its files' sidecars; prints each source file's commit and marks any measured before the
last change of the code they measure (sources.CODE_PATHS) as STALE:
    python3 paper/make_paper.py [--results results/h100] [--sweep FILE] [--accuracy FILE]
                                [--accuracy-grid FILE] [--originals FILE] [--features FILE]
                                [--published results/published] [--out paper] [--readme FILE|none]
                                [--stale-as-of COMMIT]"""
import argparse
import os
import sys
from pathlib import Path

try:
    import matplotlib
    import pandas  # noqa: F401
except ImportError:
    # A python3 first on PATH without them (pyenv): Debian's has them (scripts/deps.sh installs them).
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

sys.path.insert(0, str(Path(__file__).resolve().parent))
matplotlib.use("Agg")  # files only; the notebook keeps its inline backend

from data import ROOT, Results  # noqa: E402
from figures import write_figures  # noqa: E402
from report import write_report  # noqa: E402
from results_readme import write_readme  # noqa: E402
import sources  # noqa: E402
from tables import write_tables  # noqa: E402

# The files of a results folder the paper reads (option, file name).
FILES = {"sweep": "paper.csv", "accuracy": "grad-accuracy.csv", "accuracy_grid": "accuracy-grid.csv",
         "originals": "originals.csv", "features": "features.csv"}


def shown(path):
    """A path as the report names it: relative to the repository when inside it, so outputs do not
    depend on where the checkout lives."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "results/h100",
                    help="the results folder; each file below defaults to its name there")
    ap.add_argument("--sweep", help="sdtw-bench sweep CSV (.json beside it); default RESULTS/paper.csv")
    ap.add_argument("--accuracy", help="sdtw-bench check --accuracy-csv output; 'none' leaves the gradient figure out")
    ap.add_argument("--accuracy-grid", help="the kernels' accuracy grid as CSV (paper/accuracy_grid.py)")
    ap.add_argument("--originals", help="baselines/originals output; when absent, the report says so and claims no "
                                        "ratio against the originals")
    ap.add_argument("--features", help="pytorch/bench/features.py output; when absent, the report says so")
    ap.add_argument("--published", default=ROOT / "results/published", help="published and re-measured peers")
    ap.add_argument("--out", default=ROOT / "paper", help="writes tables/, figures/ and report.md here")
    ap.add_argument("--readme", help="the results folder's README.md, written from its sidecars "
                                     "(default RESULTS/README.md; 'none' writes none)")
    ap.add_argument("--repo", type=Path, default=ROOT, help="the git repository whose history judges staleness")
    ap.add_argument("--stale-as-of", default="HEAD", help="judge staleness by the code as of this commit "
                    "(default HEAD; the commit that made a set of outputs reproduces them as they were made)")
    args = ap.parse_args(argv)
    sources.judge_as_of(args.stale_as_of)
    try:
        make(ap, args)
    finally:
        sources.judge_as_of("HEAD")


def make(ap, args):
    paths = {}
    for option, name in FILES.items():
        given = getattr(args, option)
        paths[option] = None if given == "none" else Path(given) if given else args.results / name
    if not paths["sweep"].exists():
        ap.error(f"--sweep: {paths['sweep']} does not exist (scripts/reproduce.sh --part sweep writes it)")
    optional = {k: p if p is not None and p.exists() else None for k, p in paths.items()}
    results = Results(paths["sweep"], optional["accuracy"], args.published, paths["originals"], paths["features"],
                      optional["accuracy_grid"], repo=args.repo)
    for s in results.sources:
        print(f"paper: {shown(s.path)}: {s.tool or '?'} at {s.commit_text()} on {s.date}"
              + (f" ({s.why_stale})" if s.stale else ""))
    out = Path(args.out)
    tables = write_tables(results, out / "tables")
    captions = write_figures(results, out / "figures")
    given = [paths["sweep"], optional["accuracy"], optional["accuracy_grid"], args.published, optional["originals"],
             optional["features"]]
    write_report(results, tables, captions, [shown(p) for p in given if p is not None], out / "report.md")
    readme = None if args.readme == "none" else Path(args.readme) if args.readme else args.results / "README.md"
    if readme is not None:
        write_readme(args.results, readme, args.repo)
    stale = sum(s.stale for s in results.sources)
    print(f"paper: {len(tables)} tables, {len(captions)} figures and report.md under {shown(out)}"
          + (f"; {stale} source file(s) STALE" if stale else "; no source file stale")
          + (f"; {shown(readme)}" if readme is not None else ""))


if __name__ == "__main__":
    main()
