// The operator schemas (TORCH_LIBRARY(sdtw)), their CPU implementations through the float64
// reference, and pairwise_cost, a composite of plain torch ops shared by the C++ and Python fronts.
#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "reference_batch.hpp"
#include "sdtw/reference/variants.hpp"
#include "sdtw/torch/ops.hpp"

namespace sdtw::ops::detail {
namespace {

namespace ref = sdtw::reference;

// gamma = 0, exact DTW, on pair b's first n x m block of a (B, N, M) float64 cost: the reference's
// hard min (soft_dtw_variant at gamma 0, which breaks ties as hard_dtw does) with the band as +inf
// costs. A NaN or -inf cost in the band gives a NaN value, as the soft path propagates it. E goes
// to the pair's block of E_out (padding stays 0).
double hard_dtw_pair(const double* D, int64_t n, int64_t m, int64_t stride, int64_t bandwidth, double* E_out) {
  const std::optional<long> band = bandwidth >= 0 ? std::optional<long>(bandwidth) : std::nullopt;
  ref::Matrix Db(n, m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const double c = D[i * stride + j];
      if (!ref::in_band(i, j, band)) {
        Db(i, j) = ref::kInf;
        continue;
      }
      if (std::isnan(c) || c == -ref::kInf) return std::numeric_limits<double>::quiet_NaN();
      Db(i, j) = c;
    }
  ref::VariantOptions options;
  options.gamma = 0.0;
  const ref::VariantResult r = ref::soft_dtw_variant(Db, options);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) E_out[i * stride + j] = r.E(i, j);
  return r.value;
}

// Runs the reference on a float64 (B, N, M) contiguous cost tensor: values (B, in `dtype`) and E
// (B, N, M, float64). A pair whose value is not finite in `dtype` (NaN or +inf costs, or float32
// overflow) gets a NaN E inside its lengths, so NaN gradients, as torch's losses propagate; beyond
// them E is 0 for every pair, as the CUDA kernels write it.
std::tuple<at::Tensor, at::Tensor> reference_cost(const at::Tensor& unconstrained, const Pair& p, double gamma,
                                                  const Constraint& constraint, at::ScalarType dtype) {
  const at::Tensor D64 = constrained_cost(unconstrained, p, constraint);
  const int64_t bandwidth = constraint.kind == ConstraintKind::band ? constraint.radius : -1;
  at::Tensor values = at::empty({p.batch}, D64.options());
  at::Tensor E = at::empty({p.batch, p.n, p.m}, D64.options());
  const int64_t cells = p.n * p.m;
  const ref::Options options = reference_options(gamma, bandwidth);
  for_each_chunk(p, [&](const ref::BatchShape& s, int64_t b0) {
    if (gamma == 0.0) {
      for (int64_t k = 0; k < s.batch; ++k) {
        double* E_b = E.data_ptr<double>() + (b0 + k) * cells;
        std::fill(E_b, E_b + cells, 0.0);
        values.data_ptr<double>()[b0 + k] = hard_dtw_pair(D64.data_ptr<double>() + (b0 + k) * cells,
                                                          s.x_len ? s.x_len[k] : p.n, s.y_len ? s.y_len[k] : p.m,
                                                          p.m, bandwidth, E_b);
      }
      return;
    }
    const ref::CostBatchResult r =
        ref::soft_dtw_cost_batch(D64.data_ptr<double>() + b0 * cells, s, options, /*with_alignment=*/true);
    std::copy(r.values.begin(), r.values.end(), values.data_ptr<double>() + b0);
    std::copy(r.E.begin(), r.E.end(), E.data_ptr<double>() + b0 * cells);
  });
  const at::Tensor out = values.to(dtype);
  E.masked_fill_(cells_of_pairs(at::isfinite(out).logical_not(), p), std::numeric_limits<double>::quiet_NaN());
  return {out, E};
}

void check_state(const at::Tensor& state, const Pair& p) {
  TORCH_CHECK_VALUE(state.defined() && state.scalar_type() == at::kDouble && state.dim() == 3 &&
                        state.size(0) == p.batch && state.size(1) == p.n && state.size(2) == p.m &&
                        state.device() == p.a.device(),
                    "state does not belong to these inputs: pass the state that the forward returned for them");
}

// Squared Euclidean costs. CUDA: the kernels' cost policy (exact). CPU: broadcasting for small
// problems (exact, B*N*M*D memory); above the limit, the expanded form ||a||^2 + ||b||^2 - 2 a.b on
// data centred by a common mean (one bmm, B*N*M memory; centring keeps the cancellation small,
// clamping keeps D >= 0).
constexpr int64_t kBroadcastLimit = int64_t{1} << 23;

at::Tensor sqeuclidean_cost(const at::Tensor& a, const at::Tensor& b) {
#ifdef SDTW_TORCH_WITH_CUDA
  if (a.is_cuda()) return sqeuclidean_cost_cuda_autograd(a, b);
#endif
  if (a.size(0) * a.size(1) * b.size(1) * a.size(2) <= kBroadcastLimit)
    return (a.unsqueeze(2) - b.unsqueeze(1)).pow(2).sum(-1);
  const at::Tensor centre = ((a.sum(1, true) + b.sum(1, true)) / double(a.size(1) + b.size(1))).detach();
  const at::Tensor ac = a - centre, bc = b - centre;
  return (ac.pow(2).sum(-1).unsqueeze(2) + bc.pow(2).sum(-1).unsqueeze(1) - 2.0 * at::bmm(ac, bc.transpose(1, 2)))
      .clamp_min(0.0);
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> cost_forward_cpu(const at::Tensor& D, double gamma, int64_t bandwidth,
                                                    const c10::optional<at::Tensor>& x_lengths,
                                                    const c10::optional<at::Tensor>& y_lengths,
                                                    int64_t sakoe_chiba_radius, double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_cost(D, gamma, c, x_lengths, y_lengths, Values::check);
  auto [values, E] = reference_cost(p.a.to(at::kDouble).contiguous(), p, gamma, c,
                                    compute_dtype(D.scalar_type()));
  return {unbatch(values, p), E};
}

at::Tensor cost_backward_cpu(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                             int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                             const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                             double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_cost(D, gamma, operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope), x_lengths,
                            y_lengths, Values::skip);
  check_state(state, p);
  const at::Tensor dv = check_dvalues(dvalues, p, at::kDouble);
  return unbatch((state * dv.view({p.batch, 1, 1})).to(D.scalar_type()), p);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward_cpu(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                           int64_t bandwidth,
                                                           const c10::optional<at::Tensor>& x_lengths,
                                                           const c10::optional<at::Tensor>& y_lengths,
                                                           int64_t sakoe_chiba_radius, double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_sqeuclidean(x, y, gamma, c, x_lengths, y_lengths, Values::check);
  // Exact float64 distances (cdist without the matmul shortcut, then squared).
  const at::Tensor D64 =
      at::cdist(p.a.to(at::kDouble), p.b.to(at::kDouble), 2.0, /*donot_use_mm_for_euclid_dist=*/2).square();
  auto [values, E] = reference_cost(D64.contiguous(), p, gamma, c, compute_dtype(x.scalar_type()));
  return {unbatch(values, p), E};
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward_cpu(const at::Tensor& dvalues, const at::Tensor& x,
                                                            const at::Tensor& y, const at::Tensor& state,
                                                            double gamma, int64_t bandwidth,
                                                            const c10::optional<at::Tensor>& x_lengths,
                                                            const c10::optional<at::Tensor>& y_lengths,
                                                            int64_t sakoe_chiba_radius, double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_sqeuclidean(x, y, gamma, operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope),
                                   x_lengths, y_lengths, Values::skip);
  check_state(state, p);
  const at::Tensor dv = check_dvalues(dvalues, p, at::kDouble);
  const at::Tensor E = state * dv.view({p.batch, 1, 1});
  // E through the cost, in float64 like the reference.
  const auto [gx, gy] = sqeuclidean_cost_backward_composite(E, p.a.to(at::kDouble), p.b.to(at::kDouble));
  return {unbatch(gx.to(x.scalar_type()), p), unbatch(gy.to(y.scalar_type()), p)};
}

at::Tensor pairwise_cost(const at::Tensor& x, const at::Tensor& y, c10::string_view dist) {
  const Pair p = check_xy(x, y);
  // Costs are computed in float32 (float64 for float64 inputs) whatever autocast says: a cost
  // matrix in float16 loses the small differences that soft-DTW is sensitive to.
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const std::string d = canonical_dist(dist);
  const bool squared = d == "sqeuclidean";
  // The CUDA cost kernel reads bfloat16 / float16 as they are and computes in float32: no cast
  // kernels, forward or backward.
  const bool read_as_is = x.is_cuda() && (squared || d == "euclidean");
  const at::Tensor a = read_as_is ? p.a : p.a.to(compute), b = read_as_is ? p.b : p.b.to(compute);
  at::Tensor D;
  if (squared) {
    D = sqeuclidean_cost(a, b);
  } else if (d == "euclidean") {
    D = sqeuclidean_cost(a, b).clamp_min(1e-30).sqrt();
  } else if (d == "cosine") {
    const auto unit = [](const at::Tensor& t) { return t / t.norm(2, {-1}, true).clamp_min(1e-8); };
    D = 1.0 - at::bmm(unit(a), unit(b).transpose(1, 2));
  } else if (d == "negative_dot") {
    D = -at::bmm(a, b.transpose(1, 2));
  } else {
    D = (a.unsqueeze(2) - b.unsqueeze(1)).abs().sum(-1);
  }
  return unbatch(D, p);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_cost_backward_composite(const at::Tensor& G, const at::Tensor& x,
                                                                       const at::Tensor& y) {
  const Pair p = check_xy(x, y);
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const at::Tensor g = check_cost_gradient(G, p).to(compute), a = p.a.to(compute), b = p.b.to(compute);
  // baddbmm folds the product, the difference and the factor 2 into one call per input.
  const at::Tensor gx = at::baddbmm(a * g.sum(2).unsqueeze(-1), g, b, /*beta=*/2.0, /*alpha=*/-2.0);
  const at::Tensor gy = at::baddbmm(b * g.sum(1).unsqueeze(-1), g.transpose(1, 2), a, /*beta=*/2.0, /*alpha=*/-2.0);
  return {unbatch(gx.to(x.scalar_type()), p), unbatch(gy.to(y.scalar_type()), p)};
}

#ifndef SDTW_TORCH_WITH_CUDA
int64_t cuda_state_bytes(int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool) { return -1; }
#endif

}  // namespace sdtw::ops::detail

namespace sdtw::ops::detail {
namespace {

// For the fake implementations (Python) and cdist's chunks: the CUDA workspace of one call
// without a device; -1 without CUDA support.
int64_t cuda_workspace_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth, bool is_double,
                             bool values_only) {
  return cuda_state_bytes(batch, n, m, dim, bandwidth, is_double, values_only);
}

bool built_with_cuda() { return ops::built_with_cuda(); }

}  // namespace
}  // namespace sdtw::ops::detail

// For sdtw-bench (harness/src/torch/device_info.cpp), which links this library without its headers.
extern "C" int64_t sdtw_torch_cuda_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth,
                                               int is_double) {
  return sdtw::ops::detail::cuda_state_bytes(batch, n, m, dim, bandwidth, is_double != 0);
}

