#pragma once
// Batched entry points over B pairs stored densely (row-major, padded to N and M rows), each
// pair b using only its first x_len[b] rows of x and y_len[b] rows of y. Padding entries of the
// outputs (E, gradients) are zero. Null lengths mean every pair uses all N and M rows.
#include <vector>

#include "sdtw/reference/problem.hpp"

namespace sdtw::reference {

struct BatchShape {
  long batch = 1;
  long n = 1;    // rows of x (or of D)
  long m = 1;    // rows of y (or columns of D)
  long dim = 1;  // features per row; unused for a cost tensor
  const long* x_len = nullptr;
  const long* y_len = nullptr;
};

struct CostBatchResult {
  std::vector<double> values;  // B
  std::vector<double> E;       // B x N x M, empty unless requested
};

struct SqEuclideanBatchResult {
  std::vector<double> values;  // B
  std::vector<double> grad_x;  // B x N x dim, empty unless requested
  std::vector<double> grad_y;  // B x M x dim, empty unless requested
};

CostBatchResult soft_dtw_cost_batch(const double* D, const BatchShape& shape, const Options& options,
                                    bool with_alignment);

SqEuclideanBatchResult soft_dtw_sqeuclidean_batch(const double* x, const double* y, const BatchShape& shape,
                                                  const Options& options, bool with_gradient,
                                                  bool normalize = false);

// The second order (second_order.hpp) per pair along a direction Z stored like D: pair b's
// block is its first x_len[b] x y_len[b] entries; Z's padding is ignored (it may hold anything).
struct CostBatchHessianProduct {
  std::vector<double> values;      // B
  std::vector<double> E;           // B x N x M
  std::vector<double> value_dots;  // B: <E_b, Z_b>
  std::vector<double> E_dot;       // B x N x M: H_b Z_b
};

CostBatchHessianProduct soft_dtw_hessian_product_cost_batch(const double* D, const double* Z, const BatchShape& shape,
                                                            const Options& options);

}  // namespace sdtw::reference
