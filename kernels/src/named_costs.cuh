#pragma once
// The named costs' entry points (fused_values, fused_forward, fused_backward, fused_cost), defined
// for the files that instantiate them per dtype (named_costs_float.cu, named_costs_double.cu,
// named_values_double.cu), so that their kernels compile in parallel. The squared Euclidean cost
// goes to its own entry points, instantiated in sqeuclidean_*.cu.
#include <algorithm>
#include <string>

#include "alignment_weights.cuh"
#include "cost_gradient.cuh"
#include "gradient_launch.cuh"
#include "launch.cuh"
#include "pairwise.cuh"
#include "sdtw/kernels/costs.cuh"
#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels {
namespace {

using detail::backward_args;
using detail::CellState;
using detail::check;
using detail::kMaxGridZ;
using detail::launch_backward;
using detail::launch_backward_with_gradient;
using detail::launch_forward;
using detail::launch_jacobians;
using detail::layout_for;
using detail::reject_pair_indices;
using detail::require;
using detail::WorkspaceLayout;

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
    constexpr int64_t kGroup = kTile * detail::cost_gradient_features<T>();
    const dim3 grid(static_cast<unsigned>(x_blocks + y_blocks), static_cast<unsigned>((p.dim + kGroup - 1) / kGroup),
                    static_cast<unsigned>(count));
    detail::cost_gradient_kernel<T, Metric><<<grid, detail::cost_gradient_warps<T>() * detail::kWarp, 0, stream>>>(
        g, static_cast<int>(x_blocks));
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
// squared Euclidean's tensor-core product: Euclidean over its weights W (alignment_weights.cuh),
// negative dot over E as it is and cosine over E with unit rows (kUnitRows), both in one launch with the
// backward where the squared Euclidean gets one, cosine then projecting out each row's radial part.
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
  if (cost == Cost::euclidean) {
    launch_backward(args, stream);
    launch_alignment_weights<T, Euclidean>(p, w, args.state, x, y, stream);
    return launch_jacobians<T, false>(gx, gy, stream);
  }
  const auto backward_and_gradient = [&](auto unit_rows) {
    constexpr bool kUnitRows = decltype(unit_rows)::value;
    if (launch_backward_with_gradient<kUnitRows>(p, args, gx, gy, stream)) return;
    launch_backward(args, stream);
    launch_jacobians<T, false, kUnitRows>(gx, gy, stream);
  };
  if (cost == Cost::negative_dot) return backward_and_gradient(std::false_type{});
  backward_and_gradient(std::true_type{});
  constexpr int kThreads = 256, kRowsPerBlock = kThreads / detail::kWarp;
  const int64_t rows = p.batch * (p.n + p.m);
  detail::project_out_rows<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0,
                                stream>>>(p.batch * p.n, p.batch * p.m, p.dim, x, y, grad_x, grad_y);
  check(cudaGetLastError(), "projection launch");
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

}  // namespace sdtw::kernels
