#include <algorithm>
#include <atomic>
#include <string>
#include <type_traits>
#include <utility>

#include "alignment_weights.cuh"
#include "backward.cuh"
#include "backward_gradient.cuh"
#include "errors.hpp"
#include "cost_gradient.cuh"
#include "forward.cuh"
#include "jacobian.cuh"
#include "launch.cuh"
#include "pairwise.cuh"
#include "sdtw/kernels/costs.cuh"
#include "sdtw/kernels/soft_dtw.hpp"
#include "workspace.hpp"

namespace sdtw::kernels {
namespace {

using detail::CellState;
using detail::check;
using detail::reject;
using detail::require;
using detail::grid_for;
using detail::launch_forward;
using detail::launch_forward_kernel;
using detail::layout_for;
using detail::reset_scratch;
using detail::resident_blocks;
using detail::schedule_for;
using detail::WorkspaceLayout;

void reject_pair_indices(const Problem& p) {
  if (p.x_index || p.y_index)
    reject("pair indices (x_index, y_index) are for sqeuclidean_values only");
}

template <typename T>
detail::BackwardArgs<T> backward_args(const Problem& p, const WorkspaceLayout& w, const T* dvalues,
                                      int64_t dvalues_stride, T* dense_E, void* workspace) {
  reject_pair_indices(p);
  require(dvalues, "dvalues");
  require(workspace, "workspace");
  auto* base = static_cast<char*>(workspace);
  return {schedule_for(p, w, workspace), dvalues, dvalues_stride,
          reinterpret_cast<typename CellState<T>::Word*>(base + w.state), dense_E, reinterpret_cast<uint64_t*>(base + w.ring)};
}

template <typename T, bool kBands = false>
void launch_backward(const detail::BackwardArgs<T>& args, cudaStream_t stream) {
  constexpr auto dense = detail::backward_kernel<T, true, kBands>, in_state = detail::backward_kernel<T, false, kBands>;
  const int64_t strips = args.s.total();
  const int grid = args.dense_E ? grid_for<T, dense>(strips) : grid_for<T, in_state>(strips);
  (args.dense_E ? dense : in_state)<<<grid, detail::warps_per_block<T>() * detail::kWarp, 0, stream>>>(args);
  check(cudaGetLastError(), "backward launch");
}

// A grid holds at most 65535 pairs in z: larger batches go in slices of pairs.
constexpr int64_t kMaxGridZ = 65535;

// The arguments of pairs [first, first + count) alone. self_rows and other_rows: n or m.
template <typename T, typename In>
detail::JacobianArgs<T, In> pairs_of(detail::JacobianArgs<T, In> a, int64_t first, int64_t count, int64_t self_rows,
                                     int64_t other_rows) {
  a.batch = count;
  if (a.x_len) a.x_len += first;
  if (a.y_len) a.y_len += first;
  if (a.state) a.state += detail::state_index(first * a.strips, a.m, 0, 0);
  if (a.dense) a.dense += first * a.n * a.m;
  a.self += first * self_rows * a.dim;
  a.other += first * other_rows * a.dim;
  a.grad += first * self_rows * a.dim;
  return a;
}

// A feature tile of kFeatures: small dims use narrow tiles with more rows per block.
template <typename T, int kFeatures, bool kDense, typename In>
void launch_jacobian(const detail::JacobianArgs<T, In>& gx, const detail::JacobianArgs<T, In>& gy, cudaStream_t stream) {
  const detail::GradientTiles<T, kFeatures> tiles(gx.n, gx.m, gx.dim);
  for (int64_t first = 0; first < gx.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, gx.batch - first);
    const dim3 grid(static_cast<unsigned>(tiles.x_blocks + tiles.y_blocks), static_cast<unsigned>(tiles.features),
                    static_cast<unsigned>(count));
    detail::jacobian_kernel<T, kFeatures, kDense, In><<<grid, detail::kJacThreads, 0, stream>>>(
        pairs_of(gx, first, count, gx.n, gx.m), pairs_of(gy, first, count, gx.m, gx.n), static_cast<int>(tiles.x_blocks));
    check(cudaGetLastError(), "gradient launch");
  }
}

// Calls f(std::integral_constant<int, kFeatures>) with the gradient's feature tile for dim. Each
// feature tile gathers all of E again, so float (tensor cores) takes the narrowest tile that holds
// all the features, up to 128; double keeps its FMA tiles of 16 and 64.
template <typename T, typename F>
auto with_feature_tile(int64_t dim, F&& f) {
  if constexpr (std::is_same_v<T, float>) {
    if (dim <= 16) return f(std::integral_constant<int, 16>{});
    if (dim <= 64) return f(std::integral_constant<int, 64>{});
    return f(std::integral_constant<int, 128>{});
  } else {
    if (dim <= 32) return f(std::integral_constant<int, 16>{});
    return f(std::integral_constant<int, 64>{});
  }
}

template <typename T, bool kDense, typename In>
void launch_jacobians(const detail::JacobianArgs<T, In>& gx, const detail::JacobianArgs<T, In>& gy, cudaStream_t stream) {
  with_feature_tile<T>(gx.dim, [&](auto features) { launch_jacobian<T, decltype(features)::value, kDense>(gx, gy, stream); });
}

// The fused backward and its gradient in one launch (float), when every strip is resident at once:
// there a second launch is a visible share of a training step. Larger problems keep two launches,
// so that the strips run at the backward kernel's own (higher) residency; double keeps them too, as
// the gradient tiles' register cap would spill its backward. Returns whether it launched.
template <typename T, typename In>
bool launch_backward_with_gradient(const Problem& p, const detail::BackwardArgs<T>& args,
                                   const detail::JacobianArgs<T, In>& gx, const detail::JacobianArgs<T, In>& gy,
                                   cudaStream_t stream) {
  if constexpr (!std::is_same_v<T, float>) {
    return false;
  } else {
    return with_feature_tile<T>(p.dim, [&](auto features) {
      constexpr int kFeatures = decltype(features)::value;
      constexpr auto kernel = detail::backward_gradient_kernel<T, kFeatures, In>;
      const int resident = resident_blocks<kernel, detail::kJacThreads>();
      const int64_t strips = args.s.total();
      constexpr int64_t kStripWarps = detail::kStripWarps;
      if (strips > resident * kStripWarps) return false;
      const int64_t tiles = p.batch * detail::GradientTiles<T, kFeatures>(p.n, p.m, p.dim).per_pair();
      const int64_t wanted = std::max((strips + kStripWarps - 1) / kStripWarps, tiles);
      kernel<<<static_cast<int>(std::min<int64_t>(wanted, resident)), detail::kJacThreads, 0, stream>>>(args, gx, gy);
      check(cudaGetLastError(), "backward launch");
      return true;
    });
  }
}

// Calls f(metric) with the metric of a cost other than the squared Euclidean one.
template <typename F>
void with_metric(Cost cost, F&& f) {
  switch (cost) {
    case Cost::l1:
      return f(L1{});
    case Cost::euclidean:
      return f(Euclidean{});
    case Cost::cosine:
      return f(Cosine{});
    case Cost::negative_dot:
      return f(NegativeDot{});
    case Cost::sqeuclidean:
      break;
  }
  throw std::invalid_argument("sdtw::kernels: cost must be one of Cost's values (got " +
                              std::to_string(static_cast<int>(cost)) + ")");
}

template <typename T, typename Metric>
FeatureCost<T, Metric, 8, T> feature_cost(const Problem& p, const T* x, const T* y) {
  require(x, "x");
  require(y, "y");
  return {x, y, p.n, p.m, p.dim, p.x_index, p.y_index};
}

// cost_gradient.cuh's launch, in slices of pairs.
template <typename T, typename Metric>
void launch_cost_gradient(const Problem& p, const WorkspaceLayout& w, const typename CellState<T>::Word* state,
                          const T* x, const T* y, T* grad_x, T* grad_y, cudaStream_t stream) {
  constexpr int64_t kTile = detail::kWarp;
  const int64_t x_blocks = (p.n + kTile - 1) / kTile, y_blocks = (p.m + kTile - 1) / kTile;
  for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, p.batch - first);
    const detail::CostGradientArgs<T> g{count, p.n, p.m, p.dim, w.strips,
                                        p.x_len ? p.x_len + first : nullptr, p.y_len ? p.y_len + first : nullptr,
                                        state + detail::state_index(first * w.strips, p.m, 0, 0),
                                        x + first * p.n * p.dim, y + first * p.m * p.dim,
                                        grad_x + first * p.n * p.dim, grad_y + first * p.m * p.dim};
    const FeatureCost<T, Metric, 8, T> slice{g.x, g.y, p.n, p.m, p.dim};
    const dim3 grid(static_cast<unsigned>(x_blocks + y_blocks), static_cast<unsigned>((p.dim + kTile - 1) / kTile),
                    static_cast<unsigned>(count));
    detail::cost_gradient_kernel<T, Metric><<<grid, detail::cost_gradient_warps<T>() * detail::kWarp, 0, stream>>>(
        slice, g, static_cast<int>(x_blocks));
    check(cudaGetLastError(), "gradient launch");
  }
}

