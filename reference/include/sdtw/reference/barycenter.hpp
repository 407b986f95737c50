#pragma once
// The soft-DTW barycenter objective (Cuturi & Blondel 2017, section 4) and the pairwise matrix,
// with the squared Euclidean cost. Series are separate matrices, so lengths may differ.
#include <vector>

#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

struct BarycenterObjective {
  double value;
  Matrix grad;  // d value / d Z, Z's shape
};

// f(Z) = sum_k weights[k] sdtw(Z, X[k]) (weights as given, not normalised) and its gradient,
// the weighted sum of each pair's gradient in its first argument.
BarycenterObjective barycenter_objective(const Matrix& Z, const std::vector<Matrix>& X,
                                         const std::vector<double>& weights, const Options& options);

// C(i, j) = sdtw(X[i], Y[j]); normalize: the divergence sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2.
Matrix pairwise_soft_dtw(const std::vector<Matrix>& X, const std::vector<Matrix>& Y, const Options& options,
                         bool normalize = false);

}  // namespace sdtw::reference
