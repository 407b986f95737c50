// Extreme gamma and input scales: for every gamma > 0 and finite inputs the value, E and
// the gradient are finite, E lies in [0, 1], and soft-DTW tends to hard DTW as gamma / cost -> 0.
#include <cmath>
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::kInf;
using reference::SqEuclideanCost;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Case {
  long n, m, dim;
  std::optional<long> band;
};
const std::vector<Case> kCases = {{7, 5, 3, std::nullopt}, {1, 6, 2, std::nullopt}, {9, 9, 1, 2}, {12, 10, 4, std::nullopt}};

std::vector<double> decades(int lo, int hi, int step) {
  std::vector<double> v;
  for (int k = lo; k <= hi; k += step) v.push_back(std::pow(10.0, k));
  return v;
}

// max |a - b| <= tol * max |b|: relative to the size of b, whatever its scale.
::testing::AssertionResult close_relative(const Matrix& a, const Matrix& b, double tol) {
  const double diff = max_abs(a - b), scale = max_abs(b);
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max |diff| = " << diff << " > " << tol << " * " << scale;
}

Matrix path_indicator(const reference::HardDtwResult& hard, long n, long m) {
  Matrix P = Matrix::Zero(n, m);
  for (const auto& [i, j] : hard.path) P(i, j) = 1.0;
  return P;
}

TEST(ExtremeScales, ValueAlignmentAndGradientStayFiniteForEveryGammaAndScale) {
  std::vector<double> gammas = decades(-30, 30, 3);
  for (double g : {5e-324, 1e-310, 1e-300, 1e300}) gammas.push_back(g);
  std::uint64_t seed = 100;
  for (const Case& c : kCases)
    for (double scale : decades(-20, 20, 5)) {
      const Matrix x = scale * random_matrix(c.n, c.dim, ++seed), y = scale * random_matrix(c.m, c.dim, ++seed);
      const SqEuclideanCost cost(x, y);
      for (double gamma : gammas) {
        SCOPED_TRACE(::testing::Message() << "N = " << c.n << ", M = " << c.m << ", scale = " << scale
                                          << ", gamma = " << gamma);
        const auto r = reference::soft_dtw_with_alignment(cost.compute(), {gamma, c.band});
        ASSERT_TRUE(std::isfinite(r.value));
        ASSERT_TRUE(r.E.allFinite());
        EXPECT_GE(r.E.minCoeff(), 0.0);
        EXPECT_LE(r.E.maxCoeff(), 1.0 + 1e-12);
        // Every path starts at (0, 0) and ends at (N-1, M-1): all the mass arrives there.
        EXPECT_NEAR(r.E(0, 0), 1.0, 1e-12);
        EXPECT_TRUE(cost.jacobian_product(r.E).x.allFinite());
      }
    }
}

// gamma / cost scale <= 1e-12 on random inputs: E is the (unique) optimal path, the value is the
// DTW cost to rounding (sdtw lies in [dtw - gamma log(#paths), dtw]) and the gradient is DTW's.
TEST(ExtremeScales, TendsToHardDtwAsGammaOverCostVanishes) {
  std::uint64_t seed = 200;
  for (const Case& c : kCases)
    for (double scale : decades(-20, 20, 5)) {
      const Matrix x = scale * random_matrix(c.n, c.dim, ++seed), y = scale * random_matrix(c.m, c.dim, ++seed);
      const SqEuclideanCost cost(x, y);
      const Matrix D = cost.compute();
      const auto hard = reference::hard_dtw(D, c.band);
      const Matrix P = path_indicator(hard, c.n, c.m);
      const auto hard_grad = cost.jacobian_product(P);
      for (double ratio : {1e-12, 1e-20, 1e-40, 1e-300}) {
        const double gamma = ratio * scale * scale;
        if (!(gamma > 0.0)) continue;
        SCOPED_TRACE(::testing::Message() << "N = " << c.n << ", M = " << c.m << ", scale = " << scale
                                          << ", gamma = " << gamma);
        const auto r = reference::soft_dtw_with_alignment(D, {gamma, c.band});
        EXPECT_TRUE(close(r.value / (scale * scale), hard.value / (scale * scale), 1e-12));
        EXPECT_LE(max_abs(r.E - P), 1e-9);
        const auto grad = cost.jacobian_product(r.E);
        EXPECT_TRUE(close_relative(grad.x, hard_grad.x, 1e-9));
        EXPECT_TRUE(close_relative(grad.y, hard_grad.y, 1e-9));
      }
    }
}

