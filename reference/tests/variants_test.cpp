// soft_dtw_variant: gamma = 0 against hard_dtw and the cheapest path, the soft value and E
// converging to it, and the warp penalty and subsequence alignment against explicit enumeration
// of their paths and against central differences.
#include <cmath>
#include <string>

#include "brute_force_paths.hpp"
#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::VariantOptions;

std::string where(long n, long m, const VariantOptions& o) {
  return "N = " + std::to_string(n) + ", M = " + std::to_string(m) + ", gamma = " + std::to_string(o.gamma) +
         ", warp = " + std::to_string(o.warp) + (o.subsequence ? ", subsequence" : "");
}

Matrix path_alignment(const reference::HardDtwResult& hard, long n, long m) {
  Matrix A = Matrix::Zero(n, m);
  for (const auto& [i, j] : hard.path) A(i, j) = 1.0;
  return A;
}

TEST(Variants, PlainOptionsAreSoftDtw) {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const Shape s = random_shape(seed);
    SCOPED_TRACE(s);
    const Matrix D = random_matrix(s.n, s.m, seed + 40, 0.0, 2.0);
    const auto want = reference::soft_dtw_with_alignment(D, {s.gamma, std::nullopt});
    const auto got = reference::soft_dtw_variant(D, {s.gamma, 0.0, false});
    EXPECT_EQ(got.value, want.value);
    EXPECT_EQ(got.E, want.E);
    EXPECT_EQ(got.expected_end, static_cast<double>(s.m - 1));
  }
}

// The exact DTW on squared distances: hard_dtw's value, and E is its path's 0/1 alignment.
TEST(Variants, GammaZeroIsHardDtw) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const Shape s = random_shape(seed + 1000, seed % 3 == 0 ? 40 : 12);
    SCOPED_TRACE(s);
    const Matrix x = random_matrix(s.n, s.dim, 2 * seed), y = random_matrix(s.m, s.dim, 2 * seed + 1);
    const Matrix D = reference::SqEuclideanCost(x, y).compute();
    const auto hard = reference::hard_dtw(D);
    const auto r = reference::soft_dtw_variant(D, {0.0, 0.0, false});
    EXPECT_EQ(r.value, hard.value);
    EXPECT_EQ(r.E, path_alignment(hard, s.n, s.m));
  }
}

// Ties (a constant cost) go to the diagonal first, as hard_dtw's walk back does.
TEST(Variants, GammaZeroBreaksTiesAsHardDtw) {
  for (long n : {1L, 3L, 4L})
    for (long m : {1L, 2L, 5L}) {
      const Matrix D = Matrix::Zero(n, m);
      EXPECT_EQ(reference::soft_dtw_variant(D, {0.0, 0.0, false}).E, path_alignment(reference::hard_dtw(D), n, m))
          << n << " x " << m;
    }
}

// Negative costs make (i-1, j) and (i, j-1) tie below the diagonal: (i-1, j) wins, as in hard_dtw.
TEST(Variants, GammaZeroBreaksUpLeftTiesAsHardDtw) {
  Matrix D(2, 2);
  D << 0.0, -1.0, -1.0, 0.0;
  const auto r = reference::soft_dtw_variant(D, {0.0, 0.0, false});
  EXPECT_EQ(r.E, path_alignment(reference::hard_dtw(D), 2, 2));
  Matrix want(2, 2);
  want << 1.0, 1.0, 0.0, 1.0;
  EXPECT_EQ(r.E, want);
}

// Equal ends at gamma = 0 go to the first column, the path hard_dtw's order then picks.
TEST(Variants, GammaZeroSubsequenceEndTiesGoToTheFirstColumn) {
  const auto r = reference::soft_dtw_variant(Matrix::Zero(3, 4), {0.0, 0.0, true});
  EXPECT_EQ(r.expected_end, 0.0);
  EXPECT_EQ(r.E.col(0), reference::Vector::Ones(3));
  EXPECT_EQ(r.E.sum(), 3.0);
}

