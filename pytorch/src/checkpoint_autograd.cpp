// The loss in the checkpointed memory mode (memory.hpp): the low-level operators
//   sqeuclidean_checkpoint_forward(x, y, gamma, bandwidth, x_lengths, y_lengths, band_rows) -> (values, state)
//   sqeuclidean_checkpoint_backward(dvalues, x, y, state, gamma, ...) -> (grad_x, grad_y)
//   cost_checkpoint_forward(D, gamma, ...) -> (values, state), cost_checkpoint_backward(dvalues, D, state, ...) -> E
// (CUDA only, ops_checkpoint_cuda.inc: the CPU keeps its own path), the autograd nodes that call
// them, and the entry points through which the loss operators (loss.cpp) honour `memory`.
// Unlike the full state, the checkpointed state is not consumed by a backward (it keeps R's rows
// and recomputes the rest), so a second backward needs no second forward.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include "memory.hpp"
#include "ops_internal.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using Lengths = c10::optional<at::Tensor>;

template <typename Signature>
c10::TypedOperatorHandle<Signature> handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward_op(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                          int64_t bandwidth, const Lengths& xl, const Lengths& yl,
                                                          int64_t band_rows) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(
      const at::Tensor&, const at::Tensor&, double, int64_t, const Lengths&, const Lengths&, int64_t)>(
      "sdtw::sqeuclidean_checkpoint_forward");
  return op.call(x, y, gamma, bandwidth, xl, yl, band_rows);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward_op(const at::Tensor& dvalues, const at::Tensor& x,
                                                           const at::Tensor& y, const at::Tensor& state, double gamma,
                                                           int64_t bandwidth, const Lengths& xl, const Lengths& yl,
                                                           int64_t band_rows) {
  static const auto op =
      handle<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                const at::Tensor&, double, int64_t, const Lengths&, const Lengths&,
                                                int64_t)>("sdtw::sqeuclidean_checkpoint_backward");
  return op.call(dvalues, x, y, state, gamma, bandwidth, xl, yl, band_rows);
}

std::tuple<at::Tensor, at::Tensor> cost_forward_op(const at::Tensor& D, double gamma, int64_t bandwidth,
                                                   const Lengths& xl, const Lengths& yl, int64_t band_rows) {
  static const auto op = handle<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, double, int64_t, const Lengths&,
                                                                   const Lengths&, int64_t)>(
      "sdtw::cost_checkpoint_forward");
  return op.call(D, gamma, bandwidth, xl, yl, band_rows);
}

at::Tensor cost_backward_op(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                            int64_t bandwidth, const Lengths& xl, const Lengths& yl, int64_t band_rows) {
  static const auto op = handle<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t,
                                           const Lengths&, const Lengths&, int64_t)>("sdtw::cost_checkpoint_backward");
  return op.call(dvalues, D, state, gamma, bandwidth, xl, yl, band_rows);
}

void refuse_double_backward() {
  TORCH_CHECK_NOT_IMPLEMENTED(!at::GradMode::is_enabled(),
                              "sdtw: memory='checkpoint' has no double backward (create_graph=True): use memory='full'");
}

// Tensors saved after the inputs: the state and the lengths (undefined when absent).
void save(AutogradContext* ctx, variable_list inputs, const at::Tensor& state, const Lengths& xl, const Lengths& yl,
          double gamma, int64_t bandwidth, int64_t band_rows) {
  inputs.insert(inputs.end(), {state, xl.value_or(at::Tensor()), yl.value_or(at::Tensor())});
  ctx->save_for_backward(inputs);
  ctx->saved_data["gamma"] = gamma;
  ctx->saved_data["bandwidth"] = bandwidth;
  ctx->saved_data["band_rows"] = band_rows;
}

