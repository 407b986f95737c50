// The costs of costs.hpp: each against its definition written as a double loop, each Jacobian
// product against central differences of <E, D(x, y)>, the conventions at the non-differentiable
// points, soft-DTW through each cost against finite differences, and bad arguments.
#include <cmath>
#include <string>

#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::Gradients;
using reference::NamedCost;

// D(i,j) from the definition of each name; a cost without one here fails every test that loops over the names.
double direct_cost(const std::string& name, const Matrix& x, long i, const Matrix& y, long j) {
  double l1 = 0, sq = 0, dot = 0, xx = 0, yy = 0;
  for (long k = 0; k < x.cols(); ++k) {
    const double d = x(i, k) - y(j, k);
    l1 += std::abs(d);
    sq += d * d;
    dot += x(i, k) * y(j, k);
    xx += x(i, k) * x(i, k);
    yy += y(j, k) * y(j, k);
  }
  if (name == "sqeuclidean") return sq;
  if (name == "l1") return l1;
  if (name == "euclidean") return std::sqrt(sq);
  const double eps = reference::kCosineEps;
  if (name == "cosine") return 1.0 - dot / (std::max(std::sqrt(xx), eps) * std::max(std::sqrt(yy), eps));
  if (name == "negative_dot") return -dot;
  ADD_FAILURE() << "no definition in this test for cost '" << name << "'";
  return std::nan("");
}

Matrix direct_cost_matrix(const std::string& name, const Matrix& x, const Matrix& y) {
  Matrix D(x.rows(), y.rows());
  for (long i = 0; i < x.rows(); ++i)
    for (long j = 0; j < y.rows(); ++j) D(i, j) = direct_cost(name, x, i, y, j);
  return D;
}

// x (n x dim) and y (m x dim) from the first seed on whose every |x_ik - y_jk| exceeds `gap`, so
// that central differences of step below `gap` do not cross a kink of L1.
struct Pair {
  Matrix x, y;
};
Pair draw_away_from_kinks(long n, long m, long dim, std::uint64_t& seed, double gap) {
  for (;;) {
    Pair p{random_matrix(n, dim, ++seed), random_matrix(m, dim, ++seed)};
    bool apart = true;
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j) apart = apart && (p.x.row(i) - p.y.row(j)).cwiseAbs().minCoeff() > gap;
    if (apart) return p;
  }
}

struct Sizes {
  long n, m, dim;
};
// N = M, N != M both ways, N = 1, M = 1, D = 1, odd sizes.
const Sizes kSizes[] = {{1, 1, 1}, {1, 6, 3}, {5, 1, 1}, {4, 7, 1}, {7, 4, 5}, {3, 3, 2}};

TEST(Costs, NamesAreTheUnfusedPathsAndNegativeDot) {
  EXPECT_EQ(reference::cost_names(),
            (std::vector<std::string>{"sqeuclidean", "l1", "euclidean", "cosine", "negative_dot"}));
}

TEST(Costs, EachMatchesItsDefinition) {
  std::uint64_t seed = 100;
  for (const std::string& name : reference::cost_names())
    for (const Sizes& s : kSizes) {
      SCOPED_TRACE(name + " N = " + std::to_string(s.n) + " M = " + std::to_string(s.m) +
                   " D = " + std::to_string(s.dim));
      const Matrix x = random_matrix(s.n, s.dim, ++seed, -2.0, 2.0), y = random_matrix(s.m, s.dim, ++seed, -2.0, 2.0);
      EXPECT_TRUE(close(NamedCost(name, x, y).compute(), direct_cost_matrix(name, x, y), 1e-14));
    }
}

TEST(Costs, SqEuclideanByNameIsSqEuclideanCostBitForBit) {
  const Matrix x = random_matrix(5, 3, 1), y = random_matrix(4, 3, 2), E = random_matrix(5, 4, 3);
  const reference::SqEuclideanCost direct(x, y);
  const NamedCost named("sqeuclidean", x, y);
  EXPECT_EQ(named.compute(), direct.compute());
  EXPECT_EQ(named.jacobian_product(E).x, direct.jacobian_product(E).x);
  EXPECT_EQ(named.jacobian_product(E).y, direct.jacobian_product(E).y);
  const reference::Options options{0.3, {}};
  const reference::SoftDtwGradResult a = reference::soft_dtw_with_cost("sqeuclidean", x, y, options);
  const reference::SoftDtwGradResult b = reference::soft_dtw_sqeuclidean(x, y, options);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.grad.x, b.grad.x);
  EXPECT_EQ(a.grad.y, b.grad.y);
}