// sdtw lies in [dtw - gamma log(paths), dtw], and each entry of E differs from the optimal path's
// by at most (paths - 1) exp(-gap / gamma), gap being the second-cheapest path's extra cost.
TEST(Variants, SoftConvergesToGammaZero) {
  long tight = 0;  // problems where the bound on E at gamma = 1e-3 is below 1e-6
  for (long n = 1; n <= 5; ++n)
    for (long m = 1; m <= 6; ++m) {
      const Matrix D = random_matrix(n, m, 300 * n + m, 0.0, 2.0);
      const auto hard = reference::soft_dtw_variant(D, {0.0, 0.0, false});
      const auto paths = all_paths(everything(n, m), false);
      std::vector<double> cost;
      for (const auto& p : paths) {
        double c = 0.0;
        for (const auto& [i, j] : p.cells) c += D(i, j);
        cost.push_back(c);
      }
      std::sort(cost.begin(), cost.end());
      const double count = static_cast<double>(paths.size()), gap = count > 1 ? cost[1] - cost[0] : reference::kInf;
      for (double gamma : {1e-1, 1e-2, 1e-3, 1e-4}) {
        SCOPED_TRACE(where(n, m, {gamma, 0.0, false}));
        const auto soft = reference::soft_dtw_variant(D, {gamma, 0.0, false});
        EXPECT_LE(soft.value, hard.value + 1e-14);
        EXPECT_GE(soft.value, hard.value - gamma * std::log(count) - 1e-14);
        EXPECT_LE(max_abs(soft.E - hard.E), (count - 1) * std::exp(-gap / gamma) + 1e-13);
      }
      if ((count - 1) * std::exp(-gap / 1e-3) < 1e-6) ++tight;
    }
  // The bound says something only where the gap is not small against gamma: 30 of these 30 problems.
  EXPECT_GE(tight, 27);
}

// N x M in 1..5 x 1..6 with N = 1, odd sizes and N > M among them.
template <class F>
void for_small_problems(F&& f) {
  for (long n = 1; n <= 5; ++n)
    for (long m = 1; m <= 6; ++m)
      for (double gamma : {0.0, 0.05, 1.0})
        for (double warp : {0.0, 0.5, -0.3, 2.0})
          for (bool subsequence : {false, true}) f(n, m, VariantOptions{gamma, warp, subsequence});
}

TEST(Variants, MatchPathEnumeration) {
  for_small_problems([](long n, long m, const VariantOptions& o) {
    SCOPED_TRACE(where(n, m, o));
    const Matrix D = random_matrix(n, m, 1000 * n + 10 * m + o.subsequence, -0.5, 2.0);
    const auto brute = brute_force(D, everything(n, m), o.gamma, o.warp, o.subsequence);
    const auto r = reference::soft_dtw_variant(D, o);
    EXPECT_TRUE(close(r.value, brute.value, 1e-12));
    EXPECT_TRUE(close(r.E, brute.E, 1e-10));
    EXPECT_TRUE(close(Matrix(r.end.transpose()), Matrix(brute.end.transpose()), 1e-10));
    double expected_end = 0.0;
    for (long j = 0; j < m; ++j) expected_end += static_cast<double>(j) * brute.end(j);
    EXPECT_TRUE(close(r.expected_end, expected_end, 1e-10));
  });
}

TEST(Variants, MaskedMatchPathEnumeration) {
  for (long n = 2; n <= 5; ++n)
    for (long m = 2; m <= 6; ++m)
      for (double gamma : {0.0, 0.2})
        for (bool subsequence : {false, true}) {
          const VariantOptions o{gamma, 0.4, subsequence};
          SCOPED_TRACE(where(n, m, o));
          const reference::Mask mask = reference::sakoe_chiba_mask(n, m, 1);
          const Matrix D = random_matrix(n, m, 77 * n + m, 0.0, 2.0);
          const auto brute = brute_force(D, mask, gamma, o.warp, subsequence);
          const auto r = reference::soft_dtw_variant(reference::apply_mask(D, mask), o);
          EXPECT_TRUE(close(r.value, brute.value, 1e-12));
          EXPECT_TRUE(close(r.E, brute.E, 1e-10));
        }
}

// The three paths of a 2 x 2 cost: only the two that turn pay the warp, twice each.
TEST(Variants, WarpIsPaidByVerticalAndHorizontalMovesOnly) {
  Matrix D(2, 2);
  D << 0.5, 1.0, 2.0, 0.25;
  const double gamma = 0.7, warp = 0.3;
  const double diagonal = 0.5 + 0.25, right_down = 0.5 + 1.0 + 0.25 + 2 * warp,
               down_right = 0.5 + 2.0 + 0.25 + 2 * warp;
  const double want =
      -gamma * std::log(std::exp(-diagonal / gamma) + std::exp(-right_down / gamma) + std::exp(-down_right / gamma));
  EXPECT_NEAR(reference::soft_dtw_variant(D, {gamma, warp, false}).value, want, 1e-15);
}

// h = 1e-6 on gamma >= 0.05: truncation ~h^2 / gamma^2, far below the 1e-6 tolerance; a missing
// warp term or a wrong end weight moves E by O(1).
TEST(Variants, AlignmentIsGradientOfValue) {
  for (std::uint64_t seed = 0; seed < 40; ++seed) {
    const Shape s = random_shape(seed + 2000, 9, 0.05);
    const VariantOptions o{s.gamma, seed % 2 ? 0.5 : -0.2, seed % 4 < 2};
    SCOPED_TRACE(where(s.n, s.m, o));
    const Matrix D = random_matrix(s.n, s.m, seed + 2100, 0.0, 2.0);
    const auto f = [&](const Matrix& Dp) { return reference::soft_dtw_variant(Dp, o).value; };
    EXPECT_TRUE(close(reference::soft_dtw_variant(D, o).E, central_difference(D, f, 1e-6), 1e-6));
  }
}

