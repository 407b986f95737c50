#pragma once
// Soft-DTW on a cost matrix D (Cuturi & Blondel 2017, Algorithms 1 and 2), in float64.
// Non-finite costs are not rejected: a +inf cost forbids its cell (like a band), so the value is
// +inf only when every path crosses one; NaN propagates. When the value is not finite its gradient
// is undefined, and E is all NaN.
#include <array>

#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

// softmin_g(a, b, c) = -g log(exp(-a/g) + exp(-b/g) + exp(-c/g)), evaluated around the minimum.
// NaN if any argument is NaN, +inf if all are +inf.
double softmin(double a, double b, double c, double gamma);

// The weights of a, b and c in that softmin, exp(-a/g) / sum: normalised (they sum to one) for
// every gamma > 0, computed around the minimum. Needs a finite minimum.
std::array<double, 3> softmin_weights(double a, double b, double c, double gamma);

// R is (N+1) x (M+1): R(0,0) = 0, the rest of row 0 and column 0 is +inf, cells outside the
// band are +inf, and R(i,j) = D(i-1,j-1) + softmin(R(i-1,j-1), R(i-1,j), R(i,j-1)).
Matrix soft_dtw_R(const Matrix& D, const Options& options);

// sdtw(D) = R(N, M).
double soft_dtw(const Matrix& D, const Options& options);

// E = d R(N,M) / d D, an N x M matrix with entries in [0, 1] (the expected alignment),
// computed from R by the backward recursion over successors with each cell's normalised softmin
// weights (recomputing them as exp((R(s) - D(s) - R(c)) / gamma) cancels catastrophically when
// gamma is small against R, and E then leaves [0, 1]).
Matrix expected_alignment(const Matrix& D, const Matrix& R, const Options& options);

struct SoftDtwResult {
  double value;
  Matrix E;
};
SoftDtwResult soft_dtw_with_alignment(const Matrix& D, const Options& options);

}  // namespace sdtw::reference
