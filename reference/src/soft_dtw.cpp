#include "sdtw/reference/soft_dtw.hpp"

#include <algorithm>
#include <cmath>

namespace sdtw::reference {

double softmin(double a, double b, double c, double gamma) {
  const double m = std::min({a, b, c});
  if (std::isinf(m)) return kInf;
  const double s = std::exp(-(a - m) / gamma) + std::exp(-(b - m) / gamma) + std::exp(-(c - m) / gamma);
  return m - gamma * std::log(s);
}

static void check_problem(const Matrix& D, const Options& options) {
  check_nonempty(D.rows(), D.cols(), "D");
  check_gamma(options.gamma);
  check_finite(D, "D");
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

// E(i,j) = sum over the successors s of (i,j) of E(s) * exp((R(s) - D(s) - R(i,j)) / gamma):
// the weight that (i,j) has in the softmin of s (softmin at s = R(s) - D(s)).
Matrix expected_alignment(const Matrix& D, const Matrix& R, const Options& options) {
  const long N = D.rows(), M = D.cols();
  const double g = options.gamma;
  Matrix E = Matrix::Zero(N + 2, M + 2);  // 1-based like R, with a zero border after N and M
  E(N, M) = 1.0;
  auto weight = [&](long i, long j, long si, long sj) {
    if (si > N || sj > M || std::isinf(R(si, sj))) return 0.0;
    return std::exp((R(si, sj) - D(si - 1, sj - 1) - R(i, j)) / g);
  };
  for (long i = N; i >= 1; --i)
    for (long j = M; j >= 1; --j) {
      if (i == N && j == M) continue;
      if (std::isinf(R(i, j))) continue;
      E(i, j) = E(i + 1, j) * weight(i, j, i + 1, j) + E(i, j + 1) * weight(i, j, i, j + 1) +
                E(i + 1, j + 1) * weight(i, j, i + 1, j + 1);
    }
  return E.block(1, 1, N, M);
}

SoftDtwResult soft_dtw_with_alignment(const Matrix& D, const Options& options) {
  const Matrix R = soft_dtw_R(D, options);
  return {R(D.rows(), D.cols()), expected_alignment(D, R, options)};
}

}  // namespace sdtw::reference