// E in the state becomes the metric's weights W (alignment_weights.cuh), in slices of pairs.
template <typename T, typename Metric>
void launch_alignment_weights(const Problem& p, const WorkspaceLayout& w, typename CellState<T>::Word* state,
                              const T* x, const T* y, cudaStream_t stream) {
  constexpr int64_t kColumns = detail::kWarp * detail::cost_gradient_warps<T>();
  for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, p.batch - first);
    const detail::AlignmentWeightsArgs<T> a{count, p.n, p.m, p.dim, w.strips,
                                            p.x_len ? p.x_len + first : nullptr, p.y_len ? p.y_len + first : nullptr,
                                            state + detail::state_index(first * w.strips, p.m, 0, 0)};
    const FeatureCost<T, Metric, 8, T> slice{x + first * p.n * p.dim, y + first * p.m * p.dim, p.n, p.m, p.dim};
    const dim3 grid(static_cast<unsigned>((p.m + kColumns - 1) / kColumns), static_cast<unsigned>(w.strips),
                    static_cast<unsigned>(count));
    detail::alignment_weights_kernel<T, Metric><<<grid, detail::cost_gradient_warps<T>() * detail::kWarp, 0, stream>>>(
        slice, a);
    check(cudaGetLastError(), "weights launch");
  }
}

}  // namespace