TORCH_LIBRARY(sdtw, m) {
  m.def(
      "cost_forward(Tensor D, float gamma, int bandwidth=-1, Tensor? x_lengths=None, Tensor? y_lengths=None,"
      " int sakoe_chiba_radius=-1, float itakura_max_slope=0.0) -> (Tensor values, Tensor state)");
  m.def(
      "cost_backward(Tensor dvalues, Tensor D, Tensor state, float gamma, int bandwidth=-1,"
      " Tensor? x_lengths=None, Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0)"
      " -> Tensor");
  m.def(
      "sqeuclidean_forward(Tensor x, Tensor y, float gamma, int bandwidth=-1, Tensor? x_lengths=None,"
      " Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0)"
      " -> (Tensor values, Tensor state)");
  m.def(
      "sqeuclidean_backward(Tensor dvalues, Tensor x, Tensor y, Tensor state, float gamma, int bandwidth=-1,"
      " Tensor? x_lengths=None, Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0)"
      " -> (Tensor grad_x, Tensor grad_y)");
  m.def(
      "fused_forward(Tensor x, Tensor y, str dist, float gamma, int bandwidth=-1, Tensor? x_lengths=None,"
      " Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0)"
      " -> (Tensor values, Tensor state)");
  m.def(
      "fused_values(Tensor x, Tensor y, str dist, float gamma, int bandwidth=-1, Tensor? x_lengths=None,"
      " Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0) -> Tensor");
  m.def(
      "fused_backward(Tensor dvalues, Tensor x, Tensor y, str dist, Tensor state, float gamma, int bandwidth=-1,"
      " Tensor? x_lengths=None, Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0)"
      " -> (Tensor grad_x, Tensor grad_y)");
  m.def("pairwise_cost(Tensor x, Tensor y, str dist=\"sqeuclidean\") -> Tensor");
  m.def("sqeuclidean_cost(Tensor x, Tensor y) -> Tensor");
  m.def("sqeuclidean_cost_backward(Tensor G, Tensor x, Tensor y) -> (Tensor grad_x, Tensor grad_y)");
  m.def(
      "soft_dtw_cost(Tensor D, float gamma, int bandwidth=-1, Tensor? x_lengths=None, Tensor? y_lengths=None,"
      " int sakoe_chiba_radius=-1, float itakura_max_slope=0.0) -> Tensor");
  m.def(
      "soft_dtw_sqeuclidean(Tensor x, Tensor y, float gamma, int bandwidth=-1, Tensor? x_lengths=None,"
      " Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0) -> Tensor");
  m.def(
      "cuda_workspace_bytes(int batch, int n, int m, int dim, int bandwidth, bool is_double, bool values_only=False)"
      " -> int",
      TORCH_FN(sdtw::ops::detail::cuda_workspace_bytes));
  m.def("built_with_cuda() -> bool", TORCH_FN(sdtw::ops::detail::built_with_cuda));
}

TORCH_LIBRARY_IMPL(sdtw, CPU, m) {
  m.impl("cost_forward", TORCH_FN(sdtw::ops::detail::cost_forward_cpu));
  m.impl("cost_backward", TORCH_FN(sdtw::ops::detail::cost_backward_cpu));
  m.impl("sqeuclidean_forward", TORCH_FN(sdtw::ops::detail::sqeuclidean_forward_cpu));
  m.impl("sqeuclidean_backward", TORCH_FN(sdtw::ops::detail::sqeuclidean_backward_cpu));
  m.impl("sqeuclidean_cost_backward", TORCH_FN(sdtw::ops::detail::sqeuclidean_cost_backward_composite));
}

TORCH_LIBRARY_IMPL(sdtw, CompositeImplicitAutograd, m) {
  m.impl("pairwise_cost", TORCH_FN(sdtw::ops::detail::pairwise_cost));
}
