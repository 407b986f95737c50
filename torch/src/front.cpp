// The C++ front: dispatcher wrappers for the operators, autograd functions over them, and the
// sdtw::nn functions and module.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ostream>
#include <utility>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"
#include "sdtw/torch/soft_dtw.hpp"

namespace sdtw::ops {
namespace {

template <typename Signature>
c10::TypedOperatorHandle<Signature> handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> cost_forward(const at::Tensor& D, double gamma, int64_t bandwidth,
                                                const c10::optional<at::Tensor>& x_lengths,
                                                const c10::optional<at::Tensor>& y_lengths) {
  static const auto op = handle<decltype(detail::cost_forward_cpu)>("sdtw::cost_forward");
  return op.call(D, gamma, bandwidth, x_lengths, y_lengths);
}

at::Tensor cost_backward(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                         int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths) {
  static const auto op = handle<decltype(detail::cost_backward_cpu)>("sdtw::cost_backward");
  return op.call(dvalues, D, state, gamma, bandwidth, x_lengths, y_lengths);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                       int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                                                       const c10::optional<at::Tensor>& y_lengths) {
  static const auto op = handle<decltype(detail::sqeuclidean_forward_cpu)>("sdtw::sqeuclidean_forward");
  return op.call(x, y, gamma, bandwidth, x_lengths, y_lengths);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward(const at::Tensor& dvalues, const at::Tensor& x,
                                                        const at::Tensor& y, const at::Tensor& state, double gamma,
                                                        int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                                                        const c10::optional<at::Tensor>& y_lengths) {
  static const auto op = handle<decltype(detail::sqeuclidean_backward_cpu)>("sdtw::sqeuclidean_backward");
  return op.call(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths);
}

at::Tensor soft_dtw_cost(const at::Tensor& D, double gamma, int64_t bandwidth,
                         const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths) {
  static const auto op = handle<at::Tensor(const at::Tensor&, double, int64_t, const c10::optional<at::Tensor>&,
                                           const c10::optional<at::Tensor>&)>("sdtw::soft_dtw_cost");
  return op.call(D, gamma, bandwidth, x_lengths, y_lengths);
}

at::Tensor soft_dtw_sqeuclidean(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                const c10::optional<at::Tensor>& x_lengths,
                                const c10::optional<at::Tensor>& y_lengths) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, const c10::optional<at::Tensor>&,
                        const c10::optional<at::Tensor>&)>("sdtw::soft_dtw_sqeuclidean");
  return op.call(x, y, gamma, bandwidth, x_lengths, y_lengths);
}

// Through the dispatcher, as the Python front calls it: under autocast its rule (autocast.cpp) runs.
at::Tensor pairwise_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist) {
  static const auto op = handle<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view)>("sdtw::pairwise_cost");
  return op.call(x, y, c10::string_view(dist.data(), dist.size()));
}