template <typename T>
std::size_t workspace_bytes(const Problem& problem) {
  return layout_for<T>(problem).total;
}

template <typename T>
std::size_t values_workspace_bytes(const Problem& problem) {
  return layout_for<T>(problem, false).total;
}

template <typename T>
void cost_forward(const Problem& p, const T* D, T* values, void* workspace, cudaStream_t stream) {
  reject_pair_indices(p);
  require(D, "D");
  launch_forward(p, PrecomputedCost<T>{D, p.n, p.m}, values, workspace, stream);
}

template <typename T>
void cost_values(const Problem& p, const T* D, T* values, void* workspace, cudaStream_t stream) {
  reject_pair_indices(p);
  require(D, "D");
  launch_forward<T, PrecomputedCost<T>, false>(p, PrecomputedCost<T>{D, p.n, p.m}, values, workspace, stream);
}

template <typename T, typename In>
void sqeuclidean_values(const Problem& p, const In* x, const In* y, T* values, void* workspace, cudaStream_t stream) {
  require(x, "x");
  require(y, "y");
  const SqEuclideanCost<T, 8, In> cost{x, y, p.n, p.m, p.dim, p.x_index, p.y_index};
  launch_forward<T, SqEuclideanCost<T, 8, In>, false>(p, cost, values, workspace, stream);
}

