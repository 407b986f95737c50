#include "sdtw/reference/constraints.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sdtw::reference {

namespace {

// numpy.round(x, decimals=2) as numba compiles it: rint(x * 100) / 100, ties to even.
double round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

// Python's a[start:stop] = True on one column of `rows` cells: negative bounds count from the end.
// They arise only for max_slope < 1; for N, M < 30 those masks are refused whether the slice wraps
// or clamps (checked against a transcription of tslearn), so this only keeps the two identical.
void set_slice(Mask& mask, long column, long start, long stop) {
  const long rows = mask.rows();
  if (start < 0) start = std::max(0L, start + rows);
  if (stop < 0) stop = std::max(0L, stop + rows);
  start = std::min(start, rows);
  stop = std::min(stop, rows);
  for (long i = start; i < stop; ++i) mask(i, column) = true;
}

}  // namespace

Mask sakoe_chiba_mask(long n, long m, long radius) {
  check_nonempty(n, m, "mask");
  if (radius < 0) {
    std::ostringstream msg;
    msg << "radius must be >= 0 (got " << radius << ")";
    throw std::invalid_argument(msg.str());
  }
  Mask mask = Mask::Constant(n, m, false);
  const long shorter = std::min(n, m), longer = std::max(n, m), width = longer - shorter + radius;
  for (long k = 0; k < shorter; ++k)
    for (long l = std::max(0L, k - radius); l <= std::min(longer - 1, k + width); ++l)
      (n > m ? mask(l, k) : mask(k, l)) = true;
  return mask;
}

Mask itakura_mask(long n, long m, double max_slope) {
  check_nonempty(n, m, "mask");
  if (!(max_slope > 0.0) || !std::isfinite(max_slope)) {
    std::ostringstream msg;
    msg << "max_slope must be finite and > 0 (got " << max_slope << ")";
    throw std::invalid_argument(msg.str());
  }
  const double ratio = static_cast<double>(n) / static_cast<double>(m);
  const double steep = max_slope * ratio, shallow = (1.0 / max_slope) * ratio;
  Mask mask = Mask::Constant(n, m, false);
  for (long j = 0; j < m; ++j) {
    const double jd = static_cast<double>(j), last_i = static_cast<double>(n - 1), last_j = static_cast<double>(m - 1);
    const double lower = std::ceil(std::max(round2(shallow * jd), round2(last_i - steep * last_j + steep * jd)));
    const double upper =
        std::floor(std::min(round2(steep * jd), round2(last_i - shallow * last_j + shallow * jd)) + 1.0);
    set_slice(mask, j, static_cast<long>(lower), static_cast<long>(upper));
  }
  const auto infeasible = [&](const std::string& what) {
    std::ostringstream msg;
    msg << "max_slope " << max_slope << " leaves no admissible path for lengths N = " << n << ", M = " << m << ": "
        << what << " is empty";
    throw std::invalid_argument(msg.str());
  };
  for (long i = 0; i < n; ++i)
    if (!mask.row(i).any()) infeasible("row " + std::to_string(i));
  for (long j = 0; j < m; ++j)
    if (!mask.col(j).any()) infeasible("column " + std::to_string(j));
  return mask;
}

Mask diagonal_mask(long n, long m) {
  if (n != m) {
    std::ostringstream msg;
    msg << "the diagonal-only constraint needs N == M (got N = " << n << ", M = " << m << ")";
    throw std::invalid_argument(msg.str());
  }
  return sakoe_chiba_mask(n, m, 0);
}

Matrix apply_mask(const Matrix& D, const Mask& mask) {
  check_shape(mask.rows(), mask.cols(), D.rows(), D.cols(), "mask", "the shape of D");
  return mask.select(D, Matrix::Constant(D.rows(), D.cols(), kInf));
}

}  // namespace sdtw::reference
