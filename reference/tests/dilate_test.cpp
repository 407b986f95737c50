// DILATE against its definition computed by the independent naive loops (value) and against central
// differences of its value (gradient): a wrong alpha split, a missing temporal gradient or a wrong
// Omega normalisation moves them by O(1).
#include "test_support.hpp"

namespace sdtw::test {
namespace {

// The reference's Omega(i,j) = (i - j)^2 over 1-based indices, divided by N_output^2 = 9.
TEST(Dilate, OmegaIsTheReferenceTemporalPenalty) {
  Matrix want(3, 4);
  want << 0, 1, 4, 9, 1, 0, 1, 4, 4, 1, 0, 1;
  EXPECT_EQ(reference::dilate_omega(3, 4), want / 9.0);
}

// alpha * sdtw(D) + (1 - alpha) * sum_ij Omega(i,j) E(i,j), with sdtw and E from the naive loops.
TEST(Dilate, ValueMatchesItsDefinition) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const Shape s = random_shape(seed + 8000, 12, 1e-2);
    SCOPED_TRACE(s);
    const Matrix D = random_matrix(s.n, s.m, seed + 8100, 0.0, 2.0);
    const Matrix Omega = seed % 2 ? reference::dilate_omega(s.n, s.m) : random_matrix(s.n, s.m, seed + 8200, 0.0, 1.0);
    const double alpha = static_cast<double>(seed % 5) / 4.0;
    const naive::SoftDtw want = naive::soft_dtw(to_grid(D), s.gamma, naive_band(s.band));
    double temporal = 0.0;
    for (long i = 0; i < s.n; ++i)
      for (long j = 0; j < s.m; ++j) temporal += Omega(i, j) * want.E[i][j];
    const auto got = reference::dilate(D, Omega, alpha, s.options());
    const double tol = alignment_tolerance(want.value, s.gamma, s.n, s.m);
    EXPECT_TRUE(close(got.shape, want.value, 1e-12));
    EXPECT_TRUE(close(got.temporal, temporal, tol));
    EXPECT_TRUE(close(got.value, alpha * want.value + (1 - alpha) * temporal, tol));
  }
}

// Measured worst error 6e-9 of the gradient's size over these seeds (h = 1e-6, gamma >= 0.1 so that
// the h^2 / gamma^2 truncation of the temporal term's third derivative stays small).
TEST(Dilate, GradientMatchesFiniteDifferences) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const Shape s = random_shape(seed + 9000, 10, 0.1);
    SCOPED_TRACE(s);
    const Matrix D = random_matrix(s.n, s.m, seed + 9100, 0.0, 1.0);
    const Matrix Omega = reference::dilate_omega(s.n, s.m);
    for (double alpha : {0.0, 0.5, 1.0}) {
      SCOPED_TRACE(alpha);
      const auto f = [&](const Matrix& Dp) { return reference::dilate(Dp, Omega, alpha, s.options()).value; };
      EXPECT_TRUE(close(reference::dilate(D, Omega, alpha, s.options()).grad, central_difference(D, f, 1e-6), 1e-6));
    }
  }
}

// Every path crosses the +inf end cost: the shape term is +inf and the rest undefined, at every alpha.
TEST(Dilate, NoFinitePathGivesNaN) {
  Matrix D = random_matrix(3, 4, 51, 0.0, 1.0);
  D(2, 3) = reference::kInf;
  for (double alpha : {0.0, 0.5, 1.0}) {
    SCOPED_TRACE(alpha);
    const auto r = reference::dilate(D, reference::dilate_omega(3, 4), alpha, {});
    EXPECT_EQ(r.shape, reference::kInf);
    EXPECT_TRUE(std::isnan(r.value));
    EXPECT_TRUE(std::isnan(r.temporal));
    EXPECT_TRUE(r.grad.array().isNaN().all());
  }
}

}  // namespace
}  // namespace sdtw::test
