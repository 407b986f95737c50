// Masks against tslearn's documented examples and hand-derived ones, which cells they let a path
// use, and soft-DTW / exact DTW under a mask against explicit enumeration of the paths inside it.
#include <string>
#include <vector>

#include "brute_force_paths.hpp"
#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::Mask;

// Rows as strings, '1' for an allowed cell, as tslearn prints True.
Mask literal(const std::vector<std::string>& rows) {
  Mask m(static_cast<long>(rows.size()), static_cast<long>(rows[0].size()));
  for (long i = 0; i < m.rows(); ++i)
    for (long j = 0; j < m.cols(); ++j) m(i, j) = rows[i][j] == '1';
  return m;
}

TEST(Constraints, SakoeChibaMatchesTslearnDocExamples) {
  // sakoe_chiba_mask(4, 4, radius=2) and compute_mask(4, 4, sakoe_chiba_radius=1).
  EXPECT_EQ(reference::sakoe_chiba_mask(4, 4, 2), literal({"1110", "1111", "1111", "0111"}));
  EXPECT_EQ(reference::sakoe_chiba_mask(4, 4, 1), literal({"1100", "1110", "0111", "0011"}));
}

TEST(Constraints, SakoeChibaWidensByTheLengthDifference) {
  EXPECT_EQ(reference::sakoe_chiba_mask(3, 3, 1), literal({"110", "111", "011"}));
  // Row k keeps columns k - 1 .. k + (6 - 4) + 1: widened towards the longer sequence's end only.
  EXPECT_EQ(reference::sakoe_chiba_mask(4, 6, 1), literal({"111100", "111110", "011111", "001111"}));
  EXPECT_EQ(reference::sakoe_chiba_mask(6, 4, 1), literal({"1100", "1110", "1111", "1111", "0111", "0011"}));
  EXPECT_EQ(reference::sakoe_chiba_mask(2, 5, 0), literal({"11110", "01111"}));
  EXPECT_EQ(reference::sakoe_chiba_mask(1, 4, 0), literal({"1111"}));
}

TEST(Constraints, ItakuraMatchesTslearnDocExamples) {
  // compute_mask(4, 4, itakura_max_slope=2) and itakura_mask(6, 6, max_slope=3).
  EXPECT_EQ(reference::itakura_mask(4, 4, 2.0), literal({"1000", "0110", "0110", "0001"}));
  EXPECT_EQ(reference::itakura_mask(6, 6, 3.0), literal({"100000", "011100", "011110", "011110", "001110", "000001"}));
}

// Worked by hand from the bounds: slope 2 and 1/2 through (0, 0) and (4, 4), per column j
// rows ceil(max(j/2, 2j - 4)) .. floor(min(2j, j/2 + 2)).
TEST(Constraints, ItakuraSlopeTwoByHand) {
  EXPECT_EQ(reference::itakura_mask(5, 5, 2.0), literal({"10000", "01100", "01110", "00110", "00001"}));
  EXPECT_EQ(reference::itakura_mask(4, 6, 2.0), literal({"100000", "011100", "001110", "000001"}));
  EXPECT_EQ(reference::itakura_mask(6, 4, 2.0), literal({"1000", "0100", "0110", "0110", "0010", "0001"}));
  // Row 5 of column 2 is kept only through the rounding: the upper side 7 - 0.4 * 7 + 0.4 * 2
  // evaluates to just below 5 in float64, and rounds to 5.00 before floor(+ 1).
  EXPECT_EQ(reference::itakura_mask(8, 8, 2.5),
            literal({"10000000", "01100000", "01111100", "00111100", "00111100", "00111110", "00000110", "00000001"}));
  // Slope 1 leaves the diagonal only.
  EXPECT_EQ(reference::itakura_mask(5, 5, 1.0), reference::diagonal_mask(5, 5));
}

TEST(Constraints, DiagonalOnly) {
  EXPECT_EQ(reference::diagonal_mask(3, 3), literal({"100", "010", "001"}));
  EXPECT_EQ(reference::diagonal_mask(1, 1), literal({"1"}));
}

