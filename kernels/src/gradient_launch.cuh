#pragma once
// The host side of the gradient's launches (the cost's Jacobian product over E or a cost-sized G, in
// slices of pairs, and the one-launch backward with its gradient), shared by the squared
// Euclidean's, the named costs' and the checkpointed mode's files.
#include <algorithm>
#include <type_traits>

#include "backward_gradient.cuh"
#include "jacobian.cuh"
#include "launch.cuh"

namespace sdtw::kernels::detail {

// A grid holds at most 65535 pairs in z: larger batches go in slices of pairs.
constexpr int64_t kMaxGridZ = 65535;

// The arguments of pairs [first, first + count) alone. self_rows and other_rows: n or m.
template <typename T, typename In>
JacobianArgs<T, In> pairs_of(JacobianArgs<T, In> a, int64_t first, int64_t count, int64_t self_rows,
                                     int64_t other_rows) {
  a.batch = count;
  if (a.x_len) a.x_len += first;
  if (a.y_len) a.y_len += first;
  if (a.state) a.state += state_index(first * a.strips, a.m, 0, 0);
  if (a.dense) a.dense += first * a.n * a.m;
  a.self += first * self_rows * a.dim;
  a.other += first * other_rows * a.dim;
  a.grad += first * self_rows * a.dim;
  return a;
}

// A feature tile of kFeatures: small dims use narrow tiles with more rows per block. kUnitRows:
// cosine's product (jacobian_block).
template <typename T, int kFeatures, bool kDense, bool kUnitRows, typename In>
void launch_jacobian(const JacobianArgs<T, In>& gx, const JacobianArgs<T, In>& gy, cudaStream_t stream) {
  const GradientTiles<T, kFeatures> tiles(gx.n, gx.m, gx.dim);
  for (int64_t first = 0; first < gx.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, gx.batch - first);
    const dim3 grid(static_cast<unsigned>(tiles.x_blocks + tiles.y_blocks), static_cast<unsigned>(tiles.features),
                    static_cast<unsigned>(count));
    jacobian_kernel<T, kFeatures, kDense, In, false, kUnitRows><<<grid, kJacThreads, 0, stream>>>(
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

template <typename T, bool kDense, bool kUnitRows = false, typename In>
void launch_jacobians(const JacobianArgs<T, In>& gx, const JacobianArgs<T, In>& gy, cudaStream_t stream) {
  with_feature_tile<T>(gx.dim, [&](auto features) {
    launch_jacobian<T, decltype(features)::value, kDense, kUnitRows>(gx, gy, stream);
  });
}

// The fused backward and its gradient in one launch (float), when every strip is resident at once:
// there a second launch is a visible share of a training step. Larger problems keep two launches,
// so that the strips run at the backward kernel's own (higher) residency; double keeps them too, as
// the gradient tiles' register cap would spill its backward. Returns whether it launched.
template <bool kUnitRows = false, typename T, typename In>
bool launch_backward_with_gradient(const Problem& p, const BackwardArgs<T>& args,
                                   const JacobianArgs<T, In>& gx, const JacobianArgs<T, In>& gy,
                                   cudaStream_t stream) {
  if constexpr (!std::is_same_v<T, float>) {
    return false;
  } else {
    return with_feature_tile<T>(p.dim, [&](auto features) {
      constexpr int kFeatures = decltype(features)::value;
      constexpr auto kernel = backward_gradient_kernel<T, kFeatures, In, kUnitRows>;
      const int resident = resident_blocks<kernel, kJacThreads>();
      const int64_t strips = args.s.total();
      if (strips > resident * kStripWarps) return false;
      const int64_t tiles = p.batch * GradientTiles<T, kFeatures>(p.n, p.m, p.dim).per_pair();
      const int64_t wanted = std::max((strips + kStripWarps - 1) / kStripWarps, tiles);
      kernel<<<static_cast<int>(std::min<int64_t>(wanted, resident)), kJacThreads, 0, stream>>>(args, gx, gy);
      check(cudaGetLastError(), "backward launch");
      return true;
    });
  }
}

}  // namespace sdtw::kernels::detail
