// The reference against the independent loops of naive_soft_dtw.hpp: the value to 1e-12, E and
// the gradients to 1e-12 or, for small gamma, to the rounding bound of alignment_tolerance.
#include "test_support.hpp"

namespace sdtw::test {
namespace {

constexpr double kTol = 1e-12;

void expect_agreement_on_cost(const Matrix& D, const Options& options) {
  const auto ref = reference::soft_dtw_with_alignment(D, options);
  const auto nai = naive::soft_dtw(to_grid(D), options.gamma, naive_band(options.bandwidth));
  EXPECT_TRUE(close(ref.value, nai.value, kTol));
  EXPECT_TRUE(close(ref.E, to_matrix(nai.E), alignment_tolerance(ref.value, options.gamma, D.rows(), D.cols())));
  EXPECT_EQ(reference::soft_dtw(D, options), ref.value);
}

void expect_agreement_on_sqeuclidean(const Matrix& x, const Matrix& y, const Options& options) {
  const auto ref = reference::soft_dtw_sqeuclidean(x, y, options);
  const naive::Grid gx = to_grid(x), gy = to_grid(y);
  const auto nai = naive::soft_dtw(naive::sqeuclidean(gx, gy), options.gamma, naive_band(options.bandwidth));
  const auto grads = naive::sqeuclidean_gradients(gx, gy, nai.E);
  const double tol = alignment_tolerance(ref.value, options.gamma, x.rows(), y.rows());
  EXPECT_TRUE(close(ref.value, nai.value, kTol));
  EXPECT_TRUE(close(ref.grad.x, to_matrix(grads[0]), tol));
  EXPECT_TRUE(close(ref.grad.y, to_matrix(grads[1]), tol));
}

TEST(NaiveAgreement, EdgeShapesOnCostMatrices) {
  const Shape shapes[] = {{1, 1, 1, 1.0, {}},  {1, 7, 1, 0.1, {}},  {7, 1, 1, 0.01, {}},  {1, 2, 1, 1e-3, 1},
                          {2, 1, 1, 10.0, 1},  {5, 9, 1, 0.5, {}},  {9, 5, 1, 0.5, 4},    {11, 11, 1, 0.05, 0},
                          {13, 7, 1, 2.0, 6},  {4, 4, 1, 1e-3, 1}, {31, 17, 1, 0.3, {}}, {17, 31, 1, 0.3, 20}};
  std::uint64_t seed = 100;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s);
    expect_agreement_on_cost(random_matrix(s.n, s.m, ++seed, 0.0, 1.0), s.options());
  }
}

TEST(NaiveAgreement, RandomShapesOnCostMatrices) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Shape s = random_shape(seed, seed % 5 == 0 ? 40 : 12);
    SCOPED_TRACE(s);
    expect_agreement_on_cost(random_matrix(s.n, s.m, seed + 1000, 0.0, 2.0), s.options());
  }
}

TEST(NaiveAgreement, RandomShapesOnSqEuclidean) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const Shape s = random_shape(seed + 7000, seed % 5 == 0 ? 40 : 12);
    SCOPED_TRACE(s);
    expect_agreement_on_sqeuclidean(random_matrix(s.n, s.dim, 2 * seed), random_matrix(s.m, s.dim, 2 * seed + 1),
                                    s.options());
  }
}

}  // namespace
}  // namespace sdtw::test