struct CheckpointSqEuclidean : public torch::autograd::Function<CheckpointSqEuclidean> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y, double gamma,
                            int64_t bandwidth, const Lengths& xl, const Lengths& yl, int64_t band_rows) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [values, state] = sqeuclidean_forward_op(x, y, gamma, bandwidth, xl, yl, band_rows);
    save(ctx, {x, y}, state, xl, yl, gamma, bandwidth, band_rows);
    return values;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward();
    const variable_list s = ctx->get_saved_variables();
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [gx, gy] = sqeuclidean_backward_op(grads[0], s[0], s[1], s[2], ctx->saved_data["gamma"].toDouble(),
                                            ctx->saved_data["bandwidth"].toInt(), present(s[3]), present(s[4]),
                                            ctx->saved_data["band_rows"].toInt());
    return {gx, gy, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct CheckpointCost : public torch::autograd::Function<CheckpointCost> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& D, double gamma, int64_t bandwidth,
                            const Lengths& xl, const Lengths& yl, int64_t band_rows) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    auto [values, state] = cost_forward_op(D, gamma, bandwidth, xl, yl, band_rows);
    save(ctx, {D}, state, xl, yl, gamma, bandwidth, band_rows);
    return values;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    refuse_double_backward();
    const variable_list s = ctx->get_saved_variables();
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::Tensor E = cost_backward_op(grads[0], s[0], s[1], ctx->saved_data["gamma"].toDouble(),
                                    ctx->saved_data["bandwidth"].toInt(), present(s[2]), present(s[3]),
                                    ctx->saved_data["band_rows"].toInt());
    return {E, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The band of rows when `memory` picks the checkpointed mode for a CUDA problem of these sizes,
// else 0 (the full state, or the CPU's path). Sizes the operators would reject go to the full
// path, whose checks name them.
int64_t checkpoint_band_rows(const at::Tensor& a, int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth,
                             bool constrained, const std::string& memory) {
  if (memory == "full" || !a.is_cuda() || batch < 1 || n < 1 || m < 1) return 0;
  if (constrained) {
    TORCH_CHECK_VALUE(memory != "checkpoint",
                      "memory='checkpoint' takes a bandwidth or no constraint, not global_constraint");
    return 0;
  }
  const bool is_double = a.scalar_type() == at::kDouble;
  MemoryNeeds needs;
  needs.batch = batch;
  needs.n = n;
  needs.m = m;
  // A problem the kernels reject (a band too narrow for n and m) takes the full path, which names it.
  needs.full_bytes = -1;
  try {
    needs.full_bytes = cuda_state_bytes(batch, n, m, dim, bandwidth, is_double);
  } catch (const std::exception&) {
  }
  if (needs.full_bytes < 0) return 0;
  needs.checkpoint_bytes = [&](int64_t rows) {
    return cuda_checkpoint_bytes(batch, n, m, dim, bandwidth, is_double, rows);
  };
  return plan_memory(memory, needs, cuda_free_bytes(a.device())).band_rows;
}

}  // namespace

at::Tensor soft_dtw_sqeuclidean_memory(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                       const Lengths& xl, const Lengths& yl, int64_t sakoe_chiba_radius,
                                       double itakura_max_slope, const std::string& memory) {
  const bool constrained = sakoe_chiba_radius >= 0 || itakura_max_slope > 0.0;
  const bool shaped = x.dim() >= 2 && y.dim() >= 2;
  const int64_t rows = shaped ? checkpoint_band_rows(x, x.dim() == 3 ? x.size(0) : 1, x.size(-2), y.size(-2),
                                                     x.size(-1), bandwidth, constrained, memory)
                              : 0;
  if (rows == 0)
    return ops::soft_dtw_sqeuclidean(x, y, gamma, bandwidth, xl, yl, sakoe_chiba_radius, itakura_max_slope);
  if (gradient_wanted({x, y})) return CheckpointSqEuclidean::apply(x, y, gamma, bandwidth, xl, yl, rows);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return std::get<0>(sqeuclidean_forward_op(x, y, gamma, bandwidth, xl, yl, rows));
}

