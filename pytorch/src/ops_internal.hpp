#pragma once
// Internal entry points shared by the translation units of sdtw_torch.
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/string_view.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>

namespace sdtw::ops::detail {

// Whether an autograd node is wanted: grad mode on and an input requiring a gradient (checked
// before Function::apply, which runs forward with grad mode off).
inline bool gradient_wanted(std::initializer_list<at::Tensor> inputs) {
  if (!at::GradMode::is_enabled()) return false;
  for (const auto& t : inputs)
    if (t.requires_grad()) return true;
  return false;
}

// An optional tensor from a possibly undefined one (how autograd saves an absent argument).
inline c10::optional<at::Tensor> present(const at::Tensor& t) {
  return t.defined() ? c10::optional<at::Tensor>(t) : c10::nullopt;
}

// An optional string as the schema's str? (a view of the caller's string).
inline c10::optional<c10::string_view> view(const c10::optional<std::string>& s) {
  return s ? c10::optional<c10::string_view>(c10::string_view(s->data(), s->size())) : c10::nullopt;
}

std::tuple<at::Tensor, at::Tensor> cost_forward_cpu(const at::Tensor& D, double gamma, int64_t bandwidth,
                                                    const c10::optional<at::Tensor>& x_lengths,
                                                    const c10::optional<at::Tensor>& y_lengths,
                                                    int64_t sakoe_chiba_radius, double itakura_max_slope);
at::Tensor cost_backward_cpu(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                             int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                             const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                             double itakura_max_slope);
std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward_cpu(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                           int64_t bandwidth,
                                                           const c10::optional<at::Tensor>& x_lengths,
                                                           const c10::optional<at::Tensor>& y_lengths,
                                                           int64_t sakoe_chiba_radius, double itakura_max_slope);
std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward_cpu(const at::Tensor& dvalues, const at::Tensor& x,
                                                            const at::Tensor& y, const at::Tensor& state,
                                                            double gamma, int64_t bandwidth,
                                                            const c10::optional<at::Tensor>& x_lengths,
                                                            const c10::optional<at::Tensor>& y_lengths,
                                                            int64_t sakoe_chiba_radius, double itakura_max_slope);

// E(D) = d sdtw / d D in D's dtype, differentiable when D requires a gradient (its
// backward is the Hessian-vector product sdtw::alignment_backward). state: the forward's for these
// inputs when at hand (undefined: the forward runs here).
at::Tensor alignment_of_cost(const at::Tensor& D, double gamma, int64_t bandwidth,
                             const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                             int64_t sakoe_chiba_radius, double itakura_max_slope, at::Tensor state = at::Tensor());

// The loss options resolved and validated (loss.cpp): the operators' band (-1: none) and
// tslearn's constraint as the operators take it (-1, 0: none), the canonical dist, fused decided.
struct LossOptions {
  double gamma = 1.0;
  int64_t bandwidth = -1;
  int64_t sakoe_chiba_radius = -1;
  double itakura_max_slope = 0.0;
  bool normalize = false;
  std::string dist;
  bool fused = true;
  std::string reduction;
  double warp = 0.0;  // Parallel Tacotron 2's penalty on vertical and horizontal moves
  bool subsequence = false;  // free start and end along the second series
};
LossOptions resolve_options(double gamma, c10::optional<double> bandwidth, bool normalize, c10::string_view dist,
                            c10::optional<bool> fused, c10::string_view reduction,
                            c10::optional<c10::string_view> global_constraint = c10::nullopt,
                            c10::optional<int64_t> sakoe_chiba_radius = c10::nullopt,
                            c10::optional<double> itakura_max_slope = c10::nullopt, double warp = 0.0,
                            bool subsequence = false);
// "sqeuclidean", "euclidean", "cosine", "l1" or "negative_dot" for a dist name or alias (any case); else
// ValueError.
std::string canonical_dist(c10::string_view dist);

// soft-DTW of x and y with a named cost (canonical_dist's names), differentiable in x and y: the
// squared Euclidean one by soft_dtw_sqeuclidean; the others by the kernels' fused mode on CUDA,
// and on the CPU through their cost tensor (pairwise_cost), which is how the CPU computes them.
at::Tensor soft_dtw_named_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist, double gamma,
                               int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                               const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                               double itakura_max_slope);
// The public bandwidth (absent, <= 0 or wider than any tensor: no band; a real: its floor) as
// the operators' int.
int64_t operator_band(c10::optional<double> bandwidth);

// check_inputs=true (input_checks.cpp): the first non-finite value inside the lengths, and lengths
// on the device out of range or out of the band (bandwidth as the operators take it), named.
void check_finite_series(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths, int64_t bandwidth,
                         int64_t sakoe_chiba_radius, double itakura_max_slope);
void check_finite_cost(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                       const c10::optional<at::Tensor>& y_lengths, int64_t bandwidth, int64_t sakoe_chiba_radius,
                       double itakura_max_slope);

// The loss's first step (loss.cpp): integer or bool series promoted to floating, padding zeroed.
std::tuple<at::Tensor, at::Tensor> zero_padding(const at::Tensor& x, const at::Tensor& y,
                                                const c10::optional<at::Tensor>& x_lengths,
                                                const c10::optional<at::Tensor>& y_lengths);

// soft-DTW of a cost tensor with o's warp and subsequence (variants.cpp): warp alone by the identity
// onto sdtw::soft_dtw_cost, subsequence by subsequence_soft_dtw. Differentiable in D.
at::Tensor variant_soft_dtw_cost(const at::Tensor& D, const LossOptions& o, const c10::optional<at::Tensor>& x_lengths,
                                 const c10::optional<at::Tensor>& y_lengths);
// Subsequence soft-DTW (subsequence.cpp), a composite of torch ops: values (B,) (or ()), and the end's
// weights over each pair's last row (B, M) with the expected end column (B,) (0-based).
at::Tensor subsequence_soft_dtw(const at::Tensor& D, double gamma, double warp,
                                const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths);
std::tuple<at::Tensor, at::Tensor> subsequence_end_of_cost(const at::Tensor& D, double gamma, double warp,
                                                           const c10::optional<at::Tensor>& x_lengths,
                                                           const c10::optional<at::Tensor>& y_lengths);

// The composite behind sdtw::pairwise_cost (autograd flows through the torch ops it uses).
at::Tensor pairwise_cost(const at::Tensor& x, const at::Tensor& y, c10::string_view dist);

// The gradients of sum G * ||x_i - y_j||^2 in differentiable torch ops: sdtw::sqeuclidean_cost_backward
// on the CPU, and on CUDA under create_graph=True (otherwise one kernel).
std::tuple<at::Tensor, at::Tensor> sqeuclidean_cost_backward_composite(const at::Tensor& G, const at::Tensor& x,
                                                                       const at::Tensor& y);

#ifdef SDTW_TORCH_WITH_CUDA
// ||x_i - y_j||^2 of CUDA tensors (batch x n x dim, batch x m x dim; float or double, bfloat16 and
// float16 read as they are) by the kernels' cost policy, differentiable (one kernel each way; torch
// ops backward under create_graph=True).
at::Tensor sqeuclidean_cost_cuda_autograd(const at::Tensor& x, const at::Tensor& y);
#endif

// Bytes of the CUDA state (the kernels' workspace) for one call, or with values_only of the
// values-only kernels' workspace (the border ring); -1 without CUDA support.
int64_t cuda_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth, bool is_double,
                         bool values_only = false);

}  // namespace sdtw::ops::detail
