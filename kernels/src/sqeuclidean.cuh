#pragma once
// The squared Euclidean cost's entry points (sdtw/kernels/soft_dtw.hpp), defined for the files that
// instantiate them per dtype and input type (sqeuclidean_float.cu, sqeuclidean_double.cu), so that
// their kernels compile in parallel.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "gradient_launch.cuh"
#include "launch.cuh"
#include "pair_per_thread.cuh"
#include "pairwise.cuh"
#include "sdtw/kernels/costs.cuh"
#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels {
namespace {

using detail::backward_args;
using detail::check;
using detail::kMaxGridZ;
using detail::launch_backward;
using detail::launch_backward_with_gradient;
using detail::launch_forward;
using detail::launch_jacobians;
using detail::layout_for;
using detail::reject;
using detail::reject_pair_indices;
using detail::require;
using detail::WorkspaceLayout;

}  // namespace

namespace detail {

template <int kD>
bool launch_pair_values(const Problem& p, const WorkspaceLayout& w, const float* x, const float* y, float* values,
                        void* workspace, cudaStream_t stream) {
  constexpr auto kernel = pair_values_kernel<kD>;
  // As many pairs as the device holds threads of it: with fewer it idles while each thread walks a
  // whole pair (measured 2.1x the strips at 0.95 of that, lab/kernels-log.md; smaller not measured).
  if (p.batch < int64_t{kPairThreads} * resident_blocks<kernel, kPairThreads>()) return false;
  auto* border = reinterpret_cast<double*>(static_cast<char*>(workspace) + w.ring);  // m x batch fit in the ring
  const PairValuesArgs args{x, y, p.batch, p.n, p.m, p.x_index, p.y_index, p.x_len, p.y_len, p.gamma, border, values};
  kernel<<<static_cast<unsigned>((p.batch + kPairThreads - 1) / kPairThreads), kPairThreads, 0, stream>>>(args);
  check(cudaGetLastError(), "pair values launch");
  return true;
}

// One pair per thread (pair_per_thread.cuh) where it applies: float32 inputs read through pair
// indices, gamma > 0, no band or constraint, dim 8, 16, 32 or 64 with rows 16-byte aligned, and
// enough pairs. Returns whether it ran.
template <typename T, typename In>
bool pair_values(const Problem& p, const In* x, const In* y, T* values, void* workspace, cudaStream_t stream) {
  if constexpr (!std::is_same_v<T, float> || !std::is_same_v<In, float>) {
    return false;
  } else {
    const auto aligned = [](const void* v) { return reinterpret_cast<uintptr_t>(v) % 16 == 0; };
    if (!p.x_index || !p.y_index || !(p.gamma > 0.0) || p.bandwidth >= 0 || p.constraint.kind != ConstraintKind::none ||
        !aligned(x) || !aligned(y))
      return false;
    const WorkspaceLayout w = layout_for<T>(p, false);
    require(values, "values");
    require(workspace, "workspace");
    switch (p.dim) {
      case 8: return launch_pair_values<8>(p, w, x, y, values, workspace, stream);
      case 16: return launch_pair_values<16>(p, w, x, y, values, workspace, stream);
      case 32: return launch_pair_values<32>(p, w, x, y, values, workspace, stream);
      case 64: return launch_pair_values<64>(p, w, x, y, values, workspace, stream);
      default: return false;
    }
  }
}

}  // namespace detail

template <typename T, typename In>
void sqeuclidean_values(const Problem& p, const In* x, const In* y, T* values, void* workspace, cudaStream_t stream) {
  require(x, "x");
  require(y, "y");
  if (detail::pair_values(p, x, y, values, workspace, stream)) return;
  const SqEuclideanCost<T, 8, In> cost{x, y, p.n, p.m, p.dim, p.x_index, p.y_index};
  launch_forward<T, SqEuclideanCost<T, 8, In>, false>(p, cost, values, workspace, stream);
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

}  // namespace sdtw::kernels

#define SDTW_INSTANTIATE_SQEUCLIDEAN(T, In)                                                                   \
  template void sqeuclidean_values<T, In>(const Problem&, const In*, const In*, T*, void*, cudaStream_t);    \
  template void sqeuclidean_forward<T, In>(const Problem&, const In*, const In*, T*, void*, cudaStream_t);   \
  template void sqeuclidean_backward<T, In>(const Problem&, const In*, const In*, const T*, In*, In*, void*,   \
                                            cudaStream_t, int64_t);                                           \
  template void sqeuclidean_cost<T, In>(const Problem&, const In*, const In*, T*, cudaStream_t);             \
  template void sqeuclidean_cost_backward<T, In>(const Problem&, const In*, const In*, const T*, In*, In*, cudaStream_t);