// <E, D(x, y)>, whose gradients are the Jacobian product of E.
double weighted_cost(const std::string& name, const Matrix& x, const Matrix& y, const Matrix& E) {
  return E.cwiseProduct(NamedCost(name, x, y).compute()).sum();
}

TEST(Costs, JacobianProductMatchesFiniteDifferences) {
  constexpr double h = 1e-6;
  std::uint64_t seed = 200;
  for (const std::string& name : reference::cost_names())
    for (const Sizes& s : kSizes) {
      SCOPED_TRACE(name + " N = " + std::to_string(s.n) + " M = " + std::to_string(s.m) +
                   " D = " + std::to_string(s.dim));
      const Pair data = draw_away_from_kinks(s.n, s.m, s.dim, seed, 100 * h);
      const Matrix &x = data.x, &y = data.y;
      const Matrix E = random_matrix(s.n, s.m, ++seed);
      const Gradients g = NamedCost(name, x, y).jacobian_product(E);
      EXPECT_TRUE(close(g.x, central_difference(x, [&](const Matrix& p) { return weighted_cost(name, p, y, E); }, h),
                        1e-8));
      EXPECT_TRUE(close(g.y, central_difference(y, [&](const Matrix& p) { return weighted_cost(name, x, p, E); }, h),
                        1e-8));
    }
}

// Below eps the cosine divides a row by eps instead of its norm: still differentiable, with no radial term.
TEST(Costs, CosineJacobianBelowEpsMatchesFiniteDifferences) {
  const Matrix x = 1e-10 * random_matrix(3, 4, 300), y = random_matrix(5, 4, 301), E = random_matrix(3, 5, 302);
  for (long i = 0; i < x.rows(); ++i) ASSERT_LT(x.row(i).norm(), 0.5 * reference::kCosineEps);
  const Gradients g = NamedCost("cosine", x, y).jacobian_product(E);
  const auto fx = [&](const Matrix& p) { return weighted_cost("cosine", p, y, E); };
  const auto fy = [&](const Matrix& p) { return weighted_cost("cosine", x, p, E); };
  EXPECT_TRUE(close(g.x, central_difference(x, fx, 1e-13), 1e-8));
  EXPECT_TRUE(close(g.y, central_difference(y, fy, 1e-6), 1e-8));
}

// The values below are what torch 1.13 gives for torch.cdist(p=1) and the unfused path's formulas.
TEST(Costs, L1SubgradientTakesSignOfZeroAsZero) {
  const Matrix x{{1.0, 2.0, 3.0}}, y{{1.0, 0.0, 3.0}}, E{{1.5}};
  const reference::L1Cost cost(x, y);
  EXPECT_EQ(cost.compute()(0, 0), 2.0);
  const Gradients g = cost.jacobian_product(E);
  EXPECT_EQ(g.x, (Matrix{{0.0, 1.5, 0.0}}));
  EXPECT_EQ(g.y, (Matrix{{0.0, -1.5, 0.0}}));
}

TEST(Costs, EuclideanIsZeroWithZeroGradientAtCoincidentRows) {
  const Matrix x{{1.0, 2.0}, {0.0, 0.0}}, y{{1.0, 2.0}}, E{{2.0}, {3.0}};
  const reference::EuclideanCost cost(x, y);
  const Matrix D = cost.compute();
  EXPECT_EQ(D(0, 0), 0.0);
  EXPECT_DOUBLE_EQ(D(1, 0), std::sqrt(5.0));
  const Gradients g = cost.jacobian_product(E);
  const double r = 3.0 / std::sqrt(5.0);
  EXPECT_EQ(g.x.row(0), (Matrix{{0.0, 0.0}}));
  EXPECT_TRUE(close(g.x.row(1), (Matrix{{-r, -2.0 * r}}), 1e-15));
  EXPECT_TRUE(close(g.y, (Matrix{{r, 2.0 * r}}), 1e-15));
}