template <typename T>
void cost_backward(const Problem& p, const T* dvalues, T* E, void* workspace, cudaStream_t stream,
                   int64_t dvalues_stride) {
  require(E, "E");
  const detail::BackwardArgs<T> args = backward_args(p, layout_for<T>(p), dvalues, dvalues_stride, E, workspace);
  if (p.x_len || p.y_len)
    check(cudaMemsetAsync(E, 0, sizeof(T) * p.batch * p.n * p.m, stream), "cudaMemsetAsync(E)");
  launch_backward(args, stream);
}

template <typename T, typename In>
void sqeuclidean_forward(const Problem& p, const In* x, const In* y, T* values, void* workspace, cudaStream_t stream) {
  reject_pair_indices(p);
  require(x, "x");
  require(y, "y");
  launch_forward(p, SqEuclideanCost<T, 8, In>{x, y, p.n, p.m, p.dim}, values, workspace, stream);
}

template <typename T, typename In>
void sqeuclidean_backward(const Problem& p, const In* x, const In* y, const T* dvalues, In* grad_x, In* grad_y,
                          void* workspace, cudaStream_t stream, int64_t dvalues_stride) {
  require(x, "x");
  require(y, "y");
  require(grad_x, "grad_x");
  require(grad_y, "grad_y");
  const WorkspaceLayout w = layout_for<T>(p);
  const detail::BackwardArgs<T> args = backward_args(p, w, dvalues, dvalues_stride, static_cast<T*>(nullptr), workspace);
  const detail::JacobianArgs<T, In> gx{p.batch, p.n, p.m, p.dim, w.strips, p.x_len, p.y_len, args.state, x, y, grad_x};
  const detail::JacobianArgs<T, In> gy{p.batch, p.n, p.m, p.dim, w.strips, p.x_len, p.y_len, args.state, y, x, grad_y};
  if (launch_backward_with_gradient(p, args, gx, gy, stream)) return;
  launch_backward(args, stream);
  launch_jacobians<T, false>(gx, gy, stream);
}

template <typename T, typename In>
void sqeuclidean_cost_backward(const Problem& p, const In* x, const In* y, const T* G, In* grad_x, In* grad_y,
                               cudaStream_t stream) {
  if (p.batch < 1 || p.n < 1 || p.m < 1 || p.dim < 1)
    reject("sqeuclidean_cost_backward needs batch, n, m and dim >= 1");
  require(x, "x");
  require(y, "y");
  require(G, "G");
  require(grad_x, "grad_x");
  require(grad_y, "grad_y");
  const detail::JacobianArgs<T, In> gx{p.batch, p.n, p.m, p.dim, 0, nullptr, nullptr, nullptr, x, y, grad_x, G};
  const detail::JacobianArgs<T, In> gy{p.batch, p.n, p.m, p.dim, 0, nullptr, nullptr, nullptr, y, x, grad_y, G};
  launch_jacobians<T, true>(gx, gy, stream);
}

template <typename T, typename In>
void sqeuclidean_cost(const Problem& p, const In* x, const In* y, T* D, cudaStream_t stream) {
  if (p.batch < 1 || p.n < 1 || p.m < 1 || p.dim < 1)
    reject("sqeuclidean_cost needs batch, n, m and dim >= 1");
  require(x, "x");
  require(y, "y");
  require(D, "D");
  constexpr int64_t kTile = detail::kWarp, kCols = kTile * detail::kCostTileWarps;
  for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, p.batch - first);
    const dim3 grid(static_cast<unsigned>((p.m + kCols - 1) / kCols), static_cast<unsigned>((p.n + kTile - 1) / kTile),
                    static_cast<unsigned>(count));
    const SqEuclideanCost<T, 8, In> cost{x + first * p.n * p.dim, y + first * p.m * p.dim, p.n, p.m, p.dim};
    detail::cost_tile_kernel<T><<<grid, kCols, 0, stream>>>(cost, p.n, p.m, D + first * p.n * p.m);
    check(cudaGetLastError(), "cost launch");
  }
}

