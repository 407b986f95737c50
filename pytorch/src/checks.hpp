#pragma once
// Validation at the operator boundary, shared by the CPU and CUDA implementations.
// Every failed check names the argument it is about (x, y, D, gamma, bandwidth, x_lengths, ...).
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "sdtw/kernels/constraint.hpp"

namespace sdtw::ops::detail {

// The operators' one constraint per call: the band (bandwidth), tslearn's Sakoe-Chiba radius or
// its Itakura slope, evaluated per row from each pair's lengths (kernels/.../constraint.hpp).
using Constraint = sdtw::kernels::Constraint;
using ConstraintKind = sdtw::kernels::ConstraintKind;

// The operators' arguments as one constraint: bandwidth -1, sakoe_chiba_radius -1 and
// itakura_max_slope 0 mean absent; at most one may be given. ValueError naming the argument.
Constraint operator_constraint(int64_t bandwidth, int64_t sakoe_chiba_radius, double itakura_max_slope);
// The constraint as the user spelled it, for messages ("bandwidth 3", "global_constraint='itakura'
// with itakura_max_slope=2").
std::string describe(const Constraint& c);

// The inputs of one call, normalised to the batched layout: a is x (or D), b is y (undefined in
// cost mode); both are 3-D views of the caller's tensors (not yet contiguous nor converted).
struct Pair {
  at::Tensor a;
  at::Tensor b;
  bool unbatched = false;
  int64_t batch = 0;
  int64_t n = 0;
  int64_t m = 0;
  int64_t dim = 1;
  // int64, contiguous, shape (batch,), on the device of a; absent: every pair has full length.
  c10::optional<at::Tensor> x_len;
  c10::optional<at::Tensor> y_len;
};

// What to check beyond shapes, dtypes and devices: lengths given on the CPU in range and inside
// the band (skip: the backward, whose forward checked them). Data values are never checked here:
// non-finite values propagate to their pair's result, as in torch's own losses.
enum class Values { check, skip };

void check_gamma(double gamma);

Pair check_cost(const at::Tensor& D, double gamma, const Constraint& constraint, const c10::optional<at::Tensor>& x_lengths,
                const c10::optional<at::Tensor>& y_lengths, Values values);
Pair check_sqeuclidean(const at::Tensor& x, const at::Tensor& y, double gamma, const Constraint& constraint,
                       const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                       Values values);
// The shapes and devices of x and y only (used by pairwise_cost before it computes D).
Pair check_xy(const at::Tensor& x, const at::Tensor& y);

// The inputs of sdtw::pairwise_soft_dtw_sqeuclidean: two sets of series X (B1, N, D) and Y (B2, M, D)
// (3-D views, not yet contiguous nor converted) and the pairs to compare, pair p being
// (X[x_index[p]], Y[y_index[p]]). Indices and lengths on the device are not read (no sync).
struct PairSets {
  at::Tensor X, Y, x_index, y_index;  // indices: int64, contiguous, (P,), on the device of X
  int64_t pairs = 0;
  c10::optional<at::Tensor> x_len, y_len;  // as in Pair, one per series of X and of Y
};
PairSets check_pair_sets(const at::Tensor& X, const at::Tensor& Y, const at::Tensor& x_index,
                         const at::Tensor& y_index, double gamma, const Constraint& constraint,
                         const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths);

// G, the gradient of a cost tensor of x and y: (B, N, M) (or (N, M) unbatched) on their device;
// returned as a (B, N, M) view.
at::Tensor check_cost_gradient(const at::Tensor& G, const Pair& p);

// The cells of the pairs flagged in `pairs` (bool, (B,)) that lie inside each pair's lengths, as a
// (B, N, M) bool mask: where a pair with undefined derivatives gets NaN (0 stays beyond its lengths).
at::Tensor cells_of_pairs(const at::Tensor& pairs, const Pair& p);

// dvalues must hold one number per pair: shape (B,) or () for unbatched inputs.
at::Tensor check_dvalues(const at::Tensor& dvalues, const Pair& p, at::ScalarType compute);

// float64 stays float64; float32, float16 and bfloat16 compute (and return values) in float32.
at::ScalarType compute_dtype(at::ScalarType input);

// The result `values` of shape (B,), back to () for unbatched inputs.
at::Tensor unbatch(const at::Tensor& t, const Pair& p);

}  // namespace sdtw::ops::detail