// sdtw_{gamma c^2}(c x, c y) = c^2 sdtw_gamma(x, y) with the same E: scaling the inputs by c is
// scaling gamma by 1 / c^2, so any scale from 1e-20 to 1e20 must match the unit-scale results.
TEST(ExtremeScales, ScalingInputsByCIsScalingGammaByOneOverCSquared) {
  std::uint64_t seed = 300;
  for (const Case& c : kCases) {
    const Matrix x = random_matrix(c.n, c.dim, ++seed), y = random_matrix(c.m, c.dim, ++seed);
    for (double gamma : {1e-3, 1e-1, 1.0, 1e3}) {
      const auto unit = reference::soft_dtw_sqeuclidean(x, y, {gamma, c.band});
      for (double scale : decades(-20, 20, 4)) {
        SCOPED_TRACE(::testing::Message() << "N = " << c.n << ", M = " << c.m << ", scale = " << scale
                                          << ", gamma = " << gamma);
        const auto r = reference::soft_dtw_sqeuclidean(scale * x, scale * y, {gamma * scale * scale, c.band});
        EXPECT_TRUE(close(r.value / (scale * scale), unit.value, 1e-10));
        EXPECT_TRUE(close_relative(r.grad.x / scale, unit.grad.x, 1e-10));
        EXPECT_TRUE(close_relative(r.grad.y / scale, unit.grad.y, 1e-10));
      }
    }
  }
}

// A +inf cost forbids its cell: the value is that of a huge finite cost (whose weight underflows to
// exactly 0), and the cell gets E = 0. With no finite path, or a NaN cost, the value is not finite
// and E is NaN.
TEST(ExtremeScales, InfiniteCostsForbidCellsAndNonFiniteValuesHaveNaNAlignment) {
  const Matrix D = random_matrix(5, 6, 400, 0.0, 1.0);
  for (double gamma : {1e-3, 1.0}) {
    Matrix blocked = D, huge = D;
    blocked(2, 3) = blocked(0, 4) = kInf;
    huge(2, 3) = huge(0, 4) = 1e300;
    const auto rb = reference::soft_dtw_with_alignment(blocked, {gamma, std::nullopt});
    const auto rh = reference::soft_dtw_with_alignment(huge, {gamma, std::nullopt});
    EXPECT_TRUE(close(rb.value, rh.value, 1e-14));
    EXPECT_TRUE(close(rb.E, rh.E, 1e-14));
    EXPECT_EQ(rb.E(2, 3), 0.0);
    EXPECT_EQ(rb.E(0, 4), 0.0);

    for (double bad : {kInf, kNaN}) {
      Matrix D_bad = D;
      D_bad(0, 0) = bad;  // every path starts there
      const auto r = reference::soft_dtw_with_alignment(D_bad, {gamma, std::nullopt});
      EXPECT_FALSE(std::isfinite(r.value));
      EXPECT_EQ(std::isnan(r.value), std::isnan(bad));
      EXPECT_TRUE(r.E.array().isNaN().all());
    }
    Matrix D_nan = D;
    D_nan(3, 2) = kNaN;
    EXPECT_TRUE(std::isnan(reference::soft_dtw(D_nan, {gamma, std::nullopt})));
  }
}

}  // namespace
}  // namespace sdtw::test
