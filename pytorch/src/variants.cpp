// The loss's warp penalty and subsequence option on a cost tensor (the front's operators call it),
// and the operators sdtw::subsequence_end and sdtw::subsequence_end_from_cost.
//
// warp without subsequence is exact on the fast operators: a path from (0, 0) to (n-1, m-1) of L
// cells makes 2 (L - 1) - (n + m - 2) vertical and horizontal moves, so 2 warp added to every cell
// adds warp (#vertical and horizontal moves) + warp (n + m) to every path. At each cell the softmin's
// three arguments shift by one constant, so soft-DTW_warp(D) = soft-DTW(D + 2 warp) - warp (n + m) at
// every gamma (0 too), band and constraint, n and m each pair's own lengths, with the same gradient
// in D. subsequence (its paths start and end anywhere in the second series, so their lengths vary)
// is the torch-op composite of subsequence.cpp.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <tuple>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

// Each pair's length along `dim` of D as values' dtype and shape (given lengths, or D's size).
at::Tensor series_lengths(const c10::optional<at::Tensor>& lengths, const at::Tensor& D, int64_t dim,
                          const at::Tensor& values) {
  if (!lengths || !lengths->defined()) return at::full_like(values, double(D.size(dim)));
  return lengths->to(values.device(), values.scalar_type()).reshape(values.sizes());
}

}  // namespace

at::Tensor variant_soft_dtw_cost(const at::Tensor& D, const LossOptions& o,
                                 const c10::optional<at::Tensor>& x_lengths,
                                 const c10::optional<at::Tensor>& y_lengths) {
  if (o.subsequence) return subsequence_soft_dtw(D, o.gamma, o.warp, x_lengths, y_lengths);
  // float16 and bfloat16 costs are computed in float32: the offset too, lest it round.
  const bool reduced = D.scalar_type() == at::kHalf || D.scalar_type() == at::kBFloat16;
  const at::Tensor shifted = (reduced ? D.to(at::kFloat) : D) + 2.0 * o.warp;
  const at::Tensor values = ops::soft_dtw_cost(shifted, o.gamma, o.bandwidth, x_lengths, y_lengths,
                                               o.sakoe_chiba_radius, o.itakura_max_slope);
  return values - o.warp * (series_lengths(x_lengths, D, -2, values) + series_lengths(y_lengths, D, -1, values));
}

namespace {

std::tuple<at::Tensor, at::Tensor> subsequence_end_from_cost(const at::Tensor& D,
                                                             const c10::optional<at::Tensor>& x_lengths,
                                                             const c10::optional<at::Tensor>& y_lengths, double gamma,
                                                             double warp) {
  resolve_options(gamma, c10::nullopt, false, "sqeuclidean", c10::nullopt, "none", c10::nullopt, c10::nullopt,
                  c10::nullopt, warp, true);
  return subsequence_end_of_cost(D, gamma, warp, x_lengths, y_lengths);
}

std::tuple<at::Tensor, at::Tensor> subsequence_end(const at::Tensor& x, const at::Tensor& y,
                                                   const c10::optional<at::Tensor>& x_lengths,
                                                   const c10::optional<at::Tensor>& y_lengths, double gamma,
                                                   c10::string_view dist, double warp) {
  const LossOptions o = resolve_options(gamma, c10::nullopt, false, dist, c10::nullopt, "none", c10::nullopt,
                                        c10::nullopt, c10::nullopt, warp, true);
  const auto [xz, yz] = zero_padding(x, y, x_lengths, y_lengths);
  return subsequence_end_of_cost(ops::pairwise_cost(xz, yz, o.dist), gamma, warp, x_lengths, y_lengths);
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_FRAGMENT(sdtw, m) {
  m.def(
      "subsequence_end(Tensor x, Tensor y, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " str dist=\"sqeuclidean\", float warp=0.0) -> (Tensor, Tensor)");
  m.def(
      "subsequence_end_from_cost(Tensor D, Tensor? x_lengths=None, Tensor? y_lengths=None, float gamma=1.0,"
      " float warp=0.0) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(sdtw, CompositeImplicitAutograd, m) {
  m.impl("subsequence_end", TORCH_FN(sdtw::ops::detail::subsequence_end));
  m.impl("subsequence_end_from_cost", TORCH_FN(sdtw::ops::detail::subsequence_end_from_cost));
}
