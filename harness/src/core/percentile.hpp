#pragma once
// Nearest-rank percentiles of the timed repetitions, as sdtw_results.stats computes them.
#include <vector>

namespace sdtw::bench {

// The smallest value with at least a fraction q of the values at or below it: sorted[ceil(q n) - 1].
// Throws std::invalid_argument for no values or q outside (0, 1].
double nearest_rank(std::vector<double> values, double q);

}  // namespace sdtw::bench
