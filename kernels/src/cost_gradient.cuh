#pragma once
// The fused gradient of a metric whose d cost / d self_f needs only E and the two features (L1:
// sign(self_f - other_f) E), which no matrix product gives: grad_self(r, f) = sum_k derivative(E,
// self_f, other_f) on CUDA cores. A block holds 32 rows of one side (x for grad_x, y for grad_y)
// and kFeatures features a lane; it walks the other side in chunks of 32 * kWarps rows, reading
// each chunk's E from the saved state once for all its features. No cost is recomputed.
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

// Warps of a block, as the backward's (the alignment weights pass shares it).
template <typename T>
__host__ __device__ constexpr int cost_gradient_warps() {
  return warps_per_block<T>();
}

// Features a lane: float's two halve the E reads at D = 64; double's registers hold one.
template <typename T>
__host__ __device__ constexpr int cost_gradient_features() {
  return sizeof(T) == 4 ? 2 : 1;
}

// Four consecutive values of a 16-byte aligned shared row, by vector loads.
template <typename T>
__device__ void load_four(const T* at, T (&out)[4]) {
  if constexpr (sizeof(T) == 4) {
    const float4 v = *reinterpret_cast<const float4*>(at);
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else {
    const double2 lo = reinterpret_cast<const double2*>(at)[0], hi = reinterpret_cast<const double2*>(at)[1];
    out[0] = lo.x, out[1] = lo.y, out[2] = hi.x, out[3] = hi.y;
  }
}

// Grid: (blocks of 32 rows of x, then of y; groups of 32 * kFeatures features; batch). for_y is
// decided per block, so one launch gives both gradients.
template <typename T, typename Metric>
__global__ void __launch_bounds__(cost_gradient_warps<T>() * kWarp) cost_gradient_kernel(CostGradientArgs<T> a, int x_blocks) {
  using State = CellState<T>;
  constexpr int kWarps = cost_gradient_warps<T>(), kInner = kWarps * kWarp, kRowsPerWarp = kWarp / kWarps;
  constexpr int kFeatures = cost_gradient_features<T>();
  // [warp][self row][other row] of the chunk's E. Rows kWarp + 4 apart: 16-byte aligned for the
  // loop's vector reads, and a warp step's writes (lane l at other row t - l for x, self row t - l
  // for y) fall in 32 banks either way.
  __shared__ __align__(16) T e_tile[kWarps][kWarp][kWarp + 4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  const bool for_y = static_cast<int>(blockIdx.x) >= x_blocks;
  const int64_t b = blockIdx.z, f0 = static_cast<int64_t>(blockIdx.y) * kWarp * kFeatures + lane;
  const int64_t xl = a.x_len ? Schedule::clamp_length(a.x_len[b], a.n) : a.n;
  const int64_t yl = a.y_len ? Schedule::clamp_length(a.y_len[b], a.m) : a.m;
  const int64_t self_rows = for_y ? a.m : a.n, other_rows = for_y ? a.n : a.m;
  const int64_t self_len = for_y ? yl : xl, other_len = for_y ? xl : yl;
  const int64_t r0 = static_cast<int64_t>(for_y ? blockIdx.x - x_blocks : blockIdx.x) * kWarp;
  const T* self = (for_y ? a.y : a.x) + b * self_rows * a.dim;
  const T* other = (for_y ? a.x : a.y) + b * other_rows * a.dim;

  T self_f[kFeatures][kRowsPerWarp], acc[kFeatures][kRowsPerWarp];
#pragma unroll
  for (int u = 0; u < kFeatures; ++u)
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q) {
      const int64_t row = r0 + warp + q * kWarps, f = f0 + u * kWarp;
      self_f[u][q] = f < a.dim && row < self_rows ? self[row * a.dim + f] : T(0);
      acc[u][q] = T(0);
    }

  for (int64_t k0 = 0; k0 < other_len; k0 += kInner) {
    // This warp's 32 x 32 tile of the chunk: x rows [i0, i0 + 32), y columns [j0, j0 + 32).
    const int64_t i0 = for_y ? k0 + warp * kWarp : r0, j0 = for_y ? r0 : k0 + warp * kWarp;
    bool nonzero = false;
    if (i0 < a.n && j0 < a.m) {
      // One strip's words: warp step t holds column t - lane of row i0 + lane, so steps
      // [j0, j0 + 63) cover the tile. Cells past the lengths hold no E (their words may still
      // hold costs): 0.
      const auto* words = a.state + state_index(b * a.strips + i0 / kWarp, a.m, 0, lane);
      for (int t = 0; t < 2 * kWarp - 1; ++t) {
        const int c = t - lane;
        const bool cell = c >= 0 && c < kWarp;
        const T e = cell && i0 + lane < xl && j0 + c < yl ? State::held(words[(j0 + t) * kWarp]) : T(0);
        if (cell) (for_y ? e_tile[warp][c][lane] : e_tile[warp][lane][c]) = e;
        nonzero |= e != T(0);
      }
    } else {
      for (int r = 0; r < kWarp; ++r) e_tile[warp][r][lane] = T(0);
    }
    // E vanishes (underflows to 0) a few cells off the alignment, so most chunks of a long pair add
    // nothing: skipping them is exact (a NaN E is not 0 and is summed).
    if (!__syncthreads_or(nonzero)) continue;
    // Other rows past the chunk's end have E = 0 in the tile: whole groups of four, their features read as 0.
    const int64_t inner = min(static_cast<int64_t>(kInner), other_len - k0);
    for (int k = 0; k < inner; k += 4) {
      T o[kFeatures][4];
#pragma unroll
      for (int u = 0; u < kFeatures; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int64_t row = k0 + k + v, f = f0 + u * kWarp;
          o[u][v] = row < other_len && f < a.dim ? other[row * a.dim + f] : T(0);
        }
      const int tile = k / kWarp, kk = k % kWarp;
#pragma unroll
      for (int q = 0; q < kRowsPerWarp; ++q) {
        T e[4];
        load_four(&e_tile[tile][warp + q * kWarps][kk], e);
#pragma unroll
        for (int u = 0; u < kFeatures; ++u)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[u][q] += Metric::derivative(e[v], self_f[u][q], o[u][v]);
      }
    }
    __syncthreads();
  }
  T* grad = (for_y ? a.grad_y : a.grad_x) + b * self_rows * a.dim;
#pragma unroll
  for (int u = 0; u < kFeatures; ++u)
#pragma unroll
    for (int q = 0; q < kRowsPerWarp; ++q) {
      const int64_t row = r0 + warp + q * kWarps, f = f0 + u * kWarp;
      if (f < a.dim && row < self_rows) grad[row * a.dim + f] = row < self_len ? acc[u][q] : T(0);
    }
}

}  // namespace sdtw::kernels::detail
