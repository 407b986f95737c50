// E and the x/y gradients against central differences of the value (h = 1e-6, error <= 1e-6 of
// the gradient's size): a wrong factor, sign or missing term moves them by O(1).
#include "test_support.hpp"

namespace sdtw::test {
namespace {

constexpr double kStep = 1e-6;
constexpr double kTol = 1e-6;

// Fixed seeds, gamma over all of [1e-3, 10]: the worst error measured is 8e-9 of the gradient,
// so kTol leaves a 100x margin for the h^2 truncation (~h^2 / gamma^2 near tied paths).
Shape fd_shape(std::uint64_t seed) { return random_shape(seed, seed % 4 == 0 ? 25 : 10); }

TEST(FiniteDifference, AlignmentIsGradientOfValueWrtCost) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const Shape s = fd_shape(seed);
    SCOPED_TRACE(s);
    const Matrix D = random_matrix(s.n, s.m, seed + 500, 0.0, 2.0);
    const auto f = [&](const Matrix& Dp) { return reference::soft_dtw(Dp, s.options()); };
    EXPECT_TRUE(close(reference::soft_dtw_with_alignment(D, s.options()).E, central_difference(D, f, kStep), kTol));
  }
}

TEST(FiniteDifference, SqEuclideanGradientsWrtXAndY) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const Shape s = fd_shape(seed + 300);
    SCOPED_TRACE(s);
    const Matrix x = random_matrix(s.n, s.dim, 2 * seed), y = random_matrix(s.m, s.dim, 2 * seed + 1);
    const auto grad = reference::soft_dtw_sqeuclidean(x, y, s.options()).grad;
    const auto fx = [&](const Matrix& xp) { return reference::soft_dtw_sqeuclidean(xp, y, s.options()).value; };
    const auto fy = [&](const Matrix& yp) { return reference::soft_dtw_sqeuclidean(x, yp, s.options()).value; };
    EXPECT_TRUE(close(grad.x, central_difference(x, fx, kStep), kTol));
    EXPECT_TRUE(close(grad.y, central_difference(y, fy, kStep), kTol));
  }
}

}  // namespace
}  // namespace sdtw::test
