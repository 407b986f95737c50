#pragma once
// Squared Euclidean cost between the rows of x (N x d) and y (M x d), in the style of
// mblondel/soft-dtw: compute() gives D, jacobian_product(E) chains E = dR/dD to x and y.
#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

struct Gradients {
  Matrix x;
  Matrix y;
};

class SqEuclideanCost {
 public:
  SqEuclideanCost(const Matrix& x, const Matrix& y);
  Matrix compute() const;  // D(i,j) = ||x_i - y_j||^2
  // grad_x = 2 (diag(rowsum E) x - E y), grad_y = 2 (diag(colsum E) y - E^T x).
  Gradients jacobian_product(const Matrix& E) const;

 private:
  Matrix x_;
  Matrix y_;
};

struct SoftDtwGradResult {
  double value;
  Gradients grad;
};

// sdtw(x, y) with the squared Euclidean cost and its gradient with respect to x and y.
SoftDtwGradResult soft_dtw_sqeuclidean(const Matrix& x, const Matrix& y, const Options& options);

// The normalised divergence sdtw(x,y) - (sdtw(x,x) + sdtw(y,y)) / 2 and its gradient.
SoftDtwGradResult soft_dtw_divergence(const Matrix& x, const Matrix& y, const Options& options);

}  // namespace sdtw::reference
