#include "percentile.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sdtw::bench {

double nearest_rank(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("nearest_rank: no values");
  if (!(q > 0 && q <= 1)) throw std::invalid_argument("nearest_rank: q must be in (0, 1], got " + std::to_string(q));
  std::sort(values.begin(), values.end());
  // The epsilon keeps q n that is an integer in floating point (0.1 x 30) from rounding up a rank.
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()) - 1e-12));
  return values[std::max<size_t>(rank, 1) - 1];
}

}  // namespace sdtw::bench
