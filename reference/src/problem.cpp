#include "sdtw/reference/problem.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace sdtw::reference {

bool in_band(long i, long j, const std::optional<long>& bandwidth) {
  return !bandwidth || std::labs(i - j) <= *bandwidth;
}

void check_gamma(double gamma) {
  if (!(gamma > 0.0) || !std::isfinite(gamma)) {
    std::ostringstream msg;
    msg << "gamma must be finite and > 0 (got " << gamma << ")";
    throw std::invalid_argument(msg.str());
  }
}

void check_band(long n, long m, const std::optional<long>& bandwidth) {
  if (!bandwidth) return;
  std::ostringstream msg;
  if (*bandwidth < 0) {
    msg << "bandwidth must be >= 0 or absent (got " << *bandwidth << ")";
    throw std::invalid_argument(msg.str());
  }
  if (std::labs(n - m) > *bandwidth) {
    msg << "bandwidth " << *bandwidth << " leaves no alignment path for lengths N = " << n << ", M = " << m
        << ": it needs bandwidth >= |N - M| = " << std::labs(n - m);
    throw std::invalid_argument(msg.str());
  }
}

void check_finite(const Matrix& a, const std::string& name) {
  for (long i = 0; i < a.rows(); ++i)
    for (long j = 0; j < a.cols(); ++j)
      if (!std::isfinite(a(i, j))) {
        std::ostringstream msg;
        msg << name << " must be finite, but " << name << "(" << i << ", " << j << ") = " << a(i, j);
        throw std::invalid_argument(msg.str());
      }
}

void check_nonempty(long rows, long cols, const std::string& name) {
  if (rows < 1 || cols < 1) {
    std::ostringstream msg;
    msg << name << " must be non-empty (got " << rows << " x " << cols << ")";
    throw std::invalid_argument(msg.str());
  }
}

void check_shape(long got_rows, long got_cols, long rows, long cols, const std::string& name,
                 const std::string& because) {
  if (got_rows == rows && got_cols == cols) return;
  std::ostringstream msg;
  msg << name << " must be " << rows << " x " << cols << " (" << because << "), got " << got_rows << " x " << got_cols;
  throw std::invalid_argument(msg.str());
}

}  // namespace sdtw::reference
