#include "sdtw/reference/dilate.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "sdtw/reference/second_order.hpp"

namespace sdtw::reference {

Matrix dilate_omega(long n, long m) {
  check_nonempty(n, m, "Omega");
  Matrix Omega(n, m);
  const double scale = 1.0 / (static_cast<double>(n) * static_cast<double>(n));
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < m; ++j) Omega(i, j) = static_cast<double>((i - j) * (i - j)) * scale;
  return Omega;
}

DilateResult dilate(const Matrix& D, const Matrix& Omega, double alpha, const Options& options) {
  if (!(alpha >= 0.0 && alpha <= 1.0)) {
    std::ostringstream msg;
    msg << "alpha must be in [0, 1] (got " << alpha << ")";
    throw std::invalid_argument(msg.str());
  }
  check_direction(D, Omega, "Omega");
  const SoftDtwHessianProduct h = soft_dtw_hessian_product(D, Omega, options);
  const double temporal = h.value_dot;  // <E, Omega>
  return {alpha * h.value + (1.0 - alpha) * temporal, h.value, temporal, alpha * h.E + (1.0 - alpha) * h.E_dot};
}

}  // namespace sdtw::reference
