// Invariances of the squared-Euclidean soft-DTW: swapping the series, translating both.
#ifdef SDTW_HAVE_RAPIDCHECK
#include "rc_support.hpp"

namespace sdtw::test {
namespace {

// D(y, x) = D(x, y)^T and the recursion is symmetric under transposition (the band too).
SDTW_PROPERTY(Symmetry, SwappingXAndYTransposesTheAlignment, 200) {
  const Shape s = draw_shape();
  const Matrix x = draw_series(s.n, s.dim), y = draw_series(s.m, s.dim);
  const reference::SqEuclideanCost xy(x, y), yx(y, x);
  const auto a = reference::soft_dtw_with_alignment(xy.compute(), s.options());
  const auto b = reference::soft_dtw_with_alignment(yx.compute(), s.options());
  SDTW_RC_EXPECT(close(a.value, b.value, 1e-12));
  SDTW_RC_EXPECT(close(Matrix(b.E.transpose()), a.E, alignment_tolerance(a.value, s.gamma, s.n, s.m)));
  const auto ga = reference::soft_dtw_sqeuclidean(x, y, s.options()).grad;
  const auto gb = reference::soft_dtw_sqeuclidean(y, x, s.options()).grad;
  const double tol = alignment_tolerance(a.value, s.gamma, s.n, s.m);
  SDTW_RC_EXPECT(close(gb.x, ga.y, tol));
  SDTW_RC_EXPECT(close(gb.y, ga.x, tol));
}

// ||(x_i + t) - (y_j + t)||^2 = ||x_i - y_j||^2; only the rounding of x + t changes D.
SDTW_PROPERTY(Symmetry, TranslatingBothLeavesTheValue, 200) {
  const Shape s = draw_shape();
  const Matrix x = draw_series(s.n, s.dim), y = draw_series(s.m, s.dim);
  const Eigen::RowVectorXd t = random_matrix(1, s.dim, draw_seed(), -3.0, 3.0);
  const Matrix xt = x.rowwise() + t, yt = y.rowwise() + t;
  const auto a = reference::soft_dtw_sqeuclidean(x, y, s.options());
  const auto b = reference::soft_dtw_sqeuclidean(xt, yt, s.options());
  SDTW_RC_EXPECT(close(b.value, a.value, 1e-12));
  // The gradient depends only on differences too, but through E, with E's rounding bound.
  SDTW_RC_EXPECT(close(b.grad.x, a.grad.x, 1e3 * alignment_tolerance(a.value, s.gamma, s.n, s.m)));
}

}  // namespace
}  // namespace sdtw::test
#endif
