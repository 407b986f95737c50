#include "sdtw/reference/barycenter.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

namespace sdtw::reference {

BarycenterObjective barycenter_objective(const Matrix& Z, const std::vector<Matrix>& X,
                                         const std::vector<double>& weights, const Options& options) {
  if (X.empty()) throw std::invalid_argument("X must hold at least one series");
  if (weights.size() != X.size())
    throw std::invalid_argument("weights must have one entry per series of X (X has " + std::to_string(X.size()) +
                                ", weights " + std::to_string(weights.size()) + ")");
  for (std::size_t k = 0; k < weights.size(); ++k)
    if (!std::isfinite(weights[k]) || weights[k] < 0)
      throw std::invalid_argument("weights must be finite and >= 0 (weights[" + std::to_string(k) +
                                  "] = " + std::to_string(weights[k]) + ")");
  BarycenterObjective out{0.0, Matrix::Zero(Z.rows(), Z.cols())};
  for (std::size_t k = 0; k < X.size(); ++k) {
    const SoftDtwGradResult r = soft_dtw_sqeuclidean(Z, X[k], options);
    out.value += weights[k] * r.value;
    out.grad += weights[k] * r.grad.x;
  }
  return out;
}

Matrix pairwise_soft_dtw(const std::vector<Matrix>& X, const std::vector<Matrix>& Y, const Options& options,
                         bool normalize) {
  if (X.empty() || Y.empty()) throw std::invalid_argument("X and Y must each hold at least one series");
  const auto value = [&](const Matrix& a, const Matrix& b) {
    return normalize ? soft_dtw_divergence(a, b, options).value : soft_dtw_sqeuclidean(a, b, options).value;
  };
  Matrix C(static_cast<long>(X.size()), static_cast<long>(Y.size()));
  for (long i = 0; i < C.rows(); ++i)
    for (long j = 0; j < C.cols(); ++j) C(i, j) = value(X[i], Y[j]);
  return C;
}

}  // namespace sdtw::reference
