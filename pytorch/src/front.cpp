// The C++ front: dispatcher wrappers for the operators, and the sdtw::nn functions and module,
// which hand their options to the front's operators (loss.cpp) as they are.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>

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
                                                const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<decltype(detail::cost_forward_cpu)>("sdtw::cost_forward");
  return op.call(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor cost_backward(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                         int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<decltype(detail::cost_backward_cpu)>("sdtw::cost_backward");
  return op.call(dvalues, D, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                       int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                                                       const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<decltype(detail::sqeuclidean_forward_cpu)>("sdtw::sqeuclidean_forward");
  return op.call(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward(const at::Tensor& dvalues, const at::Tensor& x,
                                                        const at::Tensor& y, const at::Tensor& state, double gamma,
                                                        int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                                                        const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<decltype(detail::sqeuclidean_backward_cpu)>("sdtw::sqeuclidean_backward");
  return op.call(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

std::tuple<at::Tensor, at::Tensor> fused_forward(const at::Tensor& x, const at::Tensor& y, const std::string& dist,
                                                 double gamma, int64_t bandwidth,
                                                 const c10::optional<at::Tensor>& x_lengths,
                                                 const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                                 double itakura_max_slope) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, c10::string_view, double, int64_t, const c10::optional<at::Tensor>&,
      const c10::optional<at::Tensor>&, int64_t, double)>("sdtw::fused_forward");
  return op.call(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor fused_values(const at::Tensor& x, const at::Tensor& y, const std::string& dist, double gamma,
                        int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                        const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                        double itakura_max_slope) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view, double, int64_t,
                        const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, int64_t, double)>(
          "sdtw::fused_values");
  return op.call(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

std::tuple<at::Tensor, at::Tensor> fused_backward(const at::Tensor& dvalues, const at::Tensor& x, const at::Tensor& y,
                                                  const std::string& dist, const at::Tensor& state, double gamma,
                                                  int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                                                  const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                                  double itakura_max_slope) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, const at::Tensor&, c10::string_view, const at::Tensor&, double, int64_t,
      const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, int64_t, double)>("sdtw::fused_backward");
  return op.call(dvalues, x, y, dist, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                 itakura_max_slope);
}

at::Tensor alignment_backward(const at::Tensor& G, const at::Tensor& D, double gamma, int64_t bandwidth,
                              const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<decltype(alignment_backward)>("sdtw::alignment_backward");
  return op.call(G, D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor soft_dtw_cost(const at::Tensor& D, double gamma, int64_t bandwidth,
                         const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op = handle<at::Tensor(const at::Tensor&, double, int64_t, const c10::optional<at::Tensor>&,
                                           const c10::optional<at::Tensor>&, int64_t, double)>("sdtw::soft_dtw_cost");
  return op.call(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor soft_dtw_sqeuclidean(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                const c10::optional<at::Tensor>& x_lengths,
                                const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const at::Tensor&, double, int64_t, const c10::optional<at::Tensor>&,
                        const c10::optional<at::Tensor>&, int64_t, double)>("sdtw::soft_dtw_sqeuclidean");
  return op.call(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

// Through the dispatcher, as the Python front calls it: under autocast its rule (autocast.cpp) runs.
at::Tensor pairwise_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist) {
  static const auto op = handle<at::Tensor(const at::Tensor&, const at::Tensor&, c10::string_view)>("sdtw::pairwise_cost");
  return op.call(x, y, c10::string_view(dist.data(), dist.size()));
}

at::Tensor soft_dtw_loss(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths, double gamma, c10::optional<double> bandwidth,
                         bool normalize, const std::string& dist, c10::optional<bool> fused,
                         const std::string& reduction, bool check_inputs, const c10::optional<std::string>& global_constraint,
    c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope, double warp, bool subsequence,
    const std::string& memory) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                        const c10::optional<at::Tensor>&, double, c10::optional<double>, bool, c10::string_view,
                        c10::optional<bool>, c10::string_view, bool, c10::optional<c10::string_view>, c10::optional<int64_t>,
                        c10::optional<double>, double, bool, c10::string_view)>("sdtw::soft_dtw_loss");
  return op.call(x, y, x_lengths, y_lengths, gamma, bandwidth, normalize, dist, fused, reduction, check_inputs, detail::view(global_constraint), sakoe_chiba_radius,
                 itakura_max_slope, warp, subsequence, memory);
}

at::Tensor soft_dtw_cost_loss(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                              const c10::optional<at::Tensor>& y_lengths, double gamma,
                              c10::optional<double> bandwidth, const std::string& reduction,
                              const c10::optional<at::Tensor>& D_xx, const c10::optional<at::Tensor>& D_yy,
                              bool check_inputs, const c10::optional<std::string>& global_constraint,
    c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope, double warp, bool subsequence,
    const std::string& memory) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, double,
                        c10::optional<double>, c10::string_view, const c10::optional<at::Tensor>&,
                        const c10::optional<at::Tensor>&, bool, c10::optional<c10::string_view>, c10::optional<int64_t>,
                        c10::optional<double>, double, bool, c10::string_view)>("sdtw::soft_dtw_cost_loss");
  return op.call(D, x_lengths, y_lengths, gamma, bandwidth, reduction, D_xx, D_yy, check_inputs, detail::view(global_constraint), sakoe_chiba_radius,
                 itakura_max_slope, warp, subsequence, memory);
}

at::Tensor alignment(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                     const c10::optional<at::Tensor>& y_lengths, double gamma, c10::optional<double> bandwidth,
                     const std::string& dist, bool check_inputs, const c10::optional<std::string>& global_constraint,
    c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                        const c10::optional<at::Tensor>&, double, c10::optional<double>, c10::string_view, bool, c10::optional<c10::string_view>, c10::optional<int64_t>, c10::optional<double>)>(
          "sdtw::alignment");
  return op.call(x, y, x_lengths, y_lengths, gamma, bandwidth, dist, check_inputs, detail::view(global_constraint), sakoe_chiba_radius,
                 itakura_max_slope);
}

at::Tensor alignment_from_cost(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                               const c10::optional<at::Tensor>& y_lengths, double gamma,
                               c10::optional<double> bandwidth, bool check_inputs, const c10::optional<std::string>& global_constraint,
    c10::optional<int64_t> sakoe_chiba_radius, c10::optional<double> itakura_max_slope) {
  static const auto op =
      handle<at::Tensor(const at::Tensor&, const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, double,
                        c10::optional<double>, bool, c10::optional<c10::string_view>, c10::optional<int64_t>, c10::optional<double>)>("sdtw::alignment_from_cost");
  return op.call(D, x_lengths, y_lengths, gamma, bandwidth, check_inputs, detail::view(global_constraint), sakoe_chiba_radius,
                 itakura_max_slope);
}

std::tuple<at::Tensor, at::Tensor> subsequence_end(const at::Tensor& x, const at::Tensor& y,
                                                   const c10::optional<at::Tensor>& x_lengths,
                                                   const c10::optional<at::Tensor>& y_lengths, double gamma,
                                                   const std::string& dist, double warp) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, double,
      c10::string_view, double)>("sdtw::subsequence_end");
  return op.call(x, y, x_lengths, y_lengths, gamma, dist, warp);
}

std::tuple<at::Tensor, at::Tensor> subsequence_end_from_cost(const at::Tensor& D,
                                                             const c10::optional<at::Tensor>& x_lengths,
                                                             const c10::optional<at::Tensor>& y_lengths, double gamma,
                                                             double warp) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const c10::optional<at::Tensor>&, const c10::optional<at::Tensor>&, double, double)>(
      "sdtw::subsequence_end_from_cost");
  return op.call(D, x_lengths, y_lengths, gamma, warp);
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

