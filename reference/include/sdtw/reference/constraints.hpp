#pragma once
// Global constraints as N x M masks (true = the cell may be aligned), with tslearn's semantics, and
// the cost that enforces one: +inf outside the mask forbids a cell in soft_dtw, expected_alignment
// and soft_dtw_variant (gamma = 0 included); hard_dtw rejects non-finite costs, so the constrained
// exact DTW is soft_dtw_variant with gamma = 0.
#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

using Mask = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// tslearn.metrics.sakoe_chiba_mask(sz1, sz2, radius): along the shorter sequence's index k, the
// longer one's cells k - radius .. k + |N - M| + radius, so the band widens by |N - M| on one side
// only. Equal lengths give |i - j| <= radius. radius >= 0.
Mask sakoe_chiba_mask(long n, long m, long radius);

// tslearn.metrics.itakura_mask(sz1, sz2, max_slope): per column j, the rows between the
// parallelogram's sides of slopes max_slope and 1 / max_slope (scaled by N / M) through (0, 0) and
// (N-1, M-1), each bound rounded to two decimals (half to even) before ceil / floor + 1, and
// applied as a Python slice. Like tslearn, throws when a row or a column is left empty.
Mask itakura_mask(long n, long m, double max_slope = 2.0);

// Only the cells (k, k): sakoe_chiba_mask(n, n, 0); needs n == m (with N != M no path is diagonal).
Mask diagonal_mask(long n, long m);

// D where mask is true, +inf elsewhere; mask must have D's shape.
Matrix apply_mask(const Matrix& D, const Mask& mask);

}  // namespace sdtw::reference
