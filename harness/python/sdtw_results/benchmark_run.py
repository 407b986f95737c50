"""A results file for a run measured by another process (a C++ kernel benchmark): its GPU, commit
and date are given on the command line, not read from this process, which only converts the output."""
from sdtw_results.metadata import collect
from sdtw_results.store import ResultsWriter


def add_run_arguments(parser, csv_name):
    """--commit, --date, --driver, --cuda and --csv, as every benchmark report takes them."""
    parser.add_argument("--commit", required=True, help="the commit the benchmark was built at")
    parser.add_argument("--date", required=True, help="the date it ran (YYYY-MM-DD)")
    parser.add_argument("--driver", default="", help="the NVIDIA driver version the benchmark ran with")
    parser.add_argument("--cuda", default="", help="the CUDA runtime version the benchmark was built with")
    parser.add_argument("--csv", help=f"also write the rows here ({csv_name}, and its .json sidecar beside it)")


def write_benchmark_results(args, tool, gpu, rows, extra_columns, **sidecar):
    """Writes rows to args.csv (when given) with the run's metadata from args and gpu; sidecar: the
    tool's own metadata keys."""
    if not args.csv:
        return
    meta = collect(tool, None, "cpu", **sidecar)
    meta.update(gpu=gpu, gpu_count=1, driver=args.driver, cuda=args.cuda, commit=args.commit, dirty="unknown",
                date=args.date)
    with ResultsWriter(args.csv, tool, meta, extra_columns) as writer:
        for row in rows:
            writer.append(row)