c10::optional<bool> optional(const std::optional<bool>& v) { return v ? c10::optional<bool>(*v) : c10::nullopt; }

c10::optional<double> band(const std::optional<int64_t>& bandwidth) {
  return bandwidth ? c10::optional<double>(double(*bandwidth)) : c10::nullopt;
}

c10::optional<std::string> constraint(const SoftDtwOptions& o) {
  return o.global_constraint ? c10::optional<std::string>(*o.global_constraint) : c10::nullopt;
}
c10::optional<int64_t> radius(const SoftDtwOptions& o) {
  return o.sakoe_chiba_radius ? c10::optional<int64_t>(*o.sakoe_chiba_radius) : c10::nullopt;
}
c10::optional<double> slope(const SoftDtwOptions& o) {
  return o.itakura_max_slope ? c10::optional<double>(*o.itakura_max_slope) : c10::nullopt;
}

c10::optional<at::Tensor> present(const std::optional<at::Tensor>& t) {
  return t ? ops::detail::present(*t) : c10::nullopt;
}

}  // namespace

at::Tensor soft_dtw(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& o,
                    const std::optional<at::Tensor>& x_lengths, const std::optional<at::Tensor>& y_lengths) {
  return ops::soft_dtw_loss(x, y, present(x_lengths), present(y_lengths), o.gamma, band(o.bandwidth), o.normalize,
                            o.dist, optional(o.fused), o.reduction, o.check_inputs, constraint(o), radius(o), slope(o),
                            o.warp, o.subsequence, o.memory);
}

