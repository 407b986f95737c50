#pragma once
// DILATE (Le Guen & Thome, NeurIPS 2019) on one cost matrix D, in float64:
//   loss = alpha * sdtw(D) + (1 - alpha) * <Omega, E(D)>,
// the shape term and the temporal term, with gradient in D
//   alpha * E + (1 - alpha) * H Omega  (H symmetric, so d<Omega, E>/dD = H Omega).
// The reference code (vincent-leguen/DILATE, loss/dilate_loss.py) computes the temporal term as
// sum(path * Omega) / (N_output * N_output) with Omega(i,j) = (i - j)^2: that is dilate_omega's
// (i - j)^2 / N^2 here, the division folded into Omega. It averages both terms over the batch.
#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

// Omega(i,j) = (i - j)^2 / N^2 for an N x M cost matrix (the reference has N = M = N_output).
Matrix dilate_omega(long n, long m);

struct DilateResult {
  double value;     // alpha * shape + (1 - alpha) * temporal
  double shape;     // sdtw(D)
  double temporal;  // <Omega, E(D)>
  Matrix grad;      // d value / d D
};

// alpha in [0, 1]; Omega finite and of D's shape. When sdtw(D) is not finite, shape holds it and
// value, temporal and grad are NaN.
DilateResult dilate(const Matrix& D, const Matrix& Omega, double alpha, const Options& options);

}  // namespace sdtw::reference
