#pragma once
// Shared by the tests and the golden tool (which must not need GoogleTest).
#include <cstdint>
#include <random>

#include "sdtw/reference/problem.hpp"

namespace sdtw::test {

using reference::Matrix;

// Uniform in [lo, hi) from the raw bits of mt19937_64: the same seed gives the same numbers with
// every standard library (std::uniform_real_distribution is implementation-defined).
inline Matrix random_matrix(long rows, long cols, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  Matrix a(rows, cols);
  for (long i = 0; i < rows; ++i)
    for (long j = 0; j < cols; ++j) a(i, j) = lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
  return a;
}

}  // namespace sdtw::test
