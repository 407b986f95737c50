// The barycenter objective against its definition and central differences (N != M, N = 1,
// weights, gamma over [1e-3, 10]); the pairwise matrix against soft_dtw of each pair.
#include <stdexcept>
#include <vector>

#include "sdtw/reference/barycenter.hpp"
#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::barycenter_objective;
using reference::pairwise_soft_dtw;

// Series of random lengths 1..max_len with dim features; the first seed's series has length 1.
std::vector<Matrix> random_set(long count, long dim, long max_len, std::uint64_t seed) {
  std::vector<Matrix> set;
  for (long k = 0; k < count; ++k)
    set.push_back(random_matrix(k == 0 && seed % 3 == 0 ? 1 : 1 + static_cast<long>((seed * 7 + k * 13) % max_len),
                                dim, seed * 100 + k));
  return set;
}

std::vector<double> random_weights(long count, std::uint64_t seed) {
  const Matrix w = random_matrix(1, count, seed, 0.0, 2.0);
  return std::vector<double>(w.data(), w.data() + count);
}

TEST(Barycenter, ObjectiveIsTheWeightedSumOfSoftDtw) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Shape s = random_shape(seed);
    SCOPED_TRACE(s);
    const std::vector<Matrix> X = random_set(4, s.dim, 9, seed);
    const std::vector<double> w = random_weights(4, seed + 1);
    const Matrix Z = random_matrix(s.n, s.dim, seed + 2);
    const Options o{s.gamma, std::nullopt};
    double expected = 0.0;
    for (std::size_t k = 0; k < X.size(); ++k) expected += w[k] * reference::soft_dtw_sqeuclidean(Z, X[k], o).value;
    EXPECT_TRUE(close(barycenter_objective(Z, X, w, o).value, expected, 1e-14));
  }
}

// Same step and bound as finite_difference_test.cpp: a wrong weight, sign or missing series moves
// the gradient by O(1).
TEST(Barycenter, GradientMatchesCentralDifferences) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const Shape s = random_shape(seed + 700, seed % 4 == 0 ? 16 : 8);
    SCOPED_TRACE(s);
    const std::vector<Matrix> X = random_set(1 + static_cast<long>(seed % 4), s.dim, 10, seed);
    const std::vector<double> w = random_weights(static_cast<long>(X.size()), seed + 3);
    const Matrix Z = random_matrix(seed % 5 == 0 ? 1 : s.n, s.dim, seed + 4);  // N = 1 included
    const Options o{s.gamma, std::nullopt};
    const auto f = [&](const Matrix& Zp) { return barycenter_objective(Zp, X, w, o).value; };
    EXPECT_TRUE(close(barycenter_objective(Z, X, w, o).grad, central_difference(Z, f, 1e-6), 1e-6));
  }
}

TEST(Barycenter, GradientStepFromTheMeanDecreasesTheObjective) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const std::vector<Matrix> X = {random_matrix(7, 2, seed), random_matrix(7, 2, seed + 50),
                                   random_matrix(7, 2, seed + 90)};
    const std::vector<double> w = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    const Options o{0.5, std::nullopt};
    Matrix Z = (X[0] + X[1] + X[2]) / 3.0;
    const auto start = barycenter_objective(Z, X, w, o);
    Z -= 1e-3 * start.grad;
    const double after = barycenter_objective(Z, X, w, o).value;
    // First order: the decrease is about step * |grad|^2.
    EXPECT_LT(after, start.value - 0.5e-3 * start.grad.squaredNorm());
  }
}

TEST(Barycenter, ZeroWeightDropsTheSeries) {
  const std::vector<Matrix> X = random_set(3, 2, 6, 4);
  const Matrix Z = random_matrix(5, 2, 9);
  const Options o{0.3, std::nullopt};
  const auto all = barycenter_objective(Z, X, {0.5, 0.0, 1.5}, o);
  const auto two = barycenter_objective(Z, {X[0], X[2]}, {0.5, 1.5}, o);
  EXPECT_EQ(all.value, two.value);
  EXPECT_TRUE(close(all.grad, two.grad, 0.0));
}

TEST(Barycenter, RejectsBadArguments) {
  const std::vector<Matrix> X = random_set(2, 2, 5, 1);
  const Matrix Z = random_matrix(3, 2, 2);
  const Options o{1.0, std::nullopt};
  EXPECT_THROW(barycenter_objective(Z, {}, {}, o), std::invalid_argument);
  EXPECT_THROW(barycenter_objective(Z, X, {1.0}, o), std::invalid_argument);
  EXPECT_THROW(barycenter_objective(Z, X, {1.0, -1.0}, o), std::invalid_argument);
  EXPECT_THROW(barycenter_objective(Z, X, {1.0, std::nan("")}, o), std::invalid_argument);
  EXPECT_THROW(barycenter_objective(random_matrix(3, 3, 2), X, {1.0, 1.0}, o), std::invalid_argument);
  EXPECT_THROW(pairwise_soft_dtw({}, X, o), std::invalid_argument);
  try {
    barycenter_objective(Z, X, {1.0}, o);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos) << e.what();
  }
}

TEST(Pairwise, EntriesAreSoftDtwOfEachPair) {
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const double gamma = 0.01 * std::pow(1000.0, static_cast<double>(seed) / 9);
    const Options o{gamma, std::nullopt};
    const std::vector<Matrix> X = random_set(3, 2, 8, seed), Y = random_set(4, 2, 11, seed + 20);
    const Matrix C = pairwise_soft_dtw(X, Y, o), Cn = pairwise_soft_dtw(X, Y, o, true);
    ASSERT_EQ(C.rows(), 3);
    ASSERT_EQ(C.cols(), 4);
    for (long i = 0; i < 3; ++i)
      for (long j = 0; j < 4; ++j) {
        EXPECT_EQ(C(i, j), reference::soft_dtw_sqeuclidean(X[i], Y[j], o).value);
        EXPECT_EQ(Cn(i, j), reference::soft_dtw_divergence(X[i], Y[j], o).value);
      }
  }
}

TEST(Pairwise, WithItselfIsSymmetricAndTheDivergenceHasAZeroDiagonal) {
  const std::vector<Matrix> X = random_set(5, 3, 9, 6);
  const Options o{0.2, std::nullopt};
  const Matrix C = pairwise_soft_dtw(X, X, o), Cn = pairwise_soft_dtw(X, X, o, true);
  EXPECT_TRUE(close(C, C.transpose(), 1e-14));
  EXPECT_EQ(max_abs(Cn.diagonal()), 0.0);
  EXPECT_GE(Cn.minCoeff(), -1e-12);  // the divergence is non-negative
}

}  // namespace
}  // namespace sdtw::test
