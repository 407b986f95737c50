// sdtw::alignment_backward: the Hessian-vector product H G of soft-DTW in cost space, which is the
// backward of E(D) = d sdtw / d D (H is symmetric) and the derivative of the loss's backward. The
// CPU kernel runs the float64 reference's sweeps of directional derivatives (Mensch & Blondel
// 2018); the CUDA one the kernels' sweeps over the forward's saved weights (kernels/src/second_order.cu).
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#ifdef SDTW_TORCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "sdtw/kernels/second_order.hpp"
#endif

#include "checks.hpp"
#include "ops_internal.hpp"
#include "reference_batch.hpp"

namespace sdtw::ops::detail {

namespace {

namespace ref = sdtw::reference;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What both devices check: D, the options and the lengths, and G of D's shape on D's device.
Pair check_alignment_backward(const at::Tensor& G, const at::Tensor& D, double gamma, const Constraint& constraint,
                              const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths) {
  const Pair p = check_cost(D, gamma, constraint, x_lengths, y_lengths, Values::check);
  // The autograd nodes answer gamma = 0 themselves (a zero derivative); the sweeps divide by gamma.
  TORCH_CHECK_VALUE(gamma > 0.0, "gamma must be > 0 for alignment_backward (got ", gamma,
                    "): at gamma = 0 the alignment is piecewise constant in D and its derivative is 0");
  TORCH_CHECK_VALUE(G.defined() && G.sizes() == D.sizes(), "G (the gradient of E) must have the shape of D (",
                    D.sizes(), ") (got ", G.defined() ? G.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK(G.device() == D.device(), "G must be on the device of D (", D.device(), ") (got ", G.device(), ")");
  return p;
}

// Pair b's block of Z (its first x_len x y_len entries) with a non-finite value: the reference
// takes finite directions only, so such a block is zeroed for it and the pair's result set to NaN
// after, as a NaN gradient propagates through any product.
std::vector<bool> zero_non_finite_blocks(at::Tensor& Z64, const Pair& p) {
  std::vector<bool> bad(p.batch, false);
  const int64_t* x_len = p.x_len ? p.x_len->data_ptr<int64_t>() : nullptr;
  const int64_t* y_len = p.y_len ? p.y_len->data_ptr<int64_t>() : nullptr;
  double* z = Z64.data_ptr<double>();
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t n = x_len ? x_len[b] : p.n, m = y_len ? y_len[b] : p.m;
    double* block = z + b * p.n * p.m;
    for (int64_t i = 0; i < n && !bad[b]; ++i)
      bad[b] = !std::all_of(block + i * p.m, block + i * p.m + m, [](double v) { return std::isfinite(v); });
    if (bad[b]) std::fill(block, block + p.n * p.m, 0.0);
  }
  return bad;
}

at::Tensor alignment_backward_cpu(const at::Tensor& G, const at::Tensor& D, double gamma, int64_t bandwidth,
                                  const c10::optional<at::Tensor>& x_lengths,
                                  const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                  double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_alignment_backward(G, D, gamma, c, x_lengths, y_lengths);
  const at::Tensor D64 = constrained_cost(p.a.to(at::kDouble).contiguous(), p, c);
  at::Tensor Z64 = G.reshape({p.batch, p.n, p.m}).to(at::kDouble, /*non_blocking=*/false, /*copy=*/true).contiguous();
  const std::vector<bool> bad = zero_non_finite_blocks(Z64, p);

  const int64_t cells = p.n * p.m;
  at::Tensor values = at::empty({p.batch}, D64.options());
  at::Tensor E_dot = at::empty({p.batch, p.n, p.m}, D64.options());
  const ref::Options options = reference_options(gamma, c.kind == ConstraintKind::band ? c.radius : -1);
  for_each_chunk(p, [&](const ref::BatchShape& s, int64_t b0) {
    const ref::CostBatchHessianProduct h = ref::soft_dtw_hessian_product_cost_batch(
        D64.data_ptr<double>() + b0 * cells, Z64.data_ptr<double>() + b0 * cells, s, options);
    std::copy(h.values.begin(), h.values.end(), values.data_ptr<double>() + b0);
    std::copy(h.E_dot.begin(), h.E_dot.end(), E_dot.data_ptr<double>() + b0 * cells);
  });
  // As the first-order path: a pair whose value is not finite in the loss's dtype has NaN derivatives.
  at::Tensor undefined = at::isfinite(values.to(compute_dtype(D.scalar_type()))).logical_not();
  for (int64_t b = 0; b < p.batch; ++b)
    if (bad[b]) undefined[b] = true;
  E_dot.masked_fill_(cells_of_pairs(undefined, p), kNaN);
  return unbatch(E_dot.to(D.scalar_type()), p);
}

#ifdef SDTW_TORCH_WITH_CUDA
// The kernel takes G in float64 as the CPU does, and D in its compute dtype, whose precision the
// saved weights take (float32 for half, bfloat16 and float32 inputs); it writes E_dot in float64 on
// the current stream, with no host sync.
at::Tensor alignment_backward_cuda(const at::Tensor& G, const at::Tensor& D, double gamma, int64_t bandwidth,
                                   const c10::optional<at::Tensor>& x_lengths,
                                   const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                   double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_alignment_backward(G, D, gamma, c, x_lengths, y_lengths);
  const c10::cuda::CUDAGuard device_guard(p.a.device());  // after the checks, which name a tensor on the wrong device
  const at::ScalarType compute = compute_dtype(D.scalar_type());
  const at::Tensor Dc = p.a.to(compute).contiguous();
  const at::Tensor G64 = G.reshape({p.batch, p.n, p.m}).to(at::kDouble).contiguous();
  at::Tensor E_dot = at::empty({p.batch, p.n, p.m}, Dc.options().dtype(at::kDouble));
  if (p.batch == 0) return unbatch(E_dot.to(D.scalar_type()), p);
  kernels::SecondOrderProblem problem;
  problem.batch = p.batch;
  problem.n = p.n;
  problem.m = p.m;
  problem.gamma = gamma;
  problem.constraint = c;
  problem.x_len = p.x_len ? p.x_len->data_ptr<int64_t>() : nullptr;
  problem.y_len = p.y_len ? p.y_len->data_ptr<int64_t>() : nullptr;
  try {
    const at::Tensor workspace = at::empty({static_cast<int64_t>(kernels::alignment_backward_workspace_bytes(problem))},
                                           Dc.options().dtype(at::kByte));
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (compute == at::kDouble)
      kernels::alignment_backward<double>(problem, Dc.data_ptr<double>(), G64.data_ptr<double>(),
                                          E_dot.data_ptr<double>(), workspace.data_ptr(), stream);
    else
      kernels::alignment_backward<float>(problem, Dc.data_ptr<float>(), G64.data_ptr<double>(),
                                         E_dot.data_ptr<double>(), workspace.data_ptr(), stream);
  } catch (const kernels::CudaError& e) {
    TORCH_CHECK(false, "sdtw CUDA kernel failed: ", e.what());
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, "sdtw: ", e.what());
  }
  return unbatch(E_dot.to(D.scalar_type()), p);
}
#endif

}  // namespace
}  // namespace sdtw::ops::detail

TORCH_LIBRARY_FRAGMENT(sdtw, m) {
  m.def(
      "alignment_backward(Tensor G, Tensor D, float gamma, int bandwidth=-1, Tensor? x_lengths=None,"
      " Tensor? y_lengths=None, int sakoe_chiba_radius=-1, float itakura_max_slope=0.0) -> Tensor");
}

TORCH_LIBRARY_IMPL(sdtw, CPU, m) {
  m.impl("alignment_backward", TORCH_FN(sdtw::ops::detail::alignment_backward_cpu));
}

#ifdef SDTW_TORCH_WITH_CUDA
TORCH_LIBRARY_IMPL(sdtw, CUDA, m) {
  m.impl("alignment_backward", TORCH_FN(sdtw::ops::detail::alignment_backward_cuda));
}
#endif