TEST(Constraints, BadArgumentsNameTheParameter) {
  EXPECT_TRUE(rejects([] { reference::sakoe_chiba_mask(3, 3, -1); }, "radius must be >= 0 (got -1)"));
  EXPECT_TRUE(rejects([] { reference::sakoe_chiba_mask(0, 3, 1); }, "mask must be non-empty (got 0 x 3)"));
  EXPECT_TRUE(rejects([] { reference::itakura_mask(2, 0, 2.0); }, "mask must be non-empty (got 2 x 0)"));
  EXPECT_TRUE(rejects([] { reference::itakura_mask(4, 4, 0.0); }, "max_slope must be finite and > 0 (got 0)"));
  // tslearn raises here too: itakura_mask(3, 7, 2) keeps rows 0, 1 and 2 at columns {0}, {2, 3, 4}, {6}.
  EXPECT_TRUE(rejects([] { reference::itakura_mask(3, 7, 2.0); },
                      "max_slope 2 leaves no admissible path for lengths N = 3, M = 7: column 1 is empty"));
  EXPECT_TRUE(
      rejects([] { reference::diagonal_mask(3, 4); }, "the diagonal-only constraint needs N == M (got N = 3, M = 4)"));
  EXPECT_TRUE(rejects([] { reference::apply_mask(Matrix::Zero(2, 3), Mask::Constant(3, 2, true)); },
                      "mask must be 2 x 3 (the shape of D), got 3 x 2"));
}

// Cells of the mask on no path from (0, 0) to (N-1, M-1) through the mask.
long cells_on_no_path(const Mask& mask) {
  const long N = mask.rows(), M = mask.cols();
  Mask from_start = Mask::Constant(N, M, false), to_end = Mask::Constant(N, M, false);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < M; ++j)
      from_start(i, j) =
          mask(i, j) && ((i == 0 && j == 0) || (i > 0 && from_start(i - 1, j)) || (j > 0 && from_start(i, j - 1)) ||
                         (i > 0 && j > 0 && from_start(i - 1, j - 1)));
  for (long i = N - 1; i >= 0; --i)
    for (long j = M - 1; j >= 0; --j)
      to_end(i, j) =
          mask(i, j) && ((i == N - 1 && j == M - 1) || (i + 1 < N && to_end(i + 1, j)) ||
                         (j + 1 < M && to_end(i, j + 1)) || (i + 1 < N && j + 1 < M && to_end(i + 1, j + 1)));
  return (mask.array() && !(from_start.array() && to_end.array())).count();
}

TEST(Constraints, EveryAllowedCellIsOnAPath) {
  ASSERT_EQ(cells_on_no_path(literal({"110", "000", "011"})), 4);
  ASSERT_EQ(cells_on_no_path(literal({"101", "010", "001"})), 1);
  for (long n = 1; n <= 12; ++n)
    for (long m = 1; m <= 12; ++m) {
      for (long radius = 0; radius <= 3; ++radius)
        EXPECT_EQ(cells_on_no_path(reference::sakoe_chiba_mask(n, m, radius)), 0)
            << "sakoe_chiba " << n << " x " << m << " radius " << radius;
      for (double slope : {1.0, 1.5, 2.0, 3.0, 5.0}) {
        Mask mask;
        try {
          mask = reference::itakura_mask(n, m, slope);
        } catch (const std::invalid_argument&) {
          continue;  // tslearn's documented refusal, checked above
        }
        EXPECT_EQ(cells_on_no_path(mask), 0) << "itakura " << n << " x " << m << " slope " << slope;
      }
    }
}

std::vector<std::pair<std::string, Mask>> small_masks(long n, long m) {
  std::vector<std::pair<std::string, Mask>> out;
  for (long radius : {0L, 1L, 2L})
    out.emplace_back("sakoe_chiba radius " + std::to_string(radius), reference::sakoe_chiba_mask(n, m, radius));
  for (double slope : {1.5, 2.0, 3.0}) {
    try {
      out.emplace_back("itakura slope " + std::to_string(slope), reference::itakura_mask(n, m, slope));
    } catch (const std::invalid_argument&) {
    }
  }
  return out;
}

// Agreement to 1e-12 (value) and 1e-10 (E): both sum the same few paths in float64.
TEST(Constraints, MaskedSoftDtwMatchesPathEnumeration) {
  long checked = 0;
  for (long n = 1; n <= 5; ++n)
    for (long m = 1; m <= 6; ++m)
      for (const auto& [name, mask] : small_masks(n, m))
        for (double gamma : {0.05, 1.0}) {
          SCOPED_TRACE(name + ", N = " + std::to_string(n) + ", M = " + std::to_string(m) +
                       ", gamma = " + std::to_string(gamma));
          const Matrix D = random_matrix(n, m, 100 * n + m, 0.0, 2.0);
          const auto brute = brute_force(D, mask, gamma, 0.0, false);
          ASSERT_GT(brute.paths, 0);
          const auto r = reference::soft_dtw_with_alignment(reference::apply_mask(D, mask), {gamma, std::nullopt});
          EXPECT_TRUE(close(r.value, brute.value, 1e-12));
          EXPECT_TRUE(close(r.E, brute.E, 1e-10));
          ++checked;
        }
  EXPECT_GT(checked, 150);
}

