// The normalised divergence sdtw(x,y) - (sdtw(x,x) + sdtw(y,y)) / 2 (Blondel et al. 2021).
#ifdef SDTW_HAVE_RAPIDCHECK
#include "rc_support.hpp"

namespace sdtw::test {
namespace {

SDTW_PROPERTY(Divergence, IsNonNegativeAndZeroAtXEqualsY, 200) {
  const Shape s = draw_shape();
  const Matrix x = draw_series(s.n, s.dim), y = draw_series(s.m, s.dim);
  const auto xy = reference::soft_dtw_divergence(x, y, s.options());
  const double scale = std::max({1.0, std::abs(reference::soft_dtw_sqeuclidean(x, x, s.options()).value),
                                 std::abs(reference::soft_dtw_sqeuclidean(y, y, s.options()).value)});
  RC_ASSERT(xy.value >= -1e-12 * scale);
  const auto xx = reference::soft_dtw_divergence(x, x, s.options());
  RC_ASSERT(xx.value == 0.0);
  // x = y is the minimum, so the gradient vanishes there (up to rounding of sdtw(x, x)'s symmetry).
  const double tol = alignment_tolerance(xx.value, s.gamma, s.n, s.n);
  SDTW_RC_EXPECT(close(xx.grad.x, Matrix::Zero(s.n, s.dim), tol));
  SDTW_RC_EXPECT(close(xx.grad.y, Matrix::Zero(s.n, s.dim), tol));
}

// Central differences with h = 1e-6 min(1, sqrt(gamma)): the h^2 truncation error scales like
// h^2 / gamma^2 near tied paths, the rounding error like eps |value| / h.
SDTW_PROPERTY(Divergence, GradientMatchesFiniteDifferences, 100) {
  const Shape s = draw_shape();
  const Matrix x = draw_series(s.n, s.dim), y = draw_series(s.m, s.dim);
  const double h = 1e-6 * std::min(1.0, std::sqrt(s.gamma));
  const auto grad = reference::soft_dtw_divergence(x, y, s.options()).grad;
  const auto fx = [&](const Matrix& xp) { return reference::soft_dtw_divergence(xp, y, s.options()).value; };
  const auto fy = [&](const Matrix& yp) { return reference::soft_dtw_divergence(x, yp, s.options()).value; };
  SDTW_RC_EXPECT(close(grad.x, central_difference(x, fx, h), 1e-6));
  SDTW_RC_EXPECT(close(grad.y, central_difference(y, fy, h), 1e-6));
}

}  // namespace
}  // namespace sdtw::test
#endif
