// The loss operators sdtw::soft_dtw_sqeuclidean and sdtw::soft_dtw_cost: soft-DTW values with
// their autograd in C++, so that a training step is one dispatcher call forward and one C++ node
// backward (no Python on the hot path). Without a gradient no state is kept: on CUDA the
// values-only kernels run, on the CPU the state is freed on return. Under create_graph=True the
// backward (CPU and CUDA) is built of differentiable pieces, g * E(D) (alignment_autograd.cpp) chained
// through the cost, so it has a gradient of its own.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// create_graph=True: the backward must itself be differentiable.
bool differentiable_backward() { return at::GradMode::is_enabled(); }

// dvalues (B,) or () against a (B, N, M) or (N, M) alignment.
at::Tensor per_pair(const at::Tensor& dvalues) { return dvalues.unsqueeze(-1).unsqueeze(-1); }

// On CUDA the fused backward overwrites the saved state (the softmin weights become E). A second
// backward through the same node (retain_graph=True, gradcheck) therefore recomputes the state
// with the forward first; the first backward, the common case, uses it as it is.
bool state_consumed(AutogradContext* ctx, const at::Tensor& state) {
  if (!state.is_cuda()) return false;
  if (ctx->saved_data.count("consumed") != 0) return true;
  ctx->saved_data["consumed"] = true;
  return false;
}

// What both loss nodes keep for the backward: their tensor inputs (D, or x and y), the state,
// the lengths and the options.
struct Saved {
  variable_list inputs;
  at::Tensor state;
  c10::optional<at::Tensor> x_lengths, y_lengths;
  double gamma;
  int64_t bandwidth;
  int64_t sakoe_chiba_radius;
  double itakura_max_slope;
};

void save(AutogradContext* ctx, variable_list inputs, const at::Tensor& state, double gamma, int64_t bandwidth,
          const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
          int64_t sakoe_chiba_radius, double itakura_max_slope) {
  inputs.insert(inputs.end(), {state, x_lengths.value_or(at::Tensor()), y_lengths.value_or(at::Tensor())});
  ctx->save_for_backward(inputs);
  ctx->saved_data["gamma"] = gamma;
  ctx->saved_data["bandwidth"] = bandwidth;
  ctx->saved_data["sakoe_chiba_radius"] = sakoe_chiba_radius;
  ctx->saved_data["itakura_max_slope"] = itakura_max_slope;
}

Saved saved(AutogradContext* ctx) {
  variable_list all = ctx->get_saved_variables();
  const std::size_t n = all.size() - 3;
  return {variable_list(all.begin(), all.begin() + n), all[n], present(all[n + 1]), present(all[n + 2]),
          ctx->saved_data["gamma"].toDouble(), ctx->saved_data["bandwidth"].toInt(),
          ctx->saved_data["sakoe_chiba_radius"].toInt(), ctx->saved_data["itakura_max_slope"].toDouble()};
}

// The CUDA backward of a cost tensor reads the state alone and writes E apart, leaving the state
// as it was: for a D computed from other tensors it keeps D's shape, dtype and device (one
// element, expanded) instead of D, so the cost tensor is freed after the forward and unfused
// mode's step holds the state and E, not D too. A leaf D, which its owner holds anyway, is kept
// at no cost: the double backward reads it. The CPU backward reads D.
bool keeps_cost(const at::Tensor& D) { return !D.is_cuda() || D.is_leaf(); }

at::Tensor cost_for_backward(const at::Tensor& D) {
  return keeps_cost(D) ? D : at::empty({1}, D.options()).expand(D.sizes());
}

// The cost on which a differentiable backward recomputes E. On CUDA it is pairwise_cost's own, in
// the DP's compute dtype (float32 for float32, half and bfloat16 series), as the fused forward's DP
// has it: a float64 cost would run the recomputation and the Hessian product's forward in float64,
// several times the float32 kernels' time (lab/kernels-log.md). The costs made by a matrix product
// (cosine, negative_dot) stay in float64, since cuBLAS may run a float32 one in TF32 where the fused
// forward's cost is exact. On the CPU it is float64. cost64: the float64 cost, where the caller has it.
at::Tensor dp_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist,
                   const at::Tensor& cost64 = at::Tensor()) {
  const std::string d = canonical_dist(dist);
  const bool by_matrix_product = d == "cosine" || d == "negative_dot";
  if (x.is_cuda() && !by_matrix_product && compute_dtype(x.scalar_type()) != at::kDouble)
    return ops::pairwise_cost(x, y, dist);
  return cost64.defined() ? cost64 : ops::pairwise_cost(x.to(at::kDouble), y.to(at::kDouble), dist);
}

