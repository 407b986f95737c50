"""The results schema every measuring tool writes (docs/DESIGN.md §5): the common
columns, the sidecar's metadata, the one seed scheme and input generation, nearest-rank percentiles,
verification against the float64 reference, and the CSV + sidecar writer and reader."""
from sdtw_results import schema, verify
from sdtw_results.benchmark_run import add_run_arguments, write_benchmark_results
from sdtw_results.inputs import make_inputs, point_seed
from sdtw_results.metadata import collect, git_commit
from sdtw_results.schema import COLUMNS, DISPOSITIONS, SCHEMA, header
from sdtw_results.stats import nearest_rank, spread
from sdtw_results.store import ResultsWriter, WriterBusy, read_results, sidecar_path

__all__ = ["COLUMNS", "add_run_arguments", "write_benchmark_results", "DISPOSITIONS", "SCHEMA", "ResultsWriter", "WriterBusy", "collect", "git_commit", "header",
           "make_inputs", "nearest_rank", "point_seed", "read_results", "schema", "sidecar_path", "spread", "verify"]
