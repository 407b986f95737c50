#pragma once
// Second order of soft-DTW in cost space (Mensch & Blondel 2018, "Differentiable Dynamic
// Programming for Structured Prediction and Attention", the forward and backward sweeps of
// directional derivatives), in float64. For a direction Z (N x M):
//   value_dot = d/dt sdtw(D + t Z) at t = 0 = <E, Z>,
//   E_dot     = d/dt E(D + t Z) at t = 0    = H Z, H the Hessian of sdtw in D (symmetric).
// Cells outside the band, or that no path through finite costs reaches, have E = 0 and E_dot = 0.
// When sdtw(D) is not finite its derivatives are undefined: value_dot is NaN and E_dot all NaN.
#include <string>

#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

// Throws std::invalid_argument naming the direction unless it is finite and has the shape of D.
void check_direction(const Matrix& D, const Matrix& Z, const std::string& name);

// Rdot is (N+1) x (M+1), the derivative of R along Z: Rdot(i,j) = Z(i-1,j-1) + sum_k w_k Rdot(p_k)
// over the predecessors p_k of (i,j) with their softmin weights w_k at (i,j); 0 in row 0, column 0
// and at unreachable cells (R = +inf). Rdot(N, M) = <E, Z>. Z must be finite and N x M, R (N+1) x (M+1).
Matrix soft_dtw_Rdot(const Matrix& D, const Matrix& R, const Matrix& Z, const Options& options);

// E_dot (N x M) from R, E (expected_alignment) and Rdot, by the backward sweep over successors.
// Throws std::invalid_argument unless R and Rdot are (N+1) x (M+1) and E is N x M.
Matrix expected_alignment_dot(const Matrix& D, const Matrix& R, const Matrix& E, const Matrix& Rdot,
                              const Options& options);

struct SoftDtwHessianProduct {
  double value;
  Matrix E;
  double value_dot;  // <E, Z>
  Matrix E_dot;      // H Z
};
SoftDtwHessianProduct soft_dtw_hessian_product(const Matrix& D, const Matrix& Z, const Options& options);

}  // namespace sdtw::reference