struct CostFunction : public torch::autograd::Function<CostFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& D, double gamma, int64_t bandwidth,
                            const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                            int64_t sakoe_chiba_radius, double itakura_max_slope) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [values, state] =
        ops::cost_forward(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
    save(ctx, {cost_for_backward(D)}, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
         itakura_max_slope);
    ctx->saved_data["cost_kept"] = keeps_cost(D);
    return values;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Saved s = saved(ctx);
    const at::Tensor& D = s.inputs[0];
    if (differentiable_backward()) {
      TORCH_CHECK_NOT_IMPLEMENTED(
          ctx->saved_data["cost_kept"].toBool(),
          "sdtw: double backward (create_graph=True) of the cost-tensor loss on CUDA needs the cost D, which the "
          "loss frees after the forward when D is computed from other tensors; use fused=True for the "
          "squared-Euclidean cost, or pass a leaf cost tensor");
      const at::Tensor E = alignment_of_cost(D, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths, s.sakoe_chiba_radius,
                                             s.itakura_max_slope, s.state);
      return {per_pair(grads[0].to(E.scalar_type())) * E, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor(), at::Tensor()};
    }
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::Tensor E = ops::cost_backward(grads[0], D, s.state, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                      s.sakoe_chiba_radius, s.itakura_max_slope);
    return {E, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct SqEuclideanFunction : public torch::autograd::Function<SqEuclideanFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y, double gamma,
                            int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                            const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                            double itakura_max_slope) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [values, state] =
        ops::sqeuclidean_forward(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
    save(ctx, {x, y}, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
    return values;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Saved s = saved(ctx);
    const at::Tensor &x = s.inputs[0], &y = s.inputs[1];
    if (differentiable_backward()) {
      // The first-order path's float64 arithmetic, in torch ops: g * E(D) through the cost. The CUDA
      // state is the fused forward's (and a first backward overwrites it), so E is recomputed there,
      // on dp_cost; E's own derivative (the Hessian product) is then chained in that cost's dtype.
      const at::Tensor x64 = x.to(at::kDouble), y64 = y.to(at::kDouble);
      const at::Tensor state = x.is_cuda() ? at::Tensor() : s.state;
      const at::Tensor E = alignment_of_cost(dp_cost(x, y, "sqeuclidean"), s.gamma, s.bandwidth, s.x_lengths,
                                             s.y_lengths, s.sakoe_chiba_radius, s.itakura_max_slope, state);
      auto [gx, gy] =
          sqeuclidean_cost_backward_composite(per_pair(grads[0].to(at::kDouble)) * E.to(at::kDouble), x64, y64);
      return {gx.to(x.scalar_type()), gy.to(y.scalar_type()), at::Tensor(), at::Tensor(), at::Tensor(),
              at::Tensor(), at::Tensor(), at::Tensor()};
    }
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    if (state_consumed(ctx, s.state))
      s.state = std::get<1>(ops::sqeuclidean_forward(x, y, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                                     s.sakoe_chiba_radius, s.itakura_max_slope));
    auto [gx, gy] = ops::sqeuclidean_backward(grads[0], x, y, s.state, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                              s.sakoe_chiba_radius, s.itakura_max_slope);
    return {gx, gy, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The CUDA fused mode of a named cost besides sqeuclidean (the kernels' cost policies): as
// SqEuclideanFunction, with the cost's name carried to the backward.
struct NamedCostFunction : public torch::autograd::Function<NamedCostFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y, const std::string& dist,
                            double gamma, int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                            const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                            double itakura_max_slope) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [values, state] =
        ops::fused_forward(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
    save(ctx, {x, y}, state, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
    ctx->saved_data["dist"] = dist;
    return values;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Saved s = saved(ctx);
    const at::Tensor &x = s.inputs[0], &y = s.inputs[1];
    const std::string dist = ctx->saved_data["dist"].toStringRef();
    if (differentiable_backward()) {
      // As the squared-Euclidean node: E on dp_cost, g * E chained in float64 through the float64
      // cost's own graph (a vector-Jacobian product that stays differentiable in E).
      const at::Tensor x64 = x.to(at::kDouble), y64 = y.to(at::kDouble);
      const at::Tensor D = ops::pairwise_cost(x64, y64, dist);
      const at::Tensor E = alignment_of_cost(dp_cost(x, y, dist, D), s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                             s.sakoe_chiba_radius, s.itakura_max_slope, at::Tensor());
      variable_list wanted, out(9);
      for (const at::Tensor& t : {x, y})
        if (t.requires_grad()) wanted.push_back(t);
      const variable_list g =
          torch::autograd::grad({D}, wanted, {per_pair(grads[0].to(at::kDouble)) * E.to(at::kDouble)},
                                /*retain_graph=*/true, /*create_graph=*/true);
      std::size_t next = 0;
      for (std::size_t k = 0; k < 2; ++k)
        if (s.inputs[k].requires_grad()) out[k] = g[next++].to(s.inputs[k].scalar_type());
      return out;
    }
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    if (state_consumed(ctx, s.state))
      s.state = std::get<1>(ops::fused_forward(x, y, dist, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                               s.sakoe_chiba_radius, s.itakura_max_slope));
    auto [gx, gy] = ops::fused_backward(grads[0], x, y, dist, s.state, s.gamma, s.bandwidth, s.x_lengths, s.y_lengths,
                                        s.sakoe_chiba_radius, s.itakura_max_slope);
    variable_list out(9);
    out[0] = gx;
    out[1] = gy;
    return out;
  }
};

at::Tensor soft_dtw_cost_autograd(const at::Tensor& D, double gamma, int64_t bandwidth,
                                  const c10::optional<at::Tensor>& x_lengths,
                                  const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                  double itakura_max_slope) {
  if (gradient_wanted({D}))
    return CostFunction::apply(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
  // No gradient (torch.no_grad(), inputs that need none): the values alone, no state kept.
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return ops::soft_dtw_cost(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

at::Tensor soft_dtw_sqeuclidean_autograd(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                         const c10::optional<at::Tensor>& x_lengths,
                                         const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                         double itakura_max_slope) {
  if (gradient_wanted({x, y}))
    return SqEuclideanFunction::apply(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                                      itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return ops::soft_dtw_sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                                   itakura_max_slope);
}

}  // namespace

at::Tensor soft_dtw_named_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist, double gamma,
                               int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                               const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                               double itakura_max_slope) {
  if (dist == "sqeuclidean")
    return ops::soft_dtw_sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                                     itakura_max_slope);
  if (!x.is_cuda())
    return ops::soft_dtw_cost(ops::pairwise_cost(x, y, dist), gamma, bandwidth, x_lengths, y_lengths,
                              sakoe_chiba_radius, itakura_max_slope);
  if (gradient_wanted({x, y}))
    return NamedCostFunction::apply(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius,
                                    itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return ops::fused_values(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope);
}

namespace {

// Below autograd on the CPU (no gradient wanted, or inside a traced graph): the values alone;
// CUDA has values-only kernels (ops_cuda.cpp).
at::Tensor soft_dtw_cost_values(const at::Tensor& D, double gamma, int64_t bandwidth,
                                const c10::optional<at::Tensor>& x_lengths,
                                const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                double itakura_max_slope) {
  return std::get<0>(
      ops::cost_forward(D, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope));
}

at::Tensor soft_dtw_sqeuclidean_values(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                       const c10::optional<at::Tensor>& x_lengths,
                                       const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                       double itakura_max_slope) {
  return std::get<0>(
      ops::sqeuclidean_forward(x, y, gamma, bandwidth, x_lengths, y_lengths, sakoe_chiba_radius, itakura_max_slope));
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_IMPL(sdtw, Autograd, m) {
  m.impl("soft_dtw_cost", TORCH_FN(sdtw::ops::detail::soft_dtw_cost_autograd));
  m.impl("soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::soft_dtw_sqeuclidean_autograd));
  // The low-level operators have no gradient of their own: an error if one is asked of them, and
  // every backend (meta tensors included) reaches its kernel. alignment_backward is the Hessian-vector
  // product: third order is not implemented.
  for (const char* name : {"cost_forward", "cost_backward", "sqeuclidean_forward", "sqeuclidean_backward",
                           "fused_forward", "fused_backward", "fused_values", "pairwise_soft_dtw_sqeuclidean",
                           "sqeuclidean_cost_backward", "alignment_backward"})
    m.impl(name, torch::autograd::autogradNotImplementedFallback());
}

TORCH_LIBRARY_IMPL(sdtw, CPU, m) {
  m.impl("soft_dtw_cost", TORCH_FN(sdtw::ops::detail::soft_dtw_cost_values));
  m.impl("soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::soft_dtw_sqeuclidean_values));
}
