// The kernels' per-row column ranges, evaluated on the host, against the reference's masks (which
// are tslearn's): cell for cell on every shape up to 40 x 40 and a few long ones, and has_path
// against the cells a path can reach inside the reference's mask.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sdtw/kernels/constraint.hpp"
#include "sdtw/reference/constraints.hpp"

namespace sdtw::kernels {
namespace {

using reference::Mask;

Mask mask_of(const Constraint& c, long rows, long cols) {
  Mask mask = Mask::Constant(rows, cols, false);
  for (long i = 0; i < rows; ++i) {
    const ColumnRange r = column_range(c, static_cast<int>(i), static_cast<int>(rows), static_cast<int>(cols));
    for (long j = r.lo; j < r.hi; ++j) mask(i, j) = true;
  }
  return mask;
}

// Whether (rows - 1, cols - 1) is reachable from (0, 0) by monotone steps through the mask.
bool reachable(const Mask& mask) {
  Mask reach = Mask::Constant(mask.rows(), mask.cols(), false);
  for (long i = 0; i < mask.rows(); ++i)
    for (long j = 0; j < mask.cols(); ++j)
      reach(i, j) = mask(i, j) && ((i == 0 && j == 0) || (i > 0 && reach(i - 1, j)) || (j > 0 && reach(i, j - 1)) ||
                                   (i > 0 && j > 0 && reach(i - 1, j - 1)));
  return reach(mask.rows() - 1, mask.cols() - 1);
}

std::string shape(long rows, long cols) { return std::to_string(rows) + " x " + std::to_string(cols); }

std::vector<std::pair<long, long>> shapes() {
  std::vector<std::pair<long, long>> out;
  for (long n = 1; n <= 40; ++n)
    for (long m = 1; m <= 40; ++m) out.emplace_back(n, m);
  for (const auto& s : std::vector<std::pair<long, long>>{{100, 257}, {257, 100}, {512, 512}, {333, 1000}, {1000, 333}})
    out.push_back(s);
  return out;
}

TEST(ConstraintRange, SakoeChibaIsTslearnsMask) {
  for (const auto& [n, m] : shapes())
    for (long radius : {0L, 1L, 2L, 3L, 7L, 50L}) {
      const Constraint c{ConstraintKind::sakoe_chiba, radius};
      ASSERT_EQ(mask_of(c, n, m), reference::sakoe_chiba_mask(n, m, radius)) << shape(n, m) << " radius " << radius;
      ASSERT_TRUE(has_path(c, static_cast<int>(n), static_cast<int>(m))) << shape(n, m) << " radius " << radius;
    }
}

TEST(ConstraintRange, BandIsTheReferencesBand) {
  for (const auto& [n, m] : shapes())
    for (long radius : {0L, 1L, 4L, 30L}) {
      const Constraint c{ConstraintKind::band, radius};
      Mask want(n, m);
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < m; ++j) want(i, j) = reference::in_band(i, j, radius);
      ASSERT_EQ(mask_of(c, n, m), want) << shape(n, m) << " radius " << radius;
      ASSERT_EQ(has_path(c, static_cast<int>(n), static_cast<int>(m)), reachable(want)) << shape(n, m);
    }
}

// Radius 0 with equal lengths is the diagonal alone, the reference's diagonal_mask.
TEST(ConstraintRange, SakoeChibaRadiusZeroIsTheDiagonal) {
  for (long n : {1L, 2L, 17L, 64L})
    EXPECT_EQ(mask_of({ConstraintKind::sakoe_chiba, 0}, n, n), reference::diagonal_mask(n, n)) << n;
}

// Slopes below 1 included: tslearn accepts them, and for very unequal lengths some leave a path.
TEST(ConstraintRange, ItakuraIsTslearnsMask) {
  int compared = 0, refused = 0, compared_below_one = 0;
  for (const auto& [n, m] : shapes())
    for (double slope : {0.3, 0.6, 0.9, 1.0, 1.01, 1.5, 2.0, 2.5, 3.0, 4.7, 10.0, 1e6}) {
      const Constraint c{ConstraintKind::itakura, 0, slope};
      const bool path = has_path(c, static_cast<int>(n), static_cast<int>(m));
      Mask want;
      try {
        want = reference::itakura_mask(n, m, slope);
      } catch (const std::invalid_argument&) {
        ++refused;  // an empty row or column: no path can exist
        ASSERT_FALSE(path) << shape(n, m) << " slope " << slope;
        continue;
      }
      ++compared;
      compared_below_one += slope < 1.0;
      ASSERT_EQ(mask_of(c, n, m), want) << shape(n, m) << " slope " << slope;
      ASSERT_EQ(path, reachable(want)) << shape(n, m) << " slope " << slope;
    }
  EXPECT_GT(compared, 7500);
  EXPECT_GE(compared_below_one, 3);  // few shapes: 1 x m, very unequal lengths
  EXPECT_GT(refused, 1000);
}

TEST(ConstraintRange, EffectiveConstraintNamesBadArguments) {
  const auto message = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { effective_constraint(3, {ConstraintKind::sakoe_chiba, 2}, 5, 5, false); }).find("give one"),
            std::string::npos);
  EXPECT_NE(message([] { effective_constraint(-1, {ConstraintKind::sakoe_chiba, -2}, 5, 5, false); }).find("radius must be >= 0 (got -2)"),
            std::string::npos);
  EXPECT_NE(message([] { effective_constraint(-1, {ConstraintKind::itakura, 0, 0.0}, 5, 5, false); }).find("max_slope"),
            std::string::npos);
  EXPECT_NE(message([] { effective_constraint(-1, {ConstraintKind::itakura, 0, 2.0}, 3, 12, false); })
                .find("leaves no alignment path for n = 3, m = 12"),
            std::string::npos);
  // With per-pair lengths the host cannot know the shapes: the kernels give such a pair +inf.
  EXPECT_EQ(effective_constraint(-1, {ConstraintKind::itakura, 0, 2.0}, 3, 12, true).kind, ConstraintKind::itakura);
  EXPECT_EQ(effective_constraint(4, {}, 5, 7, false).kind, ConstraintKind::band);
  EXPECT_EQ(effective_constraint(-1, {}, 5, 7, false).kind, ConstraintKind::none);
}

}  // namespace
}  // namespace sdtw::kernels
