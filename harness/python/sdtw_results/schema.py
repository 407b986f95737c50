"""The common columns, in order, and the dispositions; a row (dict) as CSV text fields."""
import math

SCHEMA = "sdtw-results/1"
COLUMNS = (
    "tool grid impl api mode device dtype B N M D gamma bandwidth normalize disposition message reps warmup "
    "time_ms_median time_ms_p10 time_ms_p90 step_peak_mb abs_peak_mb value_err grad_err value_tol grad_tol "
    "verified seed wall_s gpu"
).split()
DISPOSITIONS = ("passed", "failed", "not_supported", "out_of_memory", "error")


def header(extra=()):
    """The common columns, then a tool's own: an extra column may not repeat a common one."""
    clash = [c for c in extra if c in COLUMNS]
    if clash:
        raise ValueError(f"extra columns {clash} repeat common columns of the schema")
    if len(set(extra)) != len(extra):
        raise ValueError(f"extra columns {list(extra)} name a column twice")
    return list(COLUMNS) + list(extra)


def text(value):
    """A value as CSV text: empty for None or NaN, booleans as true/false, floats in 10 significant digits."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else f"{value:.10g}"
    return " ".join(str(value).splitlines())  # one line: a message never breaks a row


def fields(row, columns):
    """The row's CSV fields in column order; a key outside the columns is an error (a typo'd column)."""
    unknown = sorted(set(row) - set(columns))
    if unknown:
        raise ValueError(f"row has columns {unknown} outside the file's header")
    disposition = row.get("disposition")
    if disposition not in DISPOSITIONS:
        raise ValueError(f"disposition must be one of {DISPOSITIONS}, got {disposition!r}")
    return [text(row.get(c)) for c in columns]