TEST(Costs, CosineClampsEachNormAtEps) {
  const double eps = reference::kCosineEps;
  const Matrix y{{1.0, 2.0, 2.0}}, E{{1.0}};
  const Matrix uy = y / 3.0;
  {
    SCOPED_TRACE("a zero row costs 1 and moves along y / eps");
    const reference::CosineCost cost(Matrix::Zero(1, 3), y);
    EXPECT_EQ(cost.compute()(0, 0), 1.0);
    const Gradients g = cost.jacobian_product(E);
    EXPECT_TRUE(close(g.x, -uy / eps, 1e-15));
    EXPECT_EQ(g.y, Matrix::Zero(1, 3));
  }
  {
    SCOPED_TRACE("a row below eps is divided by eps");
    const reference::CosineCost cost(Matrix::Constant(1, 3, 1e-10), y);
    EXPECT_TRUE(close(cost.compute()(0, 0), 1.0 - 5e-10 / (eps * 3.0), 1e-15));
    EXPECT_TRUE(close(cost.jacobian_product(E).x, -uy / eps, 1e-15));
  }
  {
    SCOPED_TRACE("a row of norm eps takes the norm's branch, with the radial term");
    const Matrix x{{eps, 0.0, 0.0}};
    const reference::CosineCost cost(x, y);
    EXPECT_TRUE(close(cost.compute()(0, 0), 1.0 - 1.0 / 3.0, 1e-15));
    EXPECT_TRUE(close(cost.jacobian_product(E).x, (Matrix{{0.0, -2.0 / 3.0 / eps, -2.0 / 3.0 / eps}}), 1e-15));
  }
}

TEST(Costs, SoftDtwThroughEachCostMatchesFiniteDifferences) {
  struct Case {
    Sizes sizes;
    Options options;
  };
  const Case cases[] = {{{4, 6, 3}, {1.0, {}}}, {{4, 6, 3}, {0.1, {}}}, {{1, 5, 2}, {0.5, {}}},
                        {{5, 1, 1}, {0.5, {}}}, {{5, 6, 2}, {0.3, 2}},  {{3, 3, 1}, {2.0, {}}}};
  constexpr double h = 1e-6;
  std::uint64_t seed = 400;
  for (const std::string& name : reference::cost_names())
    for (const Case& c : cases) {
      SCOPED_TRACE(name + " N = " + std::to_string(c.sizes.n) + " M = " + std::to_string(c.sizes.m) +
                   " D = " + std::to_string(c.sizes.dim) + " gamma = " + std::to_string(c.options.gamma));
      const Pair data = draw_away_from_kinks(c.sizes.n, c.sizes.m, c.sizes.dim, seed, 100 * h);
      const Matrix &x = data.x, &y = data.y;
      const reference::SoftDtwGradResult r = reference::soft_dtw_with_cost(name, x, y, c.options);
      EXPECT_TRUE(close(r.value, reference::soft_dtw(direct_cost_matrix(name, x, y), c.options), 1e-13));
      const auto value = [&](const Matrix& a, const Matrix& b) {
        return reference::soft_dtw_with_cost(name, a, b, c.options).value;
      };
      EXPECT_TRUE(close(r.grad.x, central_difference(x, [&](const Matrix& p) { return value(p, y); }, h), 1e-7));
      EXPECT_TRUE(close(r.grad.y, central_difference(y, [&](const Matrix& p) { return value(x, p); }, h), 1e-7));
    }
}

TEST(Costs, BadArgumentsAreNamed) {
  const Matrix x = random_matrix(3, 2, 500), y = random_matrix(4, 3, 501);
  for (const std::string& name : reference::cost_names()) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(rejects([&] { NamedCost(name, x, y); },
                        "x and y must have the same number of features (x has 2, y has 3)"));
    EXPECT_TRUE(rejects([&] { reference::soft_dtw_with_cost(name, x, y, {}); }, "same number of features"));
    EXPECT_TRUE(rejects([&] { NamedCost(name, Matrix(0, 2), x); }, "x must be non-empty (got 0 x 2)"));
    Matrix bad = x;
    bad(1, 1) = std::nan("");
    EXPECT_TRUE(rejects([&] { NamedCost(name, x, bad); }, "y must be finite, but y(1, 1) = nan"));
    EXPECT_TRUE(rejects([&] { NamedCost(name, x, x).jacobian_product(Matrix::Ones(3, 4)); },
                        "E must be 3 x 3 (rows of x by rows of y), got 3 x 4"));
  }
  EXPECT_TRUE(rejects([&] { NamedCost("l2", x, x); },
                      "cost must be one of 'sqeuclidean', 'l1', 'euclidean', 'cosine', 'negative_dot' (got 'l2')"));
  EXPECT_TRUE(rejects([&] { reference::soft_dtw_with_cost("manhattan", x, x, {}); }, "(got 'manhattan')"));
  EXPECT_TRUE(rejects([&] { reference::L1Cost(x, x).jacobian_product(Matrix::Ones(2, 3)); }, "E must be 3 x 3"));
  EXPECT_TRUE(rejects([&] { reference::SqEuclideanCost(x, x).jacobian_product(Matrix::Ones(3, 2)); },
                      "E must be 3 x 3 (rows of x by rows of y), got 3 x 2"));
}

}  // namespace
}  // namespace sdtw::test
