#include <algorithm>
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

// A cell's weights (float64 for a float64 cost; FloatWeights' 8 bytes for a float32 one, then the
// float32 costs waiting for the forward, in a region sized for the larger) and its R_dot.
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
  const double column_bytes =
      strips * (detail::kWarp * kCellBytes + (1 + detail::kBackwardBorderWords) * sizeof(uint64_t));
  const double bytes = static_cast<double>(p.batch) * static_cast<double>(p.m) * column_bytes;
  if (bytes > kMaxWorkspaceBytes)
    fail("batch * n * m is too large for a workspace: at ", kCellBytes, " bytes a cell of rows padded to ", detail::kWarp,
         " and the strips' ring it must total <= 2^62 bytes (got ", bytes, " bytes for B = ", p.batch, ", n = ", p.n,
         ", m = ", p.m, ")");
}

// R_dot in the state's layout and the pairs' values, then the forward's layout (weights, scratch,
// ring) from `forward`, the direction flags, the forward's chunks written a strip, and the sweeps'
// own scratch and ring (two words a column), apart from the forward's, which the R_dot sweep runs
// beside. Everything from the forward's scratch on is zeroed by one memset.
struct HessianLayout {
  WorkspaceLayout strips, sweeps;
  std::size_t words = 0;  // state words (and R_dot entries), rows padded to strips
  std::size_t r_dot = 0, values = 0, forward = 0, bad_direction = 0, chunks_done = 0, sweeps_base = 0, total = 0;
};

HessianLayout hessian_layout(const SecondOrderProblem& p) {
  validate(p);
  HessianLayout h;
  h.strips = detail::workspace_layout(first_order(p), kStateBytes, sizeof(uint64_t));
  h.sweeps = detail::workspace_layout(first_order(p), 0, detail::kBackwardBorderWords * sizeof(uint64_t));
  const std::size_t strips = static_cast<std::size_t>(p.batch * h.strips.strips);
  h.words = (strips * static_cast<std::size_t>(p.m) + detail::kWarp - 1) * detail::kWarp;
  h.r_dot = 0;
  h.values = h.r_dot + detail::aligned_bytes(h.words * sizeof(double));
  h.forward = h.values + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * sizeof(double));
  h.bad_direction = h.forward + h.strips.total;
  h.chunks_done = h.bad_direction + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * sizeof(int));
  h.sweeps_base = h.chunks_done + detail::aligned_bytes(strips * sizeof(int));
  h.total = h.sweeps_base + h.sweeps.total;
  return h;
}

template <typename T>
using WeightsOf = std::conditional_t<std::is_same_v<T, float>, detail::FloatWeights, detail::CellState<T>>;

// Programmatic dependent launches run from sm_90 on; elsewhere the sweep is launched in stream order.
bool has_programmatic_launches() {
  struct Key {};
  return detail::kept_per_device<Key>([](int device) {
           int major = 0;
           detail::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                         "cudaDeviceGetAttribute");
           return major >= 9 ? 2 : 1;
         }) == 2;
}

// A sweep's grid: a strip a block (its chain warp and its tiles' loader, strip_tiles.cuh), as many
// blocks as the device holds at once. beside_previous: the launch may start while the kernel before
// it runs (programmatic dependent launch), as the R_dot sweep does beside the forward.
template <auto kernel, typename Args>
void launch_sweep(const Args& args, bool beside_previous, cudaStream_t stream, const char* what) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(
      std::min<int64_t>(args.s.total(), detail::resident_blocks<kernel, detail::kStripBlock>())));
  config.blockDim = dim3(detail::kStripBlock);
  config.stream = stream;
  cudaLaunchAttribute beside;
  beside.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  beside.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &beside;
  config.numAttrs = beside_previous && has_programmatic_launches() ? 1 : 0;
  detail::check(cudaLaunchKernelEx(&config, kernel, args), what);
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
  // One memset for the forward's scratch and ring, the flags, the counts and the sweeps' scratch and ring.
  const std::size_t scratch = h.forward + h.strips.ticket;
  detail::check(cudaMemsetAsync(base + scratch, 0, h.total - scratch, stream), "cudaMemsetAsync(scratch)");
  if (p.x_len || p.y_len)  // the cells beyond a pair's lengths are never written: 0
    detail::check(cudaMemsetAsync(E_dot, 0, sizeof(double) * p.batch * p.n * p.m, stream), "cudaMemsetAsync(E_dot)");
  using Cost = PrecomputedCost<In>;
  const Cost cost{D, p.n, p.m};
  auto* chunks_done = reinterpret_cast<int*>(base + h.chunks_done);
  // FloatWeights' words take half the state region: the costs wait in the other half.
  static_assert(sizeof(typename State::Word) + (State::kCostsApart ? sizeof(In) : 0) <= kStateBytes);
  In* costs = State::kCostsApart ? reinterpret_cast<In*>(base + h.forward + h.strips.state + h.words * sizeof(typename State::Word))
                                 : nullptr;
  if (p.constraint.kind == ConstraintKind::sakoe_chiba || p.constraint.kind == ConstraintKind::itakura)
    detail::launch_forward_kernel<In, Cost, true, false, true, false, State>(p, h.strips, cost, values, base + h.forward,
                                                                              stream, 0, {}, chunks_done, costs);
  else
    detail::launch_forward_kernel<In, Cost, true, false, false, false, State>(p, h.strips, cost, values, base + h.forward,
                                                                               stream, 0, {}, chunks_done, costs);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, h.sweeps, base + h.sweeps_base),
                                               1.0 / problem.gamma,
                                               reinterpret_cast<const typename State::Word*>(base + h.forward + h.strips.state),
                                               values,
                                               G,
                                               reinterpret_cast<double*>(base + h.r_dot),
                                               E_dot,
                                               reinterpret_cast<uint64_t*>(base + h.sweeps_base + h.sweeps.ring),
                                               reinterpret_cast<int*>(base + h.bad_direction),
                                               chunks_done};
  launch_sweep<detail::hessian_forward_sweep<State>>(args, true, stream, "alignment_backward forward sweep launch");
  launch_sweep<detail::hessian_backward_sweep<State>>(args, false, stream, "alignment_backward backward sweep launch");
}

template void alignment_backward<float>(const SecondOrderProblem&, const float*, const double*, double*, void*,
                                        cudaStream_t);
template void alignment_backward<double>(const SecondOrderProblem&, const double*, const double*, double*, void*,
                                         cudaStream_t);

}  // namespace sdtw::kernels
