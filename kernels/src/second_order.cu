#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "errors.hpp"
#include "hessian_product.cuh"
#include "launch.cuh"
#include "sdtw/kernels/costs.cuh"
#include "sdtw/kernels/second_order.hpp"
#include "workspace.hpp"

namespace sdtw::kernels {
namespace {

using detail::fail;
using detail::WorkspaceLayout;

// A cell's weights (float64 for a float64 cost, FloatWeights' 8 bytes for a float32 one, in a
// region sized for the larger) and its R_dot.
constexpr std::size_t kStateBytes = sizeof(detail::DoublePair);
constexpr std::size_t kCellBytes = kStateBytes + sizeof(double);
constexpr double kMaxWorkspaceBytes = 0x1p62;  // the layout's byte count then fits in size_t

Problem first_order(const SecondOrderProblem& p) {
  Problem first{p.batch, p.n, p.m, 1, p.gamma, p.bandwidth, p.x_len, p.y_len};
  first.constraint = p.constraint;
  return first;
}

// The first order's checks (shape, lengths and band), then the second order's own: gamma, whose
// reciprocal the sweeps multiply by (a subnormal gamma would make it infinite and 0 * inf NaN), and
// the workspace's size over rows padded to whole strips, with the ring's words.
void validate(const SecondOrderProblem& p) {
  constexpr double kMinGamma = std::numeric_limits<double>::min();
  if (!(p.gamma >= kMinGamma) || !std::isfinite(p.gamma))
    fail("gamma must be finite and >= ", kMinGamma, " (the smallest normal double; got ", p.gamma, ")");
  detail::validate(first_order(p));
  const double strips = std::ceil(static_cast<double>(p.n) / detail::kWarp);
  const double column_bytes = strips * (detail::kWarp * kCellBytes + detail::kBackwardBorderWords * sizeof(uint64_t));
  const double bytes = static_cast<double>(p.batch) * static_cast<double>(p.m) * column_bytes;
  if (bytes > kMaxWorkspaceBytes)
    fail("batch * n * m is too large for a workspace: at ", kCellBytes, " bytes a cell of rows padded to ", detail::kWarp,
         " and the strips' ring it must total <= 2^62 bytes (got ", bytes, " bytes for B = ", p.batch, ", n = ", p.n,
         ", m = ", p.m, ")");
}

// The forward's layout with a ring wide enough for the backward sweep's two words a column, then
// R_dot in the state's layout, the pairs' values and their direction flags.
struct HessianLayout {
  WorkspaceLayout strips;
  std::size_t r_dot = 0, values = 0, bad_direction = 0, total = 0;
};

HessianLayout hessian_layout(const SecondOrderProblem& p) {
  validate(p);
  HessianLayout h;
  h.strips = detail::workspace_layout(first_order(p), kStateBytes, detail::kBackwardBorderWords * sizeof(uint64_t));
  const std::size_t words = (static_cast<std::size_t>(p.batch * h.strips.strips) * static_cast<std::size_t>(p.m) +
                             detail::kWarp - 1) * detail::kWarp;
  h.r_dot = h.strips.total;
  h.values = h.r_dot + detail::aligned_bytes(words * sizeof(double));
  h.bad_direction = h.values + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * sizeof(double));
  h.total = h.bad_direction + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * sizeof(int));
  return h;
}

template <typename T>
using WeightsOf = std::conditional_t<std::is_same_v<T, float>, detail::FloatWeights, detail::CellState<T>>;

template <auto kernel, typename Args>
void launch_sweep(const Args& args, cudaStream_t stream, const char* what) {
  const int grid = detail::grid_for<double, kernel>(args.s.total());
  kernel<<<grid, detail::warps_per_block<double>() * detail::kWarp, 0, stream>>>(args);
  detail::check(cudaGetLastError(), what);
}

}  // namespace

std::size_t alignment_backward_workspace_bytes(const SecondOrderProblem& problem) {
  return hessian_layout(problem).total;
}

// The forward saves the weights in the cost's precision (R in float64, exp and log in the cost's
// type, as the first order), then the two sweeps run on them in float64.
template <typename In>
void alignment_backward(const SecondOrderProblem& problem, const In* D, const double* G, double* E_dot,
                        void* workspace, cudaStream_t stream) {
  static_assert(std::is_same_v<In, float> || std::is_same_v<In, double>, "D is float or double");
  using State = WeightsOf<In>;
  const HessianLayout h = hessian_layout(problem);
  detail::require(D, "D");
  detail::require(G, "G");
  detail::require(E_dot, "E_dot");
  detail::require(workspace, "workspace");
  if (reinterpret_cast<std::uintptr_t>(workspace) % alignof(detail::DoublePair) != 0)
    fail("workspace must be aligned to ", alignof(detail::DoublePair), " bytes (got address ", workspace, ")");
  const Problem p = first_order(problem);
  auto* base = static_cast<char*>(workspace);
  auto* values = reinterpret_cast<In*>(base + h.values);
  // The forward's scratch reset reaches to the end of its layout; the flags after it need their own.
  detail::check(cudaMemsetAsync(base + h.bad_direction, 0, h.total - h.bad_direction, stream),
                "cudaMemsetAsync(bad_direction)");
  if (p.x_len || p.y_len)  // the cells beyond a pair's lengths are never written: 0
    detail::check(cudaMemsetAsync(E_dot, 0, sizeof(double) * p.batch * p.n * p.m, stream), "cudaMemsetAsync(E_dot)");
  using Cost = PrecomputedCost<In>;
  const Cost cost{D, p.n, p.m};
  detail::reset_scratch(h.strips, workspace, stream);
  if (p.constraint.kind == ConstraintKind::sakoe_chiba || p.constraint.kind == ConstraintKind::itakura)
    detail::launch_forward_kernel<In, Cost, true, false, true, false, State>(p, h.strips, cost, values, workspace, stream);
  else
    detail::launch_forward_kernel<In, Cost, true, false, false, false, State>(p, h.strips, cost, values, workspace, stream);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, h.strips, workspace),
                                               1.0 / problem.gamma,
                                               reinterpret_cast<const typename State::Word*>(base + h.strips.state),
                                               values,
                                               G,
                                               reinterpret_cast<double*>(base + h.r_dot),
                                               E_dot,
                                               reinterpret_cast<uint64_t*>(base + h.strips.ring),
                                               reinterpret_cast<int*>(base + h.bad_direction)};
  launch_sweep<detail::hessian_forward_sweep<State>>(args, stream, "alignment_backward forward sweep launch");
  launch_sweep<detail::hessian_backward_sweep<State>>(args, stream, "alignment_backward backward sweep launch");
}

template void alignment_backward<float>(const SecondOrderProblem&, const float*, const double*, double*, void*,
                                        cudaStream_t);
template void alignment_backward<double>(const SecondOrderProblem&, const double*, const double*, double*, void*,
                                         cudaStream_t);

}  // namespace sdtw::kernels
