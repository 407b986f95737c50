"""Nearest-rank percentiles of the timed repetitions (the median is the 50th)."""
import math


def nearest_rank(values, q):
    """The smallest value with at least q of the values at or below it: sorted[ceil(q n) - 1]."""
    if not values:
        raise ValueError("nearest_rank: no values")
    if not 0 < q <= 1:
        raise ValueError(f"nearest_rank: q must be in (0, 1], got {q}")
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q * len(ordered) - 1e-12)) - 1]


def spread(times_ms):
    """The time columns of a row from the timed repetitions (ms)."""
    return {"time_ms_median": nearest_rank(times_ms, 0.5), "time_ms_p10": nearest_rank(times_ms, 0.1),
            "time_ms_p90": nearest_rank(times_ms, 0.9), "reps": len(times_ms)}