bool built_with_cuda() {
#ifdef SDTW_TORCH_WITH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace sdtw::ops

namespace sdtw::nn {
namespace {

c10::optional<at::Tensor> present(const std::optional<at::Tensor>& t) {
  return t ? ops::detail::present(*t) : c10::nullopt;
}

std::string canonical_dist(const std::string& dist) {
  std::string d = dist;
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (d == "sq_euclidean" || d == "squared_euclidean") return "sqeuclidean";
  if (d == "manhattan" || d == "cityblock") return "l1";
  return d;
}

void check_gamma_reduction(const SoftDtwOptions& o) {
  ops::detail::check_gamma(o.gamma);
  TORCH_CHECK_VALUE(o.reduction == "none" || o.reduction == "mean" || o.reduction == "sum",
                    "reduction must be 'none', 'mean' or 'sum' (got '", o.reduction, "')");
}

void check_options(const SoftDtwOptions& o) {
  check_gamma_reduction(o);
  const std::string d = canonical_dist(o.dist);
  TORCH_CHECK_VALUE(d == "sqeuclidean" || d == "euclidean" || d == "cosine" || d == "l1",
                    "dist must be 'sqeuclidean' (or 'sq_euclidean', 'squared_euclidean'), 'euclidean', 'cosine' or "
                    "'l1' (or 'manhattan', 'cityblock') (got '",
                    o.dist, "')");
  TORCH_CHECK_VALUE(!(o.fused.value_or(false) && d != "sqeuclidean"),
                    "fused=true requires dist='sqeuclidean' (got dist='", o.dist, "')");
}

// Absent or <= 0: no band (-1 for the operators).
int64_t band(const SoftDtwOptions& o) { return o.bandwidth && *o.bandwidth > 0 ? *o.bandwidth : -1; }

at::Tensor reduce(const at::Tensor& values, const std::string& reduction) {
  if (reduction == "mean") return values.mean();
  if (reduction == "sum") return values.sum();
  return values;
}

}  // namespace

at::Tensor soft_dtw(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& options,
                    const std::optional<at::Tensor>& x_lengths, const std::optional<at::Tensor>& y_lengths) {
  check_options(options);
  const std::string dist = canonical_dist(options.dist);
  const bool fused = options.fused.value_or(dist == "sqeuclidean");
  const int64_t bandwidth = band(options);
  const auto pair = [&](const at::Tensor& a, const at::Tensor& b, const c10::optional<at::Tensor>& la,
                        const c10::optional<at::Tensor>& lb) {
    if (fused) return ops::soft_dtw_sqeuclidean(a, b, options.gamma, bandwidth, la, lb);
    return ops::soft_dtw_cost(ops::pairwise_cost(a, b, dist), options.gamma, bandwidth, la, lb);
  };
  const c10::optional<at::Tensor> xl = present(x_lengths), yl = present(y_lengths);
  at::Tensor values = pair(x, y, xl, yl);
  if (options.normalize) values = values - 0.5 * (pair(x, x, xl, xl) + pair(y, y, yl, yl));
  return reduce(values, options.reduction);
}

at::Tensor soft_dtw_cost(const at::Tensor& D, const SoftDtwOptions& options,
                         const std::optional<at::Tensor>& x_lengths, const std::optional<at::Tensor>& y_lengths) {
  check_gamma_reduction(options);
  TORCH_CHECK_VALUE(!options.normalize,
                    "normalize=true needs x and y (sdtw(x, x) and sdtw(y, y)): use soft_dtw, not soft_dtw_cost");
  return reduce(ops::soft_dtw_cost(D, options.gamma, band(options), present(x_lengths), present(y_lengths)),
                options.reduction);
}

at::Tensor alignment_from_cost(const at::Tensor& D, const SoftDtwOptions& options,
                               const std::optional<at::Tensor>& x_lengths,
                               const std::optional<at::Tensor>& y_lengths) {
  check_gamma_reduction(options);
  const at::NoGradGuard no_grad;
  const c10::optional<at::Tensor> xl = present(x_lengths), yl = present(y_lengths);
  auto [values, state] = ops::cost_forward(D, options.gamma, band(options), xl, yl);
  return ops::cost_backward(at::ones_like(values), D, state, options.gamma, band(options), xl, yl);
}

at::Tensor alignment(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& options,
                     const std::optional<at::Tensor>& x_lengths, const std::optional<at::Tensor>& y_lengths) {
  check_options(options);
  const at::NoGradGuard no_grad;
  return alignment_from_cost(ops::pairwise_cost(x, y, canonical_dist(options.dist)), options, x_lengths,
                             y_lengths);
}

SoftDTWImpl::SoftDTWImpl(SoftDtwOptions opts) : options(std::move(opts)) { check_options(options); }

at::Tensor SoftDTWImpl::forward(const at::Tensor& x, const at::Tensor& y, const std::optional<at::Tensor>& x_lengths,
                                const std::optional<at::Tensor>& y_lengths) {
  return soft_dtw(x, y, options, x_lengths, y_lengths);
}

void SoftDTWImpl::pretty_print(std::ostream& stream) const {
  stream << "sdtw::nn::SoftDTW(gamma=" << options.gamma << ", bandwidth=";
  if (options.bandwidth)
    stream << *options.bandwidth;
  else
    stream << "None";
  stream << ", normalize=" << (options.normalize ? "true" : "false") << ", dist=" << options.dist << ", fused=";
  if (options.fused)
    stream << (*options.fused ? "true" : "false");
  else
    stream << "None";
  stream << ", reduction=" << options.reduction << ")";
}

}  // namespace sdtw::nn