Cost cost_named(const std::string& name) {
  constexpr std::pair<const char*, Cost> kNames[] = {{"sqeuclidean", Cost::sqeuclidean}, {"l1", Cost::l1},
                                                     {"euclidean", Cost::euclidean},     {"cosine", Cost::cosine},
                                                     {"negative_dot", Cost::negative_dot}};
  for (const auto& [known, cost] : kNames)
    if (name == known) return cost;
  throw std::invalid_argument("sdtw::kernels: cost must be 'sqeuclidean', 'l1', 'euclidean', 'cosine' or "
                              "'negative_dot' (got '" + name + "')");
}

template <typename T>
void fused_values(const Problem& p, Cost cost, const T* x, const T* y, T* values, void* workspace, cudaStream_t stream) {
  if (cost == Cost::sqeuclidean) return sqeuclidean_values<T, T>(p, x, y, values, workspace, stream);
  with_metric(cost, [&](auto metric) {
    using Policy = FeatureCost<T, decltype(metric), 8, T>;
    launch_forward<T, Policy, false>(p, feature_cost<T, decltype(metric)>(p, x, y), values, workspace, stream);
  });
}

template <typename T>
void fused_forward(const Problem& p, Cost cost, const T* x, const T* y, T* values, void* workspace, cudaStream_t stream) {
  if (cost == Cost::sqeuclidean) return sqeuclidean_forward<T, T>(p, x, y, values, workspace, stream);
  reject_pair_indices(p);
  with_metric(cost, [&](auto metric) { launch_forward(p, feature_cost<T, decltype(metric)>(p, x, y), values, workspace, stream); });
}

// The named costs' gradients: L1 by cost_gradient.cuh's loop; the costs linear in the rows by the
// squared Euclidean's tensor-core product over their weights W (alignment_weights.cuh), negative dot
// on E as it is (one launch with the backward where the squared Euclidean gets one).
template <typename T>
void fused_backward(const Problem& p, Cost cost, const T* x, const T* y, const T* dvalues, T* grad_x, T* grad_y,
                    void* workspace, cudaStream_t stream, int64_t dvalues_stride) {
  if (cost == Cost::sqeuclidean)
    return sqeuclidean_backward<T, T>(p, x, y, dvalues, grad_x, grad_y, workspace, stream, dvalues_stride);
  require(x, "x");
  require(y, "y");
  require(grad_x, "grad_x");
  require(grad_y, "grad_y");
  with_metric(cost, [](auto) {});  // an unknown Cost is named before any launch
  const WorkspaceLayout w = layout_for<T>(p);
  const detail::BackwardArgs<T> args = backward_args(p, w, dvalues, dvalues_stride, static_cast<T*>(nullptr), workspace);
  if (cost == Cost::l1) {
    launch_backward(args, stream);
    return launch_cost_gradient<T, L1>(p, w, args.state, x, y, grad_x, grad_y, stream);
  }
  detail::JacobianArgs<T, T> gx{p.batch, p.n, p.m, p.dim, w.strips, p.x_len, p.y_len, args.state, x, y, grad_x};
  detail::JacobianArgs<T, T> gy{p.batch, p.n, p.m, p.dim, w.strips, p.x_len, p.y_len, args.state, y, x, grad_y};
  gx.scale = gy.scale = T(1);
  gx.self_weight = gy.self_weight = cost == Cost::euclidean ? T(1) : T(0);
  if (cost == Cost::negative_dot) {
    if (launch_backward_with_gradient(p, args, gx, gy, stream)) return;
    launch_backward(args, stream);
    return launch_jacobians<T, false>(gx, gy, stream);
  }
  launch_backward(args, stream);
  if (cost == Cost::euclidean)
    launch_alignment_weights<T, Euclidean>(p, w, args.state, x, y, stream);
  else
    launch_alignment_weights<T, Cosine>(p, w, args.state, x, y, stream);
  launch_jacobians<T, false>(gx, gy, stream);
  if (cost == Cost::cosine) {
    constexpr int kThreads = 256, kRowsPerBlock = kThreads / detail::kWarp;
    const int64_t rows = p.batch * (p.n + p.m);
    detail::project_out_rows<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0,
                                  stream>>>(p.batch * p.n, p.batch * p.m, p.dim, x, y, grad_x, grad_y);
    check(cudaGetLastError(), "projection launch");
  }
}

