// Autocast (CUDA) for the squared-Euclidean loss and the pairwise cost. The loss runs in float32,
// as torch's own losses do under autocast; x and y of one dtype (bfloat16 or float16 leaves, or a
// model's output next to a target of its dtype) reach the kernels as they are, since they read
// those types and compute in float32, so no cast kernels run forward or backward. x and y of
// different dtypes are cast to float32 first, as autocast's float32 policy does.
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
                                         const c10::optional<at::Tensor>& y_lengths) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  if (x.scalar_type() == y.scalar_type()) return ops::soft_dtw_sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths);
  return ops::soft_dtw_sqeuclidean(widened(x), widened(y), gamma, bandwidth, x_lengths, y_lengths);
}

at::Tensor pairwise_cost_autocast(const at::Tensor& x, const at::Tensor& y, c10::string_view dist) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  if (x.scalar_type() == y.scalar_type()) return pairwise_cost(x, y, dist);
  return pairwise_cost(widened(x), widened(y), dist);
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_IMPL(sdtw, AutocastCUDA, m) {
  m.impl("soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::soft_dtw_sqeuclidean_autocast));
  m.impl("pairwise_cost", TORCH_FN(sdtw::ops::detail::pairwise_cost_autocast));
}
