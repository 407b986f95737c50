// Shapes whose soft-DTW is known in closed form, so no second implementation is involved.
#include "test_support.hpp"

namespace sdtw::test {
namespace {

constexpr double kTol = 1e-12;

// One row: the only path runs along it, so R = the row's sum and every cell has E = 1 (up to the
// rounding of R, which the backward's weights see divided by gamma).
TEST(ClosedForm, SingleRowIsTheSumOfTheRow) {
  for (double gamma : {1e-3, 0.1, 1.0, 10.0}) {
    const Matrix D = random_matrix(1, 9, 3, 0.0, 5.0);
    const auto r = reference::soft_dtw_with_alignment(D, {gamma, {}});
    EXPECT_TRUE(close(r.value, D.sum(), kTol)) << "gamma = " << gamma;
    EXPECT_TRUE(close(r.E, Matrix::Ones(1, 9), alignment_tolerance(r.value, gamma, 1, 9))) << "gamma = " << gamma;
  }
}

TEST(ClosedForm, SingleColumnIsTheSumOfTheColumn) {
  for (double gamma : {1e-3, 0.1, 1.0, 10.0}) {
    const Matrix D = random_matrix(6, 1, 4, 0.0, 5.0);
    const auto r = reference::soft_dtw_with_alignment(D, {gamma, 5});
    EXPECT_TRUE(close(r.value, D.sum(), kTol)) << "gamma = " << gamma;
    EXPECT_TRUE(close(r.E, Matrix::Ones(6, 1), alignment_tolerance(r.value, gamma, 6, 1))) << "gamma = " << gamma;
  }
}

TEST(ClosedForm, SingleCellIsItsCost) {
  Matrix D(1, 1);
  D << -2.5;
  const auto r = reference::soft_dtw_with_alignment(D, {0.3, 0});
  EXPECT_EQ(r.value, -2.5);
  EXPECT_EQ(r.E(0, 0), 1.0);
}

// x is one point: every y_j is matched to it, so grad_x = 2 sum_j (x - y_j), grad_y_j = 2 (y_j - x).
TEST(ClosedForm, SingleRowSqEuclideanGradients) {
  const Matrix x = random_matrix(1, 3, 5), y = random_matrix(7, 3, 6);
  const auto r = reference::soft_dtw_sqeuclidean(x, y, {0.05, {}});
  Matrix gx = Matrix::Zero(1, 3), gy(7, 3);
  double value = 0.0;
  for (long j = 0; j < 7; ++j) {
    gx += 2.0 * (x - y.row(j));
    gy.row(j) = 2.0 * (y.row(j) - x);
    value += (x - y.row(j)).squaredNorm();
  }
  EXPECT_TRUE(close(r.value, value, kTol));
  EXPECT_TRUE(close(r.grad.x, gx, kTol));
  EXPECT_TRUE(close(r.grad.y, gy, kTol));
}

// D = [[a, b], [c, d]]: R(2,2) = d + softmin(a, a + c, a + b) = a + d - g log(1 + e^(-b/g) + e^(-c/g));
// the off-diagonal cells carry the softmin weights of the two detours. Digits from mpmath (30 digits).
TEST(ClosedForm, TwoByTwoByHand) {
  Matrix D(2, 2);
  D << 1.0, 2.0, 0.5, 3.0;
  const auto r = reference::soft_dtw_with_alignment(D, {0.7, {}});
  EXPECT_TRUE(close(r.value, 3.69458933852402308573156288144, kTol));
  Matrix E(2, 2);
  E << 1.0, 0.0371257751688386715512772209155, 0.316451065966603563172978104711, 1.0;
  EXPECT_TRUE(close(r.E, E, kTol));
}

// Band 0 on 2 x 2 keeps only the diagonal path.
TEST(ClosedForm, TwoByTwoWithZeroBandIsTheDiagonal) {
  Matrix D(2, 2);
  D << 1.0, 2.0, 0.5, 3.0;
  const auto r = reference::soft_dtw_with_alignment(D, {0.7, 0});
  EXPECT_EQ(r.value, 4.0);
  EXPECT_EQ(r.E, Matrix::Identity(2, 2));
}

// Zero cost: every one of the 13 paths of a 3 x 3 grid costs 0, so sdtw = -g log 13 and
// E(i,j) = (paths into (i,j)) (paths out of (i,j)) / 13.
TEST(ClosedForm, ZeroCostCountsPaths) {
  const auto r = reference::soft_dtw_with_alignment(Matrix::Zero(3, 3), {0.7, {}});
  EXPECT_TRUE(close(r.value, -1.7954645502230757152374412091, kTol));
  Matrix E(3, 3);
  E << 13, 5, 1, 5, 9, 5, 1, 5, 13;
  EXPECT_TRUE(close(r.E, E / 13.0, kTol));
}

// Hard DTW by hand: the cheap path through [[0, 0, 5], [5, 5, 0]] is (0,0) (0,1) (1,2), cost 0.
TEST(ClosedForm, HardDtwTwoByThree) {
  Matrix D(2, 3);
  D << 0, 0, 5, 5, 5, 0;
  const auto r = reference::hard_dtw(D);
  EXPECT_EQ(r.value, 0.0);
  using Cell = std::pair<long, long>;
  EXPECT_EQ(r.path, (std::vector<Cell>{{0, 0}, {0, 1}, {1, 2}}));
  const auto banded = reference::hard_dtw(D, 1);  // the same path lies in the band
  EXPECT_EQ(banded.path, r.path);
  const auto single = reference::hard_dtw(Matrix::Ones(1, 3));
  EXPECT_EQ(single.value, 3.0);
  EXPECT_EQ(single.path, (std::vector<Cell>{{0, 0}, {0, 1}, {0, 2}}));
}

}  // namespace
}  // namespace sdtw::test
