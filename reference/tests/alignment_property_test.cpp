// E as the expected alignment: a visit probability per cell, certain at both ends, zero off the band.
#ifdef SDTW_HAVE_RAPIDCHECK
#include "rc_support.hpp"

namespace sdtw::test {
namespace {

SDTW_PROPERTY(Alignment, IsAVisitProbability, 200) {
  const Shape s = draw_shape();
  const Matrix D = draw_cost(s);
  const auto r = reference::soft_dtw_with_alignment(D, s.options());
  const double tol = alignment_tolerance(r.value, s.gamma, s.n, s.m);
  for (long i = 0; i < s.n; ++i)
    for (long j = 0; j < s.m; ++j) {
      if (!naive::kept(i, j, naive_band(s.band))) RC_ASSERT(r.E(i, j) == 0.0);
      RC_ASSERT(r.E(i, j) >= -tol);
      RC_ASSERT(r.E(i, j) <= 1.0 + tol);
    }
  SDTW_RC_EXPECT(close(r.E(0, 0), 1.0, tol));
  SDTW_RC_EXPECT(close(r.E(s.n - 1, s.m - 1), 1.0, tol));
  // Every path visits every row and every column at least once.
  RC_ASSERT(r.E.rowwise().sum().minCoeff() >= 1.0 - s.m * tol);
  RC_ASSERT(r.E.colwise().sum().minCoeff() >= 1.0 - s.n * tol);
}

}  // namespace
}  // namespace sdtw::test
#endif
