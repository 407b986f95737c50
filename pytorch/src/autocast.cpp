// Autocast (CUDA) for the sdtw operators, all of it (the front's operators are composites of these).
// The squared-Euclidean loss and the pairwise cost run in float32,
// as torch's own losses do under autocast; x and y of one dtype (bfloat16 or float16 leaves, or a
// model's output next to a target of its dtype) reach the kernels as they are, since they read
// those types and compute in float32, so no cast kernels run forward or backward. x and y of
// different dtypes are cast to float32 first, as autocast's float32 policy does.
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

at::Tensor widened(const at::Tensor& t) {
  const at::ScalarType type = t.scalar_type();
  return t.is_cuda() && at::isFloatingType(type) && type != at::kDouble && type != at::kFloat ? t.to(at::kFloat) : t;
}

at::Tensor soft_dtw_sqeuclidean_autocast(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                         const c10::optional<at::Tensor>& x_lengths,
                                         const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                         double itakura_max_slope) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  const bool same = x.scalar_type() == y.scalar_type();
  return ops::soft_dtw_sqeuclidean(same ? x : widened(x), same ? y : widened(y), gamma, bandwidth, x_lengths,
                                   y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor pairwise_cost_autocast(const at::Tensor& x, const at::Tensor& y, c10::string_view dist) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  if (x.scalar_type() == y.scalar_type()) return pairwise_cost(x, y, dist);
  return pairwise_cost(widened(x), widened(y), dist);
}

// A cost tensor and the pairs operator's sets have no such kernels: they are cast to float32.
at::Tensor soft_dtw_cost_autocast(const at::Tensor& D, double gamma, int64_t bandwidth,
                                  const c10::optional<at::Tensor>& x_lengths,
                                  const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                  double itakura_max_slope) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return ops::soft_dtw_cost(widened(D), gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor pairwise_soft_dtw_sqeuclidean_autocast(const at::Tensor& X, const at::Tensor& Y, const at::Tensor& x_index,
                                                  const at::Tensor& y_index, double gamma, int64_t bandwidth,
                                                  const c10::optional<at::Tensor>& x_lengths,
                                                  const c10::optional<at::Tensor>& y_lengths,
                                                  int64_t sakoe_chiba_radius, double itakura_max_slope) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("sdtw::pairwise_soft_dtw_sqeuclidean", "")
                             .typed<decltype(pairwise_soft_dtw_sqeuclidean_autocast)>();
  return op.call(widened(X), widened(Y), x_index, y_index, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                 itakura_max_slope);
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_IMPL(sdtw, AutocastCUDA, m) {
  m.impl("soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::soft_dtw_sqeuclidean_autocast));
  m.impl("pairwise_cost", TORCH_FN(sdtw::ops::detail::pairwise_cost_autocast));
  m.impl("soft_dtw_cost", TORCH_FN(sdtw::ops::detail::soft_dtw_cost_autocast));
  m.impl("pairwise_soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::pairwise_soft_dtw_sqeuclidean_autocast));
}
