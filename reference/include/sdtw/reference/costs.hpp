#pragma once
// The costs between the rows of x (N x d) and y (M x d) besides the squared Euclidean one, with the
// definitions of the unfused path (pytorch/src/ops_cpu.cpp, pairwise_cost) and of torch. Each cost
// is a class with SqEuclideanCost's two members: compute() gives D (N x M); jacobian_product(E)
// gives grad_x(i) = sum_j E(i,j) dD(i,j)/dx_i and grad_y(j) = sum_i E(i,j) dD(i,j)/dy_j.
// A new cost is a new class, one alternative of NamedCost and one row of the name table (costs.cpp).
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sdtw/reference/problem.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

namespace sdtw::reference {

// x and y non-empty and finite, with the same number of features.
void check_cost_inputs(const Matrix& x, const Matrix& y);

// E (the upstream of a Jacobian product) is rows of x by rows of y.
void check_alignment_shape(const Matrix& E, const Matrix& x, const Matrix& y);

// What every cost below holds: x and y, checked by check_cost_inputs.
class PairwiseCost {
 public:
  PairwiseCost(const Matrix& x, const Matrix& y);

 protected:
  // E's shape checked; the gradients' accumulators, zero.
  Gradients zero_gradients(const Matrix& E) const;

  Matrix x_;
  Matrix y_;
};

// D(i,j) = sum_k |x_ik - y_jk|. The subgradient takes sign(0) = 0, as the backward of torch's abs
// and of torch.cdist(p=1) do.
class L1Cost : PairwiseCost {
 public:
  using PairwiseCost::PairwiseCost;
  Matrix compute() const;
  Gradients jacobian_product(const Matrix& E) const;
};

// D(i,j) = ||x_i - y_j||, gradient (x_i - y_j) / D(i,j), taken as 0 where D(i,j) = 0 as
// torch.cdist(p=2) does. The unfused path computes sqrt(max(D^2, 1e-30)): it gives 1e-15 instead
// of 0 at coincident rows, and gradient 0 below distance 1e-15; the reference keeps the definition.
class EuclideanCost : PairwiseCost {
 public:
  using PairwiseCost::PairwiseCost;
  Matrix compute() const;
  Gradients jacobian_product(const Matrix& E) const;
};

// Each norm is clamped from below, as in the unfused path and torch's cosine_similarity.
inline constexpr double kCosineEps = 1e-8;

// D(i,j) = 1 - <x_i, y_j> / (max(||x_i||, eps) max(||y_j||, eps)), so a zero row costs 1. A row with
// norm below eps is divided by eps, a linear map: its gradient has no radial term. At norm = eps
// exactly the norm's branch is taken, as the backward of torch's clamp_min does.
class CosineCost : PairwiseCost {
 public:
  using PairwiseCost::PairwiseCost;
  Matrix compute() const;
  Gradients jacobian_product(const Matrix& E) const;
};

// D(i,j) = -<x_i, y_j>: a similarity as a cost, unbounded below.
class NegativeDotCost : PairwiseCost {
 public:
  using PairwiseCost::PairwiseCost;
  Matrix compute() const;
  Gradients jacobian_product(const Matrix& E) const;
};

// Any of the costs chosen by its name: "sqeuclidean", "l1", "euclidean", "cosine" (the names of
// pairwise_cost's dist) or "negative_dot".
class NamedCost {
 public:
  NamedCost(std::string_view name, const Matrix& x, const Matrix& y);
  Matrix compute() const;
  Gradients jacobian_product(const Matrix& E) const;

  using Any = std::variant<SqEuclideanCost, L1Cost, EuclideanCost, CosineCost, NegativeDotCost>;

 private:
  Any cost_;
};

// The names NamedCost takes, in the order of its table.
std::vector<std::string> cost_names();

// sdtw(x, y) with the named cost and its gradient with respect to x and y.
SoftDtwGradResult soft_dtw_with_cost(std::string_view cost, const Matrix& x, const Matrix& y,
                                     const Options& options);

}  // namespace sdtw::reference
