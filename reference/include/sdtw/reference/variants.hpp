#pragma once
// The soft-DTW recursion with what other libraries add, in float64:
// - gamma = 0: exact DTW, the hard min; E is then the 0/1 alignment of one optimal path (a
//   subgradient), ties broken as hard_dtw breaks them: the diagonal, then (i-1, j), then (i, j-1).
// - warp: the warp penalty of Parallel Tacotron 2 (Elias et al. 2021, its soft-DTW loss, keyword
//   `warp`), a constant added to every vertical and horizontal move and not to the diagonal:
//   R(i,j) = D(i-1,j-1) + softmin(R(i-1,j-1), R(i-1,j) + warp, R(i,j-1) + warp).
// - subsequence: free start and end along the second sequence (subsequence DTW), R(0, j) = 0 for
//   every j and value = softmin over j of R(N, j); a path enters its first cell (0, j) once, by the
//   diagonal from R(0, j-1) (no vertical move out of row 0), so every subsequence path, from any
//   (0, a) to any (N-1, b), is counted once and at N = M = 1 the value is D.
// Masks compose with all three through apply_mask (+inf costs forbid cells, as in soft_dtw_R).
// With gamma > 0, warp = 0 and no subsequence it is soft_dtw, term for term.
#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

struct VariantOptions {
  double gamma = 1.0;  // >= 0
  double warp = 0.0;   // finite
  bool subsequence = false;
};

// D: non-empty, no NaN and no -inf (+inf forbids a cell). Throws std::invalid_argument otherwise.
void check_variant(const Matrix& D, const VariantOptions& options);

// (N+1) x (M+1), indexed like soft_dtw_R: R(i, j) ends at cell (i-1, j-1).
Matrix variant_R(const Matrix& D, const VariantOptions& options);

struct VariantResult {
  double value;
  Matrix E;             // d value / d D, N x M
  Vector end;           // d value / d R(N, j+1): how the end spreads over the last row's M cells
  double expected_end;  // sum_j j end(j), 0-based; at gamma = 0 the optimal end column (the first on ties)
};

// When value is +inf (every path crosses a forbidden cell) E, end and expected_end are NaN.
VariantResult soft_dtw_variant(const Matrix& D, const VariantOptions& options);

}  // namespace sdtw::reference
