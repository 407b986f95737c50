#pragma once
// The fused gradient of a FeatureCost other than the squared Euclidean one (which factors into the
// tensor-core product of jacobian.cuh): grad_self(r, f) = sum_k E * d cost / d self_f, with the
// metric's pair weights (costs.cuh). A block holds 32 rows of one side (x for grad_x, y for
// grad_y) and 32 features; it walks the other side in tiles of 32 * kWarps rows, recomputing each
// tile's costs by the policy's column() (the forward's code) and reading E from the saved state.
#include "forward.cuh"
#include "sdtw/kernels/costs.cuh"

namespace sdtw::kernels::detail {

template <typename T>
struct CostGradientArgs {
  int64_t batch, n, m, dim, strips;
  const int64_t* x_len;
  const int64_t* y_len;
  const typename CellState<T>::Word* state;  // holds E after the backward
  const T* x;
  const T* y;
  T* grad_x;
  T* grad_y;
};

// Warps of a block: keeps its two (32 x 32 per warp) tiles of T under 48 KB of static shared memory.
template <typename T>
__host__ __device__ constexpr int cost_gradient_warps() {
  return warps_per_block<T>();
}

// ||row||^2 of a row of dim features.
template <typename T>
__device__ T squared_norm(const T* row, int64_t dim) {
  T acc = T(0);
  for (int64_t f = 0; f < dim; ++f) acc = fma(row[f], row[f], acc);
  return acc;
}

// Grid: (blocks of 32 rows of x, then of y; tiles of 32 features; batch). for_y is decided per
// block, so one launch gives both gradients.
template <typename T, typename Metric>
__global__ void __launch_bounds__(cost_gradient_warps<T>() * kWarp)
    cost_gradient_kernel(FeatureCost<T, Metric, 8, T> cost, CostGradientArgs<T> a, int x_blocks) {
  using State = CellState<T>;
  constexpr int kWarps = cost_gradient_warps<T>(), kInner = kWarps * kWarp, kRowsPerWarp = kWarp / kWarps;
  // [warp][x row][y column] of the tile: the cost, then (in place) the weights of self and of other.
  // Rows kWarp + 2 apart: E arrives a warp step at a time, lane l at (row l, column t - l), which
  // kWarp + 1 would put in one bank.
  __shared__ T w_self[kWarps][kWarp][kWarp + 2];
  __shared__ T w_other[kWarps][kWarp][kWarp + 2];
  __shared__ typename FeatureCost<T, Metric, 8, T>::Scratch scratch[kWarps];
  __shared__ T self_norm2[kWarp], other_norm2[kInner];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  const bool for_y = static_cast<int>(blockIdx.x) >= x_blocks;
  const int64_t b = blockIdx.z, f = static_cast<int64_t>(blockIdx.y) * kWarp + lane;
  const int64_t xl = a.x_len ? Schedule::clamp_length(a.x_len[b], a.n) : a.n;
  const int64_t yl = a.y_len ? Schedule::clamp_length(a.y_len[b], a.m) : a.m;
  const int64_t self_rows = for_y ? a.m : a.n, other_rows = for_y ? a.n : a.m;
  const int64_t self_len = for_y ? yl : xl, other_len = for_y ? xl : yl;
  const int64_t r0 = static_cast<int64_t>(for_y ? blockIdx.x - x_blocks : blockIdx.x) * kWarp;
  const T* self = (for_y ? a.y : a.x) + b * self_rows * a.dim;
  const T* other = (for_y ? a.x : a.y) + b * other_rows * a.dim;
  const bool feature_ok = f < a.dim;

  if constexpr (Metric::kNorms)
    if (threadIdx.x < kWarp) self_norm2[lane] = r0 + lane < self_rows ? squared_norm(self + (r0 + lane) * a.dim, a.dim) : T(1);
  T self_f[kRowsPerWarp], acc[kRowsPerWarp];
#pragma unroll
  for (int q = 0; q < kRowsPerWarp; ++q) {
    const int64_t row = r0 + warp + q * kWarps;
    self_f[q] = feature_ok && row < self_rows ? self[row * a.dim + f] : T(0);
    acc[q] = T(0);
  }

  for (int64_t k0 = 0; k0 < other_len; k0 += kInner) {
    if constexpr (Metric::kNorms) {
      const int64_t k = k0 + threadIdx.x;
      if (threadIdx.x < kInner) other_norm2[threadIdx.x] = k < other_rows ? squared_norm(other + k * a.dim, a.dim) : T(1);
    }
    // This warp's 32 x 32 tile: x rows [i0, i0 + 32), y columns [j0, j0 + 32); lane = y column.
    const int64_t i0 = for_y ? k0 + warp * kWarp : r0, j0 = for_y ? r0 : k0 + warp * kWarp;
    if (i0 < a.n && j0 < a.m) {
      T column[kWarp];
      cost.column(b, i0, a.n, j0 + lane < a.m ? j0 + lane : a.m - 1, scratch[warp], column);
#pragma unroll
      for (int r = 0; r < kWarp; ++r) w_self[warp][r][lane] = column[r];
      // E of the tile from x rows [i0, i0 + 32), one strip: warp step t holds column t - lane of
      // row i0 + lane, so steps [j0, j0 + 63) cover the tile, each read whole. Cells past the
      // lengths hold no E (their words may still hold costs): 0.
      const auto* words = a.state + state_index(b * a.strips + i0 / kWarp, a.m, 0, lane);
      for (int t = 0; t < 2 * kWarp - 1; ++t) {
        const int c = t - lane;
        const int64_t j = j0 + c;
        const bool cell = c >= 0 && c < kWarp;
        const T e = cell && i0 + lane < xl && j < yl ? State::held(words[(j0 + t) * kWarp]) : T(0);
        if (cell) w_other[warp][lane][c] = e;
      }
    } else {
#pragma unroll
      for (int r = 0; r < kWarp; ++r) w_self[warp][r][lane] = w_other[warp][r][lane] = T(0);
    }
    __syncthreads();
    // Cost and E into the two pair weights, in place; self and other norms by the block's orientation.
    for (int idx = lane; idx < kWarp * kWarp; idx += kWarp) {
      const int xr = idx / kWarp, yc = idx % kWarp;
      const int self_at = for_y ? yc : xr, other_at = warp * kWarp + (for_y ? xr : yc);
      [[maybe_unused]] T sn2 = T(0), on2 = T(0);
      if constexpr (Metric::kNorms) sn2 = self_norm2[self_at], on2 = other_norm2[other_at];
      T ws, wo;
      Metric::weights(w_other[warp][xr][yc], w_self[warp][xr][yc], sn2, on2, ws, wo);
      w_self[warp][xr][yc] = ws;
      w_other[warp][xr][yc] = wo;
    }
    __syncthreads();
    const int64_t inner = min(static_cast<int64_t>(kInner), other_len - k0);
    for (int k = 0; k < inner; ++k) {
      const T o = feature_ok ? other[(k0 + k) * a.dim + f] : T(0);
      const int tile = k / kWarp, kk = k % kWarp;
#pragma unroll
      for (int q = 0; q < kRowsPerWarp; ++q) {
        const int r = warp + q * kWarps;
        const T ws = for_y ? w_self[tile][kk][r] : w_self[tile][r][kk];
        const T wo = for_y ? w_other[tile][kk][r] : w_other[tile][r][kk];
        acc[q] += Metric::derivative(ws, wo, self_f[q], o);
      }
    }
    __syncthreads();
  }
  T* grad = (for_y ? a.grad_y : a.grad_x) + b * self_rows * a.dim;
#pragma unroll
  for (int q = 0; q < kRowsPerWarp; ++q) {
    const int64_t row = r0 + warp + q * kWarps;
    if (feature_ok && row < self_rows) grad[row * a.dim + f] = row < self_len ? acc[q] : T(0);
  }
}

}  // namespace sdtw::kernels::detail