template <typename T>
void fused_cost(const Problem& p, Cost cost, const T* x, const T* y, T* D, cudaStream_t stream) {
  if (cost == Cost::sqeuclidean) return sqeuclidean_cost<T, T>(p, x, y, D, stream);
  if (p.batch < 1 || p.n < 1 || p.m < 1 || p.dim < 1)
    throw std::invalid_argument("sdtw::kernels: fused_cost needs batch, n, m and dim >= 1");
  require(D, "D");
  with_metric(cost, [&](auto metric) {
    using Metric = decltype(metric);
    constexpr int64_t kTile = detail::kWarp, kCols = kTile * detail::kCostTileWarps;
    for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
      const int64_t count = std::min(kMaxGridZ, p.batch - first);
      const dim3 grid(static_cast<unsigned>((p.m + kCols - 1) / kCols), static_cast<unsigned>((p.n + kTile - 1) / kTile),
                      static_cast<unsigned>(count));
      const FeatureCost<T, Metric, 8, T> policy{x + first * p.n * p.dim, y + first * p.m * p.dim, p.n, p.m, p.dim};
      detail::cost_tile_kernel<T><<<grid, kCols, 0, stream>>>(policy, p.n, p.m, D + first * p.n * p.m);
      check(cudaGetLastError(), "cost launch");
    }
  });
}

#define SDTW_INSTANTIATE(T)                                                                                   \
  template std::size_t workspace_bytes<T>(const Problem&);                                                    \
  template std::size_t values_workspace_bytes<T>(const Problem&);                                             \
  template void cost_values<T>(const Problem&, const T*, T*, void*, cudaStream_t);                            \
  template void cost_forward<T>(const Problem&, const T*, T*, void*, cudaStream_t);                           \
  template void cost_backward<T>(const Problem&, const T*, T*, void*, cudaStream_t, int64_t);                \
  template void fused_values<T>(const Problem&, Cost, const T*, const T*, T*, void*, cudaStream_t);          \
  template void fused_forward<T>(const Problem&, Cost, const T*, const T*, T*, void*, cudaStream_t);         \
  template void fused_backward<T>(const Problem&, Cost, const T*, const T*, const T*, T*, T*, void*,          \
                                  cudaStream_t, int64_t);                                                     \
  template void fused_cost<T>(const Problem&, Cost, const T*, const T*, T*, cudaStream_t);
#define SDTW_INSTANTIATE_INPUTS(T, In)                                                                        \
  template void sqeuclidean_values<T, In>(const Problem&, const In*, const In*, T*, void*, cudaStream_t);    \
  template void sqeuclidean_forward<T, In>(const Problem&, const In*, const In*, T*, void*, cudaStream_t);   \
  template void sqeuclidean_backward<T, In>(const Problem&, const In*, const In*, const T*, In*, In*, void*,   \
                                            cudaStream_t, int64_t);                                           \
  template void sqeuclidean_cost<T, In>(const Problem&, const In*, const In*, T*, cudaStream_t);             \
  template void sqeuclidean_cost_backward<T, In>(const Problem&, const In*, const In*, const T*, In*, In*, cudaStream_t);
SDTW_INSTANTIATE(float)
SDTW_INSTANTIATE(double)
SDTW_INSTANTIATE_INPUTS(float, float)
SDTW_INSTANTIATE_INPUTS(double, double)
SDTW_INSTANTIATE_INPUTS(float, __nv_bfloat16)
SDTW_INSTANTIATE_INPUTS(float, __half)
#undef SDTW_INSTANTIATE_INPUTS
#undef SDTW_INSTANTIATE

}  // namespace sdtw::kernels

// The checkpointed mode: its host code shares this file's launch helpers and kernel instantiations.
#include "checkpoint.cuh"
