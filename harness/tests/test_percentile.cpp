// Nearest-rank percentiles, by hand: the same values sdtw_results.stats gives (its test has these cases).
#include <gtest/gtest.h>

#include <stdexcept>

#include "percentile.hpp"

using sdtw::bench::nearest_rank;

TEST(BenchPercentile, NearestRankByHand) {
  const std::vector<double> ten = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};  // unsorted
  EXPECT_EQ(nearest_rank(ten, 0.1), 1.0);
  EXPECT_EQ(nearest_rank(ten, 0.5), 5.0);
  EXPECT_EQ(nearest_rank(ten, 0.9), 9.0);
  EXPECT_EQ(nearest_rank({3, 1, 2, 4}, 0.5), 2.0);  // the lower middle of an even count
  EXPECT_EQ(nearest_rank({3, 1, 2, 4}, 0.9), 4.0);
  EXPECT_EQ(nearest_rank({7}, 0.1), 7.0);
  std::vector<double> thirty;
  for (int i = 1; i <= 30; ++i) thirty.push_back(i);
  EXPECT_EQ(nearest_rank(thirty, 0.1), 3.0);  // 0.1 x 30 is 3 in floating point too
  EXPECT_EQ(nearest_rank(thirty, 0.9), 27.0);
  EXPECT_THROW(nearest_rank({}, 0.5), std::invalid_argument);
  EXPECT_THROW(nearest_rank({1}, 0.0), std::invalid_argument);
}
