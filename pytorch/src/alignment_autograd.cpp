// The expected alignment E(D) = d sdtw / d D as a differentiable function of the cost: its backward
// is the Hessian-vector product sdtw::alignment_backward. The loss nodes (autograd.cpp) build their
// gradient g * E(D) on it under create_graph=True, and sdtw::alignment_from_cost returns it.
#include <torch/autograd.h>

#include <vector>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// E from the forward's state of D (on the CPU the state is E itself).
at::Tensor alignment_values(const at::Tensor& D, double gamma, int64_t bandwidth,
                            const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                            int64_t sakoe_chiba_radius, double itakura_max_slope, const at::Tensor& state) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  std::vector<int64_t> per_pair;  // the values' shape: (B,), or () unbatched
  if (D.dim() == 3) per_pair.push_back(D.size(0));
  const at::Tensor ones = at::ones(per_pair, D.options().dtype(compute_dtype(D.scalar_type())));  // no cast kernel
  return ops::cost_backward(ones, D, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                            itakura_max_slope);
}

struct AlignmentFunction : public torch::autograd::Function<AlignmentFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& D, double gamma, int64_t bandwidth,
                            const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                            int64_t sakoe_chiba_radius, double itakura_max_slope, const at::Tensor& state) {
    ctx->save_for_backward({D, x_lengths.value_or(at::Tensor()), y_lengths.value_or(at::Tensor())});
    ctx->saved_data["gamma"] = gamma;
    ctx->saved_data["bandwidth"] = bandwidth;
    ctx->saved_data["sakoe_chiba_radius"] = sakoe_chiba_radius;
    ctx->saved_data["itakura_max_slope"] = itakura_max_slope;
    return alignment_values(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope, state);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& D = saved[0];
    const double gamma = ctx->saved_data["gamma"].toDouble();
    // At gamma = 0, E is the 0/1 path, piecewise constant in D: its derivative is 0 wherever it
    // exists (as torch differentiates sign or argmax), on every device.
    if (gamma == 0.0)
      return {at::zeros_like(D), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor()};
    const at::Tensor grad_D = ops::alignment_backward(
        grads[0], D, gamma, ctx->saved_data["bandwidth"].toInt(), present(saved[1]), present(saved[2]),
        ctx->saved_data["sakoe_chiba_radius"].toInt(), ctx->saved_data["itakura_max_slope"].toDouble());
    return {grad_D, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor alignment_of_cost(const at::Tensor& D, double gamma, int64_t bandwidth,
                             const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                             int64_t sakoe_chiba_radius, double itakura_max_slope, at::Tensor state) {
  if (!state.defined()) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    state = std::get<1>(
        ops::cost_forward(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope));
  }
  if (at::GradMode::is_enabled() && D.requires_grad())
    return AlignmentFunction::apply(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope,
                                    state);
  return alignment_values(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope, state);
}

}  // namespace sdtw::ops::detail
