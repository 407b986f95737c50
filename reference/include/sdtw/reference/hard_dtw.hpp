#pragma once
// Classic DTW, the gamma -> 0 limit of soft-DTW, with one optimal alignment path.
#include <utility>
#include <vector>

#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

struct HardDtwResult {
  double value;
  std::vector<std::pair<long, long>> path;  // from (0, 0) to (N-1, M-1)
};

HardDtwResult hard_dtw(const Matrix& D, const std::optional<long>& bandwidth = std::nullopt);

}  // namespace sdtw::reference
