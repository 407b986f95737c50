#include "sdtw/reference/sqeuclidean.hpp"

#include "sdtw/reference/costs.hpp"
#include "sdtw/reference/soft_dtw.hpp"

namespace sdtw::reference {

SqEuclideanCost::SqEuclideanCost(const Matrix& x, const Matrix& y) : x_(x), y_(y) { check_cost_inputs(x, y); }

Matrix SqEuclideanCost::compute() const {
  Matrix D(x_.rows(), y_.rows());
  for (long i = 0; i < x_.rows(); ++i)
    for (long j = 0; j < y_.rows(); ++j) D(i, j) = (x_.row(i) - y_.row(j)).squaredNorm();
  return D;
}

Gradients SqEuclideanCost::jacobian_product(const Matrix& E) const {
  check_alignment_shape(E, x_, y_);
  const Vector rowsum = E.rowwise().sum();
  const Vector colsum = E.colwise().sum().transpose();
  return {2.0 * (rowsum.asDiagonal() * x_ - E * y_), 2.0 * (colsum.asDiagonal() * y_ - E.transpose() * x_)};
}

SoftDtwGradResult soft_dtw_sqeuclidean(const Matrix& x, const Matrix& y, const Options& options) {
  const SqEuclideanCost cost(x, y);
  const SoftDtwResult r = soft_dtw_with_alignment(cost.compute(), options);
  return {r.value, cost.jacobian_product(r.E)};
}

// d/dx of sdtw(x, x) is the sum of its gradients in both arguments.
SoftDtwGradResult soft_dtw_divergence(const Matrix& x, const Matrix& y, const Options& options) {
  const SoftDtwGradResult xy = soft_dtw_sqeuclidean(x, y, options);
  const SoftDtwGradResult xx = soft_dtw_sqeuclidean(x, x, options);
  const SoftDtwGradResult yy = soft_dtw_sqeuclidean(y, y, options);
  return {xy.value - 0.5 * (xx.value + yy.value),
          {xy.grad.x - 0.5 * (xx.grad.x + xx.grad.y), xy.grad.y - 0.5 * (yy.grad.x + yy.grad.y)}};
}

}  // namespace sdtw::reference
