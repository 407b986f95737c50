// Bad input is rejected with std::invalid_argument whose message names the offending parameter.
#include <functional>
#include <limits>
#include <stdexcept>

#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::BatchShape;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const Matrix D = random_matrix(3, 4, 1, 0.0, 1.0);
const Matrix x = random_matrix(3, 2, 2), y = random_matrix(4, 2, 3);

TEST(InvalidInput, GammaMustBePositiveAndFinite) {
  for (double gamma : {0.0, -1.0, -0.0, kNaN, kInf}) {
    SCOPED_TRACE(gamma);
    EXPECT_TRUE(rejects([&] { reference::soft_dtw(D, {gamma, {}}); }, "gamma"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_sqeuclidean(x, y, {gamma, {}}); }, "gamma"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_divergence(x, y, {gamma, {}}); }, "gamma"));
  }
}

TEST(InvalidInput, EmptyInputs) {
  EXPECT_TRUE(rejects([] { reference::soft_dtw(Matrix(0, 4), {}); }, "D must be non-empty"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw(Matrix(3, 0), {}); }, "D must be non-empty"));
  EXPECT_TRUE(rejects([] { reference::hard_dtw(Matrix(0, 0)); }, "D must be non-empty"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw_sqeuclidean(Matrix(0, 2), y, {}); }, "x must be non-empty"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw_sqeuclidean(x, Matrix(4, 0), {}); }, "y must be non-empty"));
}

TEST(InvalidInput, NonFiniteEntries) {
  for (double bad : {kNaN, kInf, -kInf}) {
    SCOPED_TRACE(bad);
    Matrix Dbad = D, xbad = x, ybad = y;
    Dbad(2, 1) = xbad(1, 0) = ybad(3, 1) = bad;
    EXPECT_TRUE(rejects([&] { reference::hard_dtw(Dbad); }, "D(2, 1)"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_sqeuclidean(xbad, y, {}); }, "x(1, 0)"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_sqeuclidean(x, ybad, {}); }, "y(3, 1)"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_divergence(x, ybad, {}); }, "y(3, 1)"));
  }
}

TEST(InvalidInput, FeatureMismatch) {
  EXPECT_TRUE(rejects([] { reference::soft_dtw_sqeuclidean(x, Matrix::Zero(4, 3), {}); }, "features"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw_divergence(x, Matrix::Zero(4, 3), {}); }, "features"));
}

TEST(InvalidInput, BandLeavingNoPath) {
  // |N - M| = 1 here, so bandwidth 0 cannot reach the end cell.
  EXPECT_TRUE(rejects([] { reference::soft_dtw(D, {1.0, 0}); }, "bandwidth"));
  EXPECT_TRUE(rejects([] { reference::hard_dtw(D, 0); }, "bandwidth"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw_sqeuclidean(x, y, {1.0, 0}); }, "bandwidth"));
  EXPECT_TRUE(rejects([] { reference::soft_dtw(Matrix::Zero(3, 3), {1.0, -1}); }, "bandwidth"));
  EXPECT_NO_THROW(reference::soft_dtw(D, {1.0, 1}));
}

TEST(InvalidInput, BatchLengthsOutOfRange) {
  const std::vector<double> Db(2 * 3 * 4, 1.0), xb(2 * 3 * 2, 0.5), yb(2 * 4 * 2, 0.25);
  // N = 3, M = 4: lengths must lie in [1, 3] and [1, 4].
  for (const auto& [bad_x, bad_y] : {std::pair{0L, 0L}, {-1L, -1L}, {4L, 5L}}) {
    SCOPED_TRACE(bad_x);
    const long x_len[] = {3, bad_x}, y_len[] = {bad_y, 4};
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_cost_batch(Db.data(), {2, 3, 4, 1, x_len, nullptr}, {}, true); },
                        "x_len[1]"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_sqeuclidean_batch(xb.data(), yb.data(), {2, 3, 4, 2, x_len, nullptr},
                                                                    {}, true); },
                        "x_len[1]"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_cost_batch(Db.data(), {2, 3, 4, 1, nullptr, y_len}, {}, true); },
                        "y_len[0]"));
  }
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_cost_batch(Db.data(), {0, 3, 4, 1}, {}, false); }, "batch"));
}

TEST(InvalidInput, SecondOrderDirectionAndDilateArguments) {
  const Matrix D = random_matrix(3, 4, 41, 0.0, 1.0), Z = random_matrix(3, 4, 42);
  Matrix Zbad = Z;
  Zbad(1, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_hessian_product(D, Zbad, {}); }, "Z(1, 2)"));
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_hessian_product(D, Matrix::Zero(4, 3), {}); },
                      "Z must be 3 x 4 (the shape of D), got 4 x 3"));
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_hessian_product(D, Z, {0.0, {}}); }, "gamma"));
  EXPECT_TRUE(rejects([&] { reference::dilate(D, Matrix::Zero(3, 3), 0.5, {}); },
                      "Omega must be 3 x 4 (the shape of D), got 3 x 3"));
  EXPECT_TRUE(rejects([&] { reference::dilate(D, Zbad, 0.5, {}); }, "Omega(1, 2)"));
  for (double alpha : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()})
    EXPECT_TRUE(rejects([&] { reference::dilate(D, Z, alpha, {}); }, "alpha must be in [0, 1]"));
  EXPECT_TRUE(rejects([] { reference::dilate_omega(0, 3); }, "Omega must be non-empty"));
}

TEST(InvalidInput, SecondOrderSweepsCheckTheirMatricesShapes) {
  const Matrix D = random_matrix(3, 4, 43, 0.0, 1.0), Z = random_matrix(3, 4, 44);
  const Options options;
  const Matrix R = reference::soft_dtw_R(D, options), E = reference::expected_alignment(D, R, options);
  const Matrix Rdot = reference::soft_dtw_Rdot(D, R, Z, options);
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_Rdot(D, E, Z, options); },
                      "R must be 4 x 5 (one row and one column more than D), got 3 x 4"));
  EXPECT_TRUE(rejects([&] { reference::expected_alignment_dot(D, R.transpose(), E, Rdot, options); },
                      "R must be 4 x 5 (one row and one column more than D), got 5 x 4"));
  EXPECT_TRUE(rejects([&] { reference::expected_alignment_dot(D, R, R, Rdot, options); },
                      "E must be 3 x 4 (the shape of D), got 4 x 5"));
  EXPECT_TRUE(rejects([&] { reference::expected_alignment_dot(D, R, E, E, options); },
                      "Rdot must be 4 x 5 (one row and one column more than D), got 3 x 4"));
}

}  // namespace
}  // namespace sdtw::test