at::Tensor soft_dtw_cost(const at::Tensor& D, const SoftDtwOptions& o, const std::optional<at::Tensor>& x_lengths,
                         const std::optional<at::Tensor>& y_lengths) {
  TORCH_CHECK_VALUE(!o.normalize,
                    "normalize=true needs x and y (sdtw(x, x) and sdtw(y, y)): use soft_dtw, not soft_dtw_cost");
  return ops::soft_dtw_cost_loss(D, present(x_lengths), present(y_lengths), o.gamma, band(o.bandwidth),
                                 o.reduction, c10::nullopt, c10::nullopt, o.check_inputs, constraint(o), radius(o),
                                 slope(o), o.warp, o.subsequence, o.memory);
}

at::Tensor alignment_from_cost(const at::Tensor& D, const SoftDtwOptions& o,
                               const std::optional<at::Tensor>& x_lengths,
                               const std::optional<at::Tensor>& y_lengths) {
  return ops::alignment_from_cost(D, present(x_lengths), present(y_lengths), o.gamma, band(o.bandwidth),
                                  o.check_inputs, constraint(o), radius(o), slope(o));
}

at::Tensor alignment(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& o,
                     const std::optional<at::Tensor>& x_lengths, const std::optional<at::Tensor>& y_lengths) {
  return ops::alignment(x, y, present(x_lengths), present(y_lengths), o.gamma, band(o.bandwidth), o.dist,
                        o.check_inputs, constraint(o), radius(o), slope(o));
}

std::tuple<at::Tensor, at::Tensor> subsequence_end(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& o,
                                                   const std::optional<at::Tensor>& x_lengths,
                                                   const std::optional<at::Tensor>& y_lengths) {
  // The band and constraint are refused as the loss refuses them with subsequence.
  ops::detail::resolve_options(o.gamma, band(o.bandwidth), false, o.dist, c10::nullopt, "none",
                               ops::detail::view(constraint(o)), radius(o), slope(o), o.warp, true);
  return ops::subsequence_end(x, y, present(x_lengths), present(y_lengths), o.gamma, o.dist, o.warp);
}

SoftDTWImpl::SoftDTWImpl(SoftDtwOptions opts) : options(std::move(opts)) {
  ops::detail::resolve_options(options.gamma, band(options.bandwidth), options.normalize, options.dist,
                               optional(options.fused), options.reduction, ops::detail::view(constraint(options)),
                               radius(options), slope(options), options.warp, options.subsequence);
}

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
  if (options.global_constraint) stream << ", global_constraint=" << *options.global_constraint;
  if (options.sakoe_chiba_radius) stream << ", sakoe_chiba_radius=" << *options.sakoe_chiba_radius;
  if (options.itakura_max_slope) stream << ", itakura_max_slope=" << *options.itakura_max_slope;
  if (options.warp != 0.0) stream << ", warp=" << options.warp;
  if (options.subsequence) stream << ", subsequence=true";
  stream << ", normalize=" << (options.normalize ? "true" : "false") << ", dist=" << options.dist << ", fused=";
  if (options.fused)
    stream << (*options.fused ? "true" : "false");
  else
    stream << "None";
  stream << ", reduction=" << options.reduction << ", check_inputs=" << (options.check_inputs ? "true" : "false")
         << ")";
}

}  // namespace sdtw::nn