// The x and y gradients the GPU side reports: E chained through the squared Euclidean cost.
TEST(Variants, SqEuclideanGradientsMatchFiniteDifferences) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Shape s = random_shape(seed + 3000, 9, 0.05);
    const VariantOptions o{s.gamma, seed % 2 ? 0.5 : 0.0, seed % 4 < 2};
    SCOPED_TRACE(where(s.n, s.m, o));
    const Matrix x = random_matrix(s.n, s.dim, 2 * seed + 3100), y = random_matrix(s.m, s.dim, 2 * seed + 3101);
    const auto value = [&](const Matrix& xp, const Matrix& yp) {
      return reference::soft_dtw_variant(reference::SqEuclideanCost(xp, yp).compute(), o).value;
    };
    const reference::SqEuclideanCost cost(x, y);
    const auto grad = cost.jacobian_product(reference::soft_dtw_variant(cost.compute(), o).E);
    const auto fx = [&](const Matrix& xp) { return value(xp, y); };
    const auto fy = [&](const Matrix& yp) { return value(x, yp); };
    EXPECT_TRUE(close(grad.x, central_difference(x, fx, 1e-6), 1e-6));
    EXPECT_TRUE(close(grad.y, central_difference(y, fy, 1e-6), 1e-6));
  }
}

// A query cut out of the reference sequence: subsequence DTW finds it at cost 0 and ends where
// it ends; the soft end concentrates there as gamma shrinks.
TEST(Variants, SubsequenceFindsAPlantedQuery) {
  const Matrix y = random_matrix(20, 2, 11, 0.0, 4.0), x = y.middleRows(6, 5);
  const Matrix D = reference::SqEuclideanCost(x, y).compute();
  const auto hard = reference::soft_dtw_variant(D, {0.0, 0.0, true});
  EXPECT_EQ(hard.value, 0.0);
  EXPECT_EQ(hard.expected_end, 10.0);
  EXPECT_EQ(hard.E.block(0, 6, 5, 5), Matrix::Identity(5, 5));
  EXPECT_EQ(hard.E.sum(), 5.0);
  const auto soft = reference::soft_dtw_variant(D, {1e-3, 0.0, true});
  EXPECT_NEAR(soft.expected_end, 10.0, 1e-9);
  EXPECT_NEAR(soft.end(10), 1.0, 1e-9);
}

// Each start counted once: one cell is one path, and 1 x 2 holds three (each cell alone, and both).
TEST(Variants, SubsequenceCountsEachStartOnce) {
  Matrix D(1, 1);
  D << 0.8;
  EXPECT_EQ(reference::soft_dtw_variant(D, {0.5, 0.0, true}).value, 0.8);
  EXPECT_EQ(reference::soft_dtw_variant(D, {0.0, 0.0, true}).value, 0.8);
  Matrix D2(1, 2);
  D2 << 0.8, 0.3;
  const double g = 0.5, w = 0.2;
  const double expected = -g * std::log(std::exp(-0.8 / g) + std::exp(-0.3 / g) + std::exp(-(0.8 + 0.3 + w) / g));
  EXPECT_NEAR(reference::soft_dtw_variant(D2, {g, w, true}).value, expected, 1e-15);
}

TEST(Variants, BadArgumentsNameTheParameter) {
  const auto rejected = [](const Matrix& D, const VariantOptions& o, const std::string& message) {
    return rejects([&] { reference::soft_dtw_variant(D, o); }, message);
  };
  const Matrix D = Matrix::Ones(2, 3);
  EXPECT_TRUE(rejected(D, {-1.0, 0.0, false}, "gamma must be finite and >= 0 (got -1)"));
  EXPECT_TRUE(rejected(D, {reference::kInf, 0.0, false}, "gamma must be finite and >= 0 (got inf)"));
  EXPECT_TRUE(rejected(D, {1.0, reference::kInf, false}, "warp must be finite (got inf)"));
  Matrix bad = D;
  bad(1, 2) = std::nan("");
  EXPECT_TRUE(rejected(bad, {1.0, 0.0, false}, "D must be finite or +inf (a forbidden cell), but D(1, 2) = nan"));
  bad(1, 2) = -reference::kInf;
  EXPECT_TRUE(rejected(bad, {1.0, 0.0, false}, "D must be finite or +inf (a forbidden cell), but D(1, 2) = -inf"));
  EXPECT_TRUE(rejected(Matrix(0, 3), {1.0, 0.0, false}, "D must be non-empty (got 0 x 3)"));
}

}  // namespace
}  // namespace sdtw::test
