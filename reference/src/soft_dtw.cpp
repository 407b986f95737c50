#include "sdtw/reference/soft_dtw.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sdtw::reference {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double softmin(double a, double b, double c, double gamma) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c)) return kNaN;
  const double m = std::min({a, b, c});
  if (m == kInf) return kInf;
  const double s = std::exp(-(a - m) / gamma) + std::exp(-(b - m) / gamma) + std::exp(-(c - m) / gamma);
  return m - gamma * std::log(s);
}

// Each term lies in [0, 1] and the smallest argument's is 1, so s is in [1, 3]: no overflow and no
// 0/0 for any gamma > 0, even where (a - m) / gamma overflows to +inf (the term is then 0).
std::array<double, 3> softmin_weights(double a, double b, double c, double gamma) {
  const double m = std::min({a, b, c});
  const double wa = std::exp((m - a) / gamma), wb = std::exp((m - b) / gamma), wc = std::exp((m - c) / gamma);
  const double s = wa + wb + wc;
  return {wa / s, wb / s, wc / s};
}

static void check_problem(const Matrix& D, const Options& options) {
  check_nonempty(D.rows(), D.cols(), "D");
  check_gamma(options.gamma);
  check_band(D.rows(), D.cols(), options.bandwidth);
}

Matrix soft_dtw_R(const Matrix& D, const Options& options) {
  check_problem(D, options);
  const long N = D.rows(), M = D.cols();
  Matrix R = Matrix::Constant(N + 1, M + 1, kInf);
  R(0, 0) = 0.0;
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (in_band(i - 1, j - 1, options.bandwidth))
        R(i, j) = D(i - 1, j - 1) + softmin(R(i - 1, j - 1), R(i - 1, j), R(i, j - 1), options.gamma);
  return R;
}

double soft_dtw(const Matrix& D, const Options& options) { return soft_dtw_R(D, options)(D.rows(), D.cols()); }

// Going backward from E(N,M) = 1, each reachable cell hands its E to its three predecessors in
// proportion to their softmin weights at that cell, so E(i,j) = sum over the successors s of
// (i,j) of E(s) * (weight of (i,j) in the softmin of s). The weights come from the predecessors'
// own R and sum to one, so E stays in [0, 1] however small gamma is against R.
Matrix expected_alignment(const Matrix& D, const Matrix& R, const Options& options) {
  const long N = D.rows(), M = D.cols();
  if (!std::isfinite(R(N, M))) return Matrix::Constant(N, M, kNaN);
  Matrix E = Matrix::Zero(N + 1, M + 1);  // 1-based like R; row and column 0 collect what (1,1) hands on
  E(N, M) = 1.0;
  for (long i = N; i >= 1; --i)
    for (long j = M; j >= 1; --j) {
      if (R(i, j) == kInf) continue;  // unreachable (off the band or behind infinite costs): E = 0
      const auto w = softmin_weights(R(i - 1, j - 1), R(i - 1, j), R(i, j - 1), options.gamma);
      E(i - 1, j - 1) += E(i, j) * w[0];
      E(i - 1, j) += E(i, j) * w[1];
      E(i, j - 1) += E(i, j) * w[2];
    }
  return E.block(1, 1, N, M);
}

SoftDtwResult soft_dtw_with_alignment(const Matrix& D, const Options& options) {
  const Matrix R = soft_dtw_R(D, options);
  return {R(D.rows(), D.cols()), expected_alignment(D, R, options)};
}

}  // namespace sdtw::reference
