#include "sdtw/reference/second_order.hpp"

#include <cmath>
#include <limits>

#include "sdtw/reference/soft_dtw.hpp"

namespace sdtw::reference {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

void check_direction(const Matrix& D, const Matrix& Z, const std::string& name) {
  check_shape(Z.rows(), Z.cols(), D.rows(), D.cols(), name, "the shape of D");
  check_finite(Z, name);
}

// The sweeps index R, Rdot and E by D's shape: a mismatched one would be read out of bounds.
static void check_padded(const Matrix& D, const Matrix& a, const std::string& name) {
  check_shape(a.rows(), a.cols(), D.rows() + 1, D.cols() + 1, name, "one row and one column more than D");
}

// Differentiating R(i,j) = D(i,j) + softmin(R(p_1), R(p_2), R(p_3)) along Z: the gradient of softmin
// in its arguments is the weight vector w, hence Rdot(i,j) = Z(i,j) + sum_k w_k Rdot(p_k).
Matrix soft_dtw_Rdot(const Matrix& D, const Matrix& R, const Matrix& Z, const Options& options) {
  check_direction(D, Z, "Z");
  check_padded(D, R, "R");
  const long N = D.rows(), M = D.cols();
  if (!std::isfinite(R(N, M))) return Matrix::Constant(N + 1, M + 1, kNaN);
  Matrix Rdot = Matrix::Zero(N + 1, M + 1);
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j) {
      if (R(i, j) == kInf) continue;  // unreachable: weight 0 in every successor, so Rdot stays 0
      const auto w = softmin_weights(R(i - 1, j - 1), R(i - 1, j), R(i, j - 1), options.gamma);
      Rdot(i, j) = Z(i - 1, j - 1) + w[0] * Rdot(i - 1, j - 1) + w[1] * Rdot(i - 1, j) + w[2] * Rdot(i, j - 1);
    }
  return Rdot;
}

// E(p) = sum over successors s of E(s) w_p(s), with w_p(s) = exp(-R(p)/g) / sum_q exp(-R(q)/g) over
// the predecessors q of s. Differentiating a normalised exponential:
//   wdot_p(s) = w_p(s) / g * (sum_q w_q(s) Rdot(q) - Rdot(p)),
// and by the product rule Edot(p) = sum_s Edot(s) w_p(s) + E(s) wdot_p(s), from Edot(N,M) = 0
// (E(N,M) = 1 for every D). This is the reverse sweep of the directional derivatives in Mensch &
// Blondel 2018; DILATE's dtw_hessian_prod computes the same quantity.
Matrix expected_alignment_dot(const Matrix& D, const Matrix& R, const Matrix& E, const Matrix& Rdot,
                              const Options& options) {
  check_padded(D, R, "R");
  check_shape(E.rows(), E.cols(), D.rows(), D.cols(), "E", "the shape of D");
  check_padded(D, Rdot, "Rdot");
  const long N = D.rows(), M = D.cols();
  if (!std::isfinite(R(N, M))) return Matrix::Constant(N, M, kNaN);
  const double g = options.gamma;
  Matrix Edot = Matrix::Zero(N + 1, M + 1);  // 1-based like R; row and column 0 collect what (1,1) hands on
  for (long i = N; i >= 1; --i)
    for (long j = M; j >= 1; --j) {
      if (R(i, j) == kInf) continue;
      const auto w = softmin_weights(R(i - 1, j - 1), R(i - 1, j), R(i, j - 1), g);
      const double rdot[3] = {Rdot(i - 1, j - 1), Rdot(i - 1, j), Rdot(i, j - 1)};
      const double mean = w[0] * rdot[0] + w[1] * rdot[1] + w[2] * rdot[2];
      const double e = E(i - 1, j - 1), edot = Edot(i, j);
      Edot(i - 1, j - 1) += edot * w[0] + e * w[0] / g * (mean - rdot[0]);
      Edot(i - 1, j) += edot * w[1] + e * w[1] / g * (mean - rdot[1]);
      Edot(i, j - 1) += edot * w[2] + e * w[2] / g * (mean - rdot[2]);
    }
  return Edot.block(1, 1, N, M);
}

SoftDtwHessianProduct soft_dtw_hessian_product(const Matrix& D, const Matrix& Z, const Options& options) {
  const Matrix R = soft_dtw_R(D, options);
  const Matrix E = expected_alignment(D, R, options);
  const Matrix Rdot = soft_dtw_Rdot(D, R, Z, options);
  const long N = D.rows(), M = D.cols();
  return {R(N, M), E, Rdot(N, M), expected_alignment_dot(D, R, E, Rdot, options)};
}

}  // namespace sdtw::reference
