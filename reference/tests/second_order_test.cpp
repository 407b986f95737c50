// The second order in cost space (value_dot = <E, Z>, E_dot = H Z) against central differences of
// the value and of E, against a 2 x 2 closed form, and for the symmetry of H: a wrong sign, a
// missing term of the product rule or a weight derivative off by a factor moves E_dot by O(1).
#include <limits>
#include <vector>

#include "test_support.hpp"

namespace sdtw::test {
namespace {

// ||a - b|| / ||b||, or ||a|| when b = 0.
double relative_l2(const Matrix& a, const Matrix& b) {
  const double nb = b.norm();
  return nb > 0 ? (a - b).norm() / nb : a.norm();
}

double inner(const Matrix& a, const Matrix& b) { return a.cwiseProduct(b).sum(); }

// Edge shapes (one row, one column, one cell, odd, N != M both ways, bands) at each gamma.
std::vector<Shape> edge_shapes() {
  std::vector<Shape> shapes;
  for (double gamma : {1.0, 0.1, 0.01})
    for (const auto& [n, m, band] : std::vector<std::tuple<long, long, std::optional<long>>>{
             {1, 1, {}}, {1, 6, {}}, {7, 1, {}}, {2, 2, {}}, {5, 9, {}}, {9, 5, {}}, {11, 11, {}}, {8, 8, 0},
             {9, 6, 3}, {6, 9, 4}, {13, 10, 5}})
      shapes.push_back({n, m, 1, gamma, band});
  return shapes;
}

// Edge shapes then random ones (N, M up to 12, gamma in [1e-2, 10], a band one time in three).
std::vector<Shape> all_shapes() {
  std::vector<Shape> shapes = edge_shapes();
  for (std::uint64_t seed = 0; seed < 40; ++seed) shapes.push_back(random_shape(seed + 7000, 12, 1e-2));
  return shapes;
}

// check(shape, D, Z1, Z2) on every shape of all_shapes, with costs in [0, 1) and directions in
// [-1, 1) drawn from seeds offset by seed.
template <class F>
void for_each_problem(std::uint64_t seed, F&& check) {
  for (const Shape& s : all_shapes()) {
    SCOPED_TRACE(s);
    seed += 3;
    check(s, random_matrix(s.n, s.m, seed, 0.0, 1.0), random_matrix(s.n, s.m, seed + 1),
          random_matrix(s.n, s.m, seed + 2));
  }
}

// Central differences of E along Z, step h scaled by gamma so that h / gamma (the argument of the
// weights' exponentials) is the same at every gamma.
Matrix alignment_difference(const Matrix& D, const Matrix& Z, const Options& options, double h) {
  const auto E_at = [&](double t) { return reference::soft_dtw_with_alignment(D + t * Z, options).E; };
  return (E_at(h) - E_at(-h)) / (2 * h);
}

// Measured over for_each_problem's problems with h = 1e-4 gamma: the error is at most 7% of
// kRelTol ||E_dot|| + kAbsTol; it is ~1e-8 relative where E_dot is O(1) and grows to 3e-7 relative
// where ||E_dot|| is 1e-5 to 1e-3 (gamma = 0.01, near-hard paths), the differences' rounding
// (~eps / h) taking over; the floor covers the 1e-13-sized E_dot of near-hard paths.
constexpr double kRelTol = 1e-6;
constexpr double kAbsTol = 1e-9;

::testing::AssertionResult near_l2(const Matrix& a, const Matrix& b) {
  const double diff = (a - b).norm();
  if (diff <= kRelTol * b.norm() + kAbsTol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "||diff|| = " << diff << ", ||want|| = " << b.norm()
                                       << ", relative " << relative_l2(a, b);
}

TEST(SecondOrder, AlignmentDotMatchesFiniteDifferencesOfAlignment) {
  for_each_problem(100, [](const Shape& s, const Matrix& D, const Matrix& Z, const Matrix&) {
    const auto h = reference::soft_dtw_hessian_product(D, Z, s.options());
    EXPECT_TRUE(near_l2(h.E_dot, alignment_difference(D, Z, s.options(), 1e-4 * s.gamma)));
  });
}

// value_dot is <E, Z> (the same number by another route) and the slope of the value along Z.
TEST(SecondOrder, ValueDotIsAlignmentAlongZAndSlopeOfValue) {
  for_each_problem(1000, [](const Shape& s, const Matrix& D, const Matrix& Z, const Matrix&) {
    const auto h = reference::soft_dtw_hessian_product(D, Z, s.options());
    EXPECT_TRUE(close(h.value_dot, inner(h.E, Z), 1e-12));
    const double step = 1e-6;
    const double slope =
        (reference::soft_dtw(D + step * Z, s.options()) - reference::soft_dtw(D - step * Z, s.options())) / (2 * step);
    EXPECT_TRUE(close(h.value_dot, slope, 1e-7));
  });
}

TEST(SecondOrder, HessianIsSymmetric) {
  for_each_problem(2000, [](const Shape& s, const Matrix& D, const Matrix& Z1, const Matrix& Z2) {
    const Matrix H1 = reference::soft_dtw_hessian_product(D, Z1, s.options()).E_dot;
    const Matrix H2 = reference::soft_dtw_hessian_product(D, Z2, s.options()).E_dot;
    // E_dot on cells that every likely path crosses is a cancellation of O(|Rdot|) terms scaled by
    // 1 / gamma: its rounding is absolute, ~eps (N + M) ||Z||^2 / gamma (measured 4e-14 at 2 x 2,
    // gamma = 0.01), hence the second term.
    const double eps = std::numeric_limits<double>::epsilon();
    const double tol = 1e-12 * (H1.norm() * Z2.norm() + H2.norm() * Z1.norm()) +
                       16 * eps * static_cast<double>(s.n + s.m) * Z1.norm() * Z2.norm() / s.gamma;
    EXPECT_LE(std::abs(inner(Z2, H1) - inner(Z1, H2)), tol) << inner(Z2, H1) << " vs " << inner(Z1, H2);
  });
}

// sdtw = D11 + D22 + softmin(0, D12, D21), so with p the softmin weights of (0, D12, D21) and
// z = (0, Z12, Z21): E_dot(1,2) = p_1 (p.z - Z12) / gamma, E_dot(2,1) = p_2 (p.z - Z21) / gamma, and
// E_dot(1,1) = E_dot(2,2) = 0 (those cells are on every path).
TEST(SecondOrder, TwoByTwoByHand) {
  for (double gamma : {1.0, 0.1, 0.01}) {
    SCOPED_TRACE(gamma);
    Matrix D(2, 2), Z(2, 2);
    D << 0.3, 0.02, 0.01, 0.7;
    Z << 0.5, -1.0, 2.0, 0.25;
    const double a = std::exp(0.0), b = std::exp(-D(0, 1) / gamma), c = std::exp(-D(1, 0) / gamma);
    const double p1 = b / (a + b + c), p2 = c / (a + b + c), pz = p1 * Z(0, 1) + p2 * Z(1, 0);
    Matrix want(2, 2);
    want << 0.0, p1 * (pz - Z(0, 1)) / gamma, p2 * (pz - Z(1, 0)) / gamma, 0.0;
    const auto h = reference::soft_dtw_hessian_product(D, Z, {gamma, {}});
    EXPECT_TRUE(close(h.E_dot, want, 1e-13));
    EXPECT_TRUE(close(h.value_dot, Z(0, 0) + Z(1, 1) + pz, 1e-13));
  }
}

// One row or one column has a single path: E is all ones whatever D, so E_dot = 0 and value_dot = sum Z.
TEST(SecondOrder, SinglePathHasNoCurvature) {
  for (const auto& [n, m] : {std::pair<long, long>{1, 1}, {1, 7}, {6, 1}}) {
    const Matrix D = random_matrix(n, m, 11, 0.0, 1.0), Z = random_matrix(n, m, 12);
    const auto h = reference::soft_dtw_hessian_product(D, Z, {0.1, {}});
    EXPECT_EQ(h.E_dot, Matrix::Zero(n, m));
    EXPECT_TRUE(close(h.value_dot, Z.sum(), 1e-14));
  }
}

// Cells off the band, behind a +inf cost, or only reachable through one have E = 0 and E_dot = 0,
// and the derivative elsewhere still matches the differences (perturbing +inf leaves it +inf).
TEST(SecondOrder, ForbiddenCellsHaveZeroAlignmentDot) {
  const long n = 9, m = 7;
  for (double gamma : {1.0, 0.1}) {
    SCOPED_TRACE(gamma);
    Matrix D = random_matrix(n, m, 21, 0.0, 1.0);
    const Matrix Z = random_matrix(n, m, 22);
    D(3, 2) = reference::kInf;
    D(8, 0) = reference::kInf;  // (8, 0) is reachable only from column 0
    const Options options{gamma, 3};
    const auto h = reference::soft_dtw_hessian_product(D, Z, options);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j)
        if (!reference::in_band(i, j, options.bandwidth) || (i == 3 && j == 2)) {
          EXPECT_EQ(h.E(i, j), 0.0) << i << ", " << j;
          EXPECT_EQ(h.E_dot(i, j), 0.0) << i << ", " << j;
        }
    EXPECT_TRUE(near_l2(h.E_dot, alignment_difference(D, Z, options, 1e-4 * gamma)));
  }
}

// No finite path: the derivatives are undefined, like E. A non-finite or misshapen Z is refused.
TEST(SecondOrder, NonFiniteValueAndBadDirection) {
  Matrix D = random_matrix(3, 4, 31, 0.0, 1.0);
  const Matrix Z = random_matrix(3, 4, 32);
  D(0, 0) = reference::kInf;
  const auto h = reference::soft_dtw_hessian_product(D, Z, {});
  EXPECT_TRUE(std::isnan(h.value_dot));
  EXPECT_TRUE(h.E_dot.array().isNaN().all());

  D(0, 0) = 0.5;
  Matrix Zbad = Z;
  Zbad(1, 2) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(reference::soft_dtw_hessian_product(D, Zbad, {}), std::invalid_argument);
  EXPECT_THROW(reference::soft_dtw_hessian_product(D, Matrix::Zero(4, 3), {}), std::invalid_argument);
}

}  // namespace
}  // namespace sdtw::test
