#include "sdtw/reference/variants.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "sdtw/reference/soft_dtw.hpp"

namespace sdtw::reference {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// gamma = 0 is the hard min: the first smallest argument takes all the weight.
std::array<double, 3> move_weights(double diag, double up, double left, double gamma) {
  if (gamma > 0.0) return softmin_weights(diag, up, left, gamma);
  if (diag <= up && diag <= left) return {1.0, 0.0, 0.0};
  if (up <= left) return {0.0, 1.0, 0.0};
  return {0.0, 0.0, 1.0};
}

double move_min(double diag, double up, double left, double gamma) {
  return gamma > 0.0 ? softmin(diag, up, left, gamma) : std::min({diag, up, left});
}

// softmin over the last row (all of it with subsequence, else only its last cell) and its weights,
// computed around the minimum like softmin_weights; at gamma = 0 the first minimum takes all.
double end_value(const Matrix& R, const VariantOptions& options, Vector* weights) {
  const long N = R.rows() - 1, M = R.cols() - 1, first = options.subsequence ? 1 : M;
  Vector w = Vector::Zero(M);
  double m = kInf;
  long at = M;
  for (long j = first; j <= M; ++j)
    if (R(N, j) < m) m = R(N, j), at = j;
  if (m == kInf) {
    if (weights) *weights = Vector::Constant(M, kNaN);
    return kInf;
  }
  double value = m;
  if (options.gamma > 0.0) {
    double s = 0.0;
    for (long j = first; j <= M; ++j) s += w(j - 1) = std::exp((m - R(N, j)) / options.gamma);
    w /= s;
    value = m - options.gamma * std::log(s);
  } else {
    w(at - 1) = 1.0;
  }
  if (weights) *weights = w;
  return value;
}

}  // namespace

void check_variant(const Matrix& D, const VariantOptions& options) {
  check_nonempty(D.rows(), D.cols(), "D");
  std::ostringstream msg;
  if (!(options.gamma >= 0.0) || !std::isfinite(options.gamma)) {
    msg << "gamma must be finite and >= 0 (got " << options.gamma << ")";
    throw std::invalid_argument(msg.str());
  }
  if (!std::isfinite(options.warp)) {
    msg << "warp must be finite (got " << options.warp << ")";
    throw std::invalid_argument(msg.str());
  }
  for (long i = 0; i < D.rows(); ++i)
    for (long j = 0; j < D.cols(); ++j)
      if (std::isnan(D(i, j)) || D(i, j) == -kInf) {
        msg << "D must be finite or +inf (a forbidden cell), but D(" << i << ", " << j << ") = " << D(i, j);
        throw std::invalid_argument(msg.str());
      }
}

// The vertical move into (i, j). A subsequence path enters its first row once, by the diagonal from
// R(0, j - 1) = 0: a vertical move out of row 0 would count every start a second time.
static double up(const Matrix& R, long i, long j, const VariantOptions& options) {
  return options.subsequence && i == 1 ? kInf : R(i - 1, j) + options.warp;
}

Matrix variant_R(const Matrix& D, const VariantOptions& options) {
  check_variant(D, options);
  const long N = D.rows(), M = D.cols();
  Matrix R = Matrix::Constant(N + 1, M + 1, kInf);
  R(0, 0) = 0.0;
  if (options.subsequence) R.row(0).setZero();
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (D(i - 1, j - 1) != kInf)
        R(i, j) = D(i - 1, j - 1) + move_min(R(i - 1, j - 1), up(R, i, j, options), R(i, j - 1) + options.warp,
                                             options.gamma);
  return R;
}

// The backward recursion of expected_alignment with the warp inside each move's argument and the
// end's weights seeding the last row: E(c) = sum over successors s of E(s) * (weight of c at s).
VariantResult soft_dtw_variant(const Matrix& D, const VariantOptions& options) {
  const Matrix R = variant_R(D, options);
  const long N = D.rows(), M = D.cols();
  VariantResult result{kInf, Matrix::Constant(N, M, kNaN), Vector(), kNaN};
  result.value = end_value(R, options, &result.end);
  if (result.value == kInf) return result;
  Matrix E = Matrix::Zero(N + 1, M + 1);
  E.row(N).tail(M) = result.end.transpose();
  for (long i = N; i >= 1; --i)
    for (long j = M; j >= 1; --j) {
      if (R(i, j) == kInf || E(i, j) == 0.0) continue;
      const auto w =
          move_weights(R(i - 1, j - 1), up(R, i, j, options), R(i, j - 1) + options.warp, options.gamma);
      E(i - 1, j - 1) += E(i, j) * w[0];
      E(i - 1, j) += E(i, j) * w[1];
      E(i, j - 1) += E(i, j) * w[2];
    }
  result.E = E.block(1, 1, N, M);
  result.expected_end = 0.0;
  for (long j = 0; j < M; ++j) result.expected_end += static_cast<double>(j) * result.end(j);
  return result;
}

}  // namespace sdtw::reference
