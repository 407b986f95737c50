#pragma once
// Global constraints as one column range [lo, hi) per row of a pair, computed from that pair's own
// lengths (tslearn's masks change with them), so no n x m mask exists anywhere. The same functions
// run on the device (the kernels' rows) and on the host (validation, and the tests that compare
// them with the reference's masks).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#ifdef __CUDACC__
#define SDTW_HOST_DEVICE __host__ __device__
#else
#define SDTW_HOST_DEVICE
#endif

namespace sdtw::kernels {

enum class ConstraintKind : int32_t {
  none = 0,
  band = 1,         // |i - j| <= radius (the `bandwidth` option)
  sakoe_chiba = 2,  // tslearn.metrics.sakoe_chiba_mask(rows, cols, radius)
  itakura = 3,      // tslearn.metrics.itakura_mask(rows, cols, max_slope)
};

struct Constraint {
  ConstraintKind kind = ConstraintKind::none;
  int64_t radius = 0;      // band, sakoe_chiba: >= 0
  double max_slope = 2.0;  // itakura: finite and > 0
};

struct ColumnRange {
  int lo, hi;  // the row's admissible columns; empty when lo >= hi
};

namespace constraint_detail {

// Plain IEEE products and sums on both sides: nvcc would otherwise contract a * b + c into an fma
// on the device, whose single rounding can move a bound that tslearn rounds to two decimals.
SDTW_HOST_DEVICE inline double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
SDTW_HOST_DEVICE inline double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// numpy.round(x, 2) as tslearn's numba code computes it: rint(x * 100) / 100, ties to even.
SDTW_HOST_DEVICE inline double round2(double x) { return rint(mul(x, 100.0)) / 100.0; }

// A Python slice bound on a column of `rows` cells: negative counts from the end, then clamped.
SDTW_HOST_DEVICE inline int slice_bound(double bound, int rows) {
  long long v = static_cast<long long>(bound);
  if (v < 0) v = v + rows < 0 ? 0 : v + rows;
  return static_cast<int>(v < rows ? v : rows);
}

// Column j's rows [start, stop) of tslearn's itakura_mask(rows, cols, max_slope), term by term.
SDTW_HOST_DEVICE inline ColumnRange itakura_column(int j, int rows, int cols, double max_slope) {
  const double ratio = static_cast<double>(rows) / static_cast<double>(cols);
  const double steep = mul(max_slope, ratio), shallow = mul(1.0 / max_slope, ratio);
  const double jd = j, last_i = rows - 1, last_j = cols - 1;
  const double lower =
      ceil(fmax(round2(mul(shallow, jd)), round2(add(add(last_i, -mul(steep, last_j)), mul(steep, jd)))));
  const double upper =
      floor(add(fmin(round2(mul(steep, jd)), round2(add(add(last_i, -mul(shallow, last_j)), mul(shallow, jd)))), 1.0));
  return {slice_bound(lower, rows), slice_bound(upper, rows)};
}

// The first column j in [0, cols) whose bound (start when `stop` is false) exceeds row i, by
// bisection: both bounds grow with j, so row i's columns are those past the stops' index and
// before the starts'. (Tests check the result against the reference's masks.)
SDTW_HOST_DEVICE inline int itakura_first_above(int i, int rows, int cols, double max_slope, bool stop) {
  int lo = 0, hi = cols;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const ColumnRange c = itakura_column(mid, rows, cols, max_slope);
    if ((stop ? c.hi : c.lo) > i)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace constraint_detail

// Row i's columns for a pair of `rows` x `cols` cells (its own lengths), 0 <= i < rows.
SDTW_HOST_DEVICE inline ColumnRange column_range(const Constraint& c, int i, int rows, int cols) {
  switch (c.kind) {
    case ConstraintKind::band:
    case ConstraintKind::sakoe_chiba: {
      // tslearn widens the band by |rows - cols| on the longer sequence's side only.
      const long long r = c.radius;
      const long long below = c.kind == ConstraintKind::sakoe_chiba && rows > cols ? rows - cols : 0;
      const long long above = c.kind == ConstraintKind::sakoe_chiba && cols > rows ? cols - rows : 0;
      const long long lo = i - r - below, hi = i + r + above + 1;
      return {static_cast<int>(lo < 0 ? 0 : lo), static_cast<int>(hi < cols ? hi : cols)};
    }
    case ConstraintKind::itakura:
      return {constraint_detail::itakura_first_above(i, rows, cols, c.max_slope, true),
              constraint_detail::itakura_first_above(i, rows, cols, c.max_slope, false)};
    default:
      return {0, cols};
  }
}

// Whether a monotone path from (0, 0) to (rows - 1, cols - 1) stays inside the ranges: it enters
// each row as far left as it can and must reach the next row's range within one diagonal step.
// Itakura's rows come from one sweep over its columns (both bounds grow with the column), so the
// check costs O(rows + cols) bound evaluations, not a bisection per row: the host runs it per launch.
SDTW_HOST_DEVICE inline bool has_path(const Constraint& c, int rows, int cols) {
  int enter = 0, previous_hi = 1, past_stops = 0, past_starts = 0;
  for (int i = 0; i < rows; ++i) {
    ColumnRange r;
    if (c.kind == ConstraintKind::itakura) {
      using constraint_detail::itakura_column;
      while (past_stops < cols && itakura_column(past_stops, rows, cols, c.max_slope).hi <= i) ++past_stops;
      while (past_starts < cols && itakura_column(past_starts, rows, cols, c.max_slope).lo <= i) ++past_starts;
      r = {past_stops, past_starts};
    } else {
      r = column_range(c, i, rows, cols);
    }
    if (r.lo > enter) enter = r.lo;
    if (enter >= r.hi || enter > previous_hi || (i == 0 && r.lo > 0)) return false;
    previous_hi = r.hi;
  }
  return previous_hi == cols;
}

inline const char* constraint_name(ConstraintKind kind) {
  switch (kind) {
    case ConstraintKind::band: return "band";
    case ConstraintKind::sakoe_chiba: return "sakoe_chiba";
    case ConstraintKind::itakura: return "itakura";
    default: return "none";
  }
}

// The one constraint the kernels evaluate: bandwidth >= 0 is a band of that radius. Throws
// std::invalid_argument naming the parameter for a bad radius or slope, for a bandwidth given with
// a constraint, and (when every pair has the full rows x cols) for a constraint that leaves no path.
inline Constraint effective_constraint(int64_t bandwidth, const Constraint& c, int64_t rows, int64_t cols,
                                       bool per_pair_lengths) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("sdtw::kernels: " + what); };
  if (c.kind != ConstraintKind::none && bandwidth >= 0)
    fail("bandwidth (" + std::to_string(bandwidth) + ") and the " + constraint_name(c.kind) +
         " constraint are two constraints: give one");
  if (c.kind == ConstraintKind::none) return bandwidth >= 0 ? Constraint{ConstraintKind::band, bandwidth, 2.0} : c;
  if ((c.kind == ConstraintKind::band || c.kind == ConstraintKind::sakoe_chiba) && c.radius < 0)
    fail("the " + std::string(constraint_name(c.kind)) + " radius must be >= 0 (got " + std::to_string(c.radius) + ")");
  if (c.kind == ConstraintKind::itakura && !(c.max_slope > 0.0 && std::isfinite(c.max_slope)))
    fail("itakura max_slope must be finite and > 0 (got " + std::to_string(c.max_slope) + ")");
  if (!per_pair_lengths && rows <= INT32_MAX && cols <= INT32_MAX &&
      !has_path(c, static_cast<int>(rows), static_cast<int>(cols)))
    fail("the " + std::string(constraint_name(c.kind)) + " constraint leaves no alignment path for n = " +
         std::to_string(rows) + ", m = " + std::to_string(cols));
  return c;
}

}  // namespace sdtw::kernels