TEST(Constraints, MaskedExactDtwMatchesCheapestPath) {
  for (long n = 1; n <= 5; ++n)
    for (long m = 1; m <= 6; ++m)
      for (const auto& [name, mask] : small_masks(n, m)) {
        SCOPED_TRACE(name + ", N = " + std::to_string(n) + ", M = " + std::to_string(m));
        const Matrix D = random_matrix(n, m, 200 * n + m, 0.0, 2.0);
        const auto brute = brute_force(D, mask, 0.0, 0.0, false);
        const auto r = reference::soft_dtw_variant(reference::apply_mask(D, mask), {0.0, 0.0, false});
        EXPECT_TRUE(close(r.value, brute.value, 1e-12));
        EXPECT_EQ(r.E, brute.E);
      }
}

// On equal lengths the tslearn band is the reference's own bandwidth, computed without a mask,
// and the band of the independent loops in naive_soft_dtw.hpp (soft and hard).
TEST(Constraints, SakoeChibaMaskEqualsBandwidthOnEqualLengths) {
  for (long n : {1L, 4L, 9L, 17L})
    for (long radius : {0L, 1L, 3L}) {
      SCOPED_TRACE("N = M = " + std::to_string(n) + ", radius " + std::to_string(radius));
      const Matrix D = random_matrix(n, n, 7 * n + radius, 0.0, 3.0);
      const Matrix masked_D = reference::apply_mask(D, reference::sakoe_chiba_mask(n, n, radius));
      const auto masked = reference::soft_dtw_with_alignment(masked_D, {0.3, std::nullopt});
      const auto band = reference::soft_dtw_with_alignment(D, {0.3, radius});
      EXPECT_EQ(masked.value, band.value);
      EXPECT_EQ(masked.E, band.E);
      const auto naive = naive::soft_dtw(to_grid(D), 0.3, radius);
      EXPECT_TRUE(close(masked.value, naive.value, 1e-12));
      EXPECT_TRUE(close(masked.E, to_matrix(naive.E), 1e-10));
      EXPECT_EQ(reference::soft_dtw_variant(masked_D, {0.0, 0.0, false}).value, naive::hard_dtw(to_grid(D), radius));
    }
}

// One path: the value is the diagonal's cost at every gamma and E is the identity.
TEST(Constraints, DiagonalOnlyIsTheDiagonalPath) {
  for (long n : {1L, 2L, 7L}) {
    const Matrix D = random_matrix(n, n, 31 + n, 0.0, 2.0);
    const Matrix Dm = reference::apply_mask(D, reference::diagonal_mask(n, n));
    for (double gamma : {0.0, 0.01, 10.0}) {
      const auto r = reference::soft_dtw_variant(Dm, {gamma, 0.0, false});
      EXPECT_TRUE(close(r.value, D.trace(), 1e-14));
      EXPECT_EQ(r.E, Matrix::Identity(n, n));
    }
  }
}

// A mask with no path from (0, 0) to (N-1, M-1): value +inf, E NaN, as soft_dtw.hpp documents, and the
// variant's end weights and expected end NaN, as variants.hpp documents.
TEST(Constraints, NoPathGivesInfiniteValue) {
  const Mask blocked = literal({"100", "000", "001"});
  const Matrix D = reference::apply_mask(random_matrix(3, 3, 5, 0.0, 1.0), blocked);
  EXPECT_EQ(reference::soft_dtw(D, {1.0, std::nullopt}), reference::kInf);
  EXPECT_TRUE(reference::soft_dtw_with_alignment(D, {1.0, std::nullopt}).E.array().isNaN().all());
  for (double gamma : {0.0, 1.0}) {
    SCOPED_TRACE(gamma);
    const auto variant = reference::soft_dtw_variant(D, {gamma, 0.0, false});
    EXPECT_EQ(variant.value, reference::kInf);
    EXPECT_TRUE(variant.E.array().isNaN().all());
    EXPECT_TRUE(variant.end.array().isNaN().all());
    EXPECT_TRUE(std::isnan(variant.expected_end));
  }
}

}  // namespace
}  // namespace sdtw::test