at::Tensor soft_dtw_cost_memory(const at::Tensor& D, double gamma, int64_t bandwidth, const Lengths& xl,
                                const Lengths& yl, int64_t sakoe_chiba_radius, double itakura_max_slope,
                                const std::string& memory) {
  const bool constrained = sakoe_chiba_radius >= 0 || itakura_max_slope > 0.0;
  // The cost mode's E is (B, N, M) in any mode: only the state is saved.
  const int64_t rows = D.dim() >= 2 ? checkpoint_band_rows(D, D.dim() == 3 ? D.size(0) : 1, D.size(-2), D.size(-1), 1,
                                                           bandwidth, constrained, memory)
                                    : 0;
  if (rows == 0) return ops::soft_dtw_cost(D, gamma, bandwidth, xl, yl, sakoe_chiba_radius, itakura_max_slope);
  if (gradient_wanted({D})) return CheckpointCost::apply(D, gamma, bandwidth, xl, yl, rows);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  return std::get<0>(cost_forward_op(D, gamma, bandwidth, xl, yl, rows));
}

#ifndef SDTW_TORCH_WITH_CUDA
int64_t cuda_checkpoint_bytes(int64_t, int64_t, int64_t, int64_t, int64_t, bool, int64_t) { return -1; }
int64_t cuda_free_bytes(const at::Device&) { return -1; }
#endif

}  // namespace sdtw::ops::detail

// For sdtw-bench (harness/src/torch/device_info.cpp), which links this library without its headers:
// the checkpointed workspace at the band plan_memory picks with free_bytes free, or the least any
// band needs when none fits; -1 without CUDA or for a problem the kernels reject.
extern "C" int64_t sdtw_torch_cuda_checkpoint_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim,
                                                          int64_t bandwidth, int is_double, double free_bytes) {
  using namespace sdtw::ops::detail;
  MemoryNeeds needs;
  needs.batch = batch;
  needs.n = n;
  needs.m = m;
  needs.checkpoint_bytes = [&](int64_t rows) {
    return cuda_checkpoint_bytes(batch, n, m, dim, bandwidth, is_double != 0, rows);
  };
  const int64_t rows = tallest_band(needs, kMemoryShare * free_bytes);
  if (rows > 0) return needs.checkpoint_bytes(rows);
  return least_checkpoint(needs).first;
}

namespace sdtw::ops::detail {
namespace {

// For the fake implementations (Python): the checkpointed state of one call without a device.
int64_t checkpoint_workspace_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth,
                                   bool is_double, int64_t band_rows) {
  return cuda_checkpoint_bytes(batch, n, m, dim, bandwidth, is_double, band_rows);
}

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_FRAGMENT(sdtw, m) {
  m.def(
      "cuda_checkpoint_bytes(int batch, int n, int m, int dim, int bandwidth, bool is_double, int band_rows) -> int",
      TORCH_FN(sdtw::ops::detail::checkpoint_workspace_bytes));
  m.def(
      "sqeuclidean_checkpoint_forward(Tensor x, Tensor y, float gamma, int bandwidth, Tensor? x_lengths,"
      " Tensor? y_lengths, int band_rows) -> (Tensor, Tensor)");
  m.def(
      "sqeuclidean_checkpoint_backward(Tensor dvalues, Tensor x, Tensor y, Tensor state, float gamma, int bandwidth,"
      " Tensor? x_lengths, Tensor? y_lengths, int band_rows) -> (Tensor, Tensor)");
  m.def(
      "cost_checkpoint_forward(Tensor D, float gamma, int bandwidth, Tensor? x_lengths, Tensor? y_lengths,"
      " int band_rows) -> (Tensor, Tensor)");
  m.def(
      "cost_checkpoint_backward(Tensor dvalues, Tensor D, Tensor state, float gamma, int bandwidth,"
      " Tensor? x_lengths, Tensor? y_lengths, int band_rows) -> Tensor");
}

TORCH_LIBRARY_IMPL(sdtw, Autograd, m) {
  for (const char* name : {"sqeuclidean_checkpoint_forward", "sqeuclidean_checkpoint_backward",
                           "cost_checkpoint_forward", "cost_checkpoint_backward"})
    m.impl(name, torch::autograd::autogradNotImplementedFallback());
}
