#!/usr/bin/env python3
"""Rebuilds every table, figure and the report of the paper from results/:
    python3 paper/make_paper.py [--sweep results/h100/paper.csv] [--accuracy ...] [--published ...]
                                [--originals results/h100/originals.csv] [--features results/h100/features.csv]
                                [--out paper]"""
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
from tables import write_tables  # noqa: E402


def shown(path):
    """A path as the report names it: relative to the repository when inside it, so outputs do not
    depend on where the checkout lives."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", default=ROOT / "results/h100/paper.csv", help="sdtw-bench sweep CSV (.json beside it)")
    ap.add_argument("--accuracy", default=ROOT / "results/h100/grad-accuracy.csv",
                    help="sdtw-bench check --accuracy-csv output; 'none' to leave the gradient figure out")
    ap.add_argument("--published", default=ROOT / "results/published", help="published and re-measured peers")
    ap.add_argument("--originals", default=ROOT / "results/h100/originals.csv",
                    help="baselines/originals output (the original codes and ours, one method); "
                         "when absent, the report says so and claims no ratio against the originals")
    ap.add_argument("--features", default=ROOT / "results/h100/features.csv",
                    help="torch/bench/features.py output (cdist and barycenter); when absent, the report says so")
    ap.add_argument("--out", default=ROOT / "paper", help="writes tables/, figures/ and report.md here")
    args = ap.parse_args(argv)
    accuracy = None if str(args.accuracy) == "none" else args.accuracy
    results = Results(args.sweep, accuracy, args.published, args.originals, args.features)
    out = Path(args.out)
    tables = write_tables(results, out / "tables")
    captions = write_figures(results, out / "figures")
    optional = [p if Path(p).exists() else None for p in (args.originals, args.features)]
    sources = [shown(p) for p in [args.sweep, accuracy, args.published] + optional if p is not None]
    write_report(results, tables, captions, sources, out / "report.md")
    print(f"paper: {len(tables)} tables, {len(captions)} figures and report.md under {shown(out)}")


if __name__ == "__main__":
    main()
