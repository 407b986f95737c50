// sdtw::pairwise_soft_dtw_sqeuclidean: the soft-DTW values of chosen pairs of two sets of series,
// what cdist_soft_dtw runs on. The CPU gathers the pairs and runs the batched values; CUDA
// (ops_cuda.cpp) indexes the pairs in the kernels, with no gathered copies and no saved state.
#include <torch/library.h>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

c10::optional<at::Tensor> gathered(const c10::optional<at::Tensor>& lengths, const at::Tensor& index) {
  return lengths ? c10::optional<at::Tensor>(lengths->index_select(0, index)) : c10::nullopt;
}

at::Tensor pairwise_soft_dtw_sqeuclidean_cpu(const at::Tensor& X, const at::Tensor& Y, const at::Tensor& x_index,
                                             const at::Tensor& y_index, double gamma, int64_t bandwidth,
                                             const c10::optional<at::Tensor>& x_lengths,
                                             const c10::optional<at::Tensor>& y_lengths,
                                             int64_t sakoe_chiba_radius, double itakura_max_slope) {
  const PairSets s = check_pair_sets(X, Y, x_index, y_index, gamma,
                                     operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope), x_lengths,
                                     y_lengths);
  if (s.pairs == 0) return at::empty({0}, X.options().dtype(compute_dtype(X.scalar_type())));
  return std::get<0>(ops::sqeuclidean_forward(X.index_select(0, s.x_index), Y.index_select(0, s.y_index), gamma,
                                              bandwidth, gathered(s.x_len, s.x_index), gathered(s.y_len, s.y_index),
                                              sakoe_chiba_radius, itakura_max_slope));
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_FRAGMENT(sdtw, m) {
  m.def(
      "pairwise_soft_dtw_sqeuclidean(Tensor X, Tensor Y, Tensor x_index, Tensor y_index, float gamma,"
      " int bandwidth=-1, Tensor? x_lengths=None, Tensor? y_lengths=None, int sakoe_chiba_radius=-1,"
      " float itakura_max_slope=0.0) -> Tensor");
}

TORCH_LIBRARY_IMPL(sdtw, CPU, m) {
  m.impl("pairwise_soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::pairwise_soft_dtw_sqeuclidean_cpu));
}
