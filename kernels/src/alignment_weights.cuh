#pragma once
// The named costs whose derivative is linear in the rows (d cost / d self = w_self self + w_other
// other) reach the tensor-core product of jacobian.cuh instead of cost_gradient.cuh's CUDA-core
// loop. grad_self_r = sum_k w_self(r, k) self_r + sum_k w_other(r, k) other_k, and w_other is
// symmetric in x and y for every such metric, so W = -w_other is one matrix for both gradients:
// - negative dot: W = E, w_self = 0 (the saved E as it is);
// - Euclidean: W = E / cost = w_self, so the product's own row sums give the self term; the kernel
//   below rewrites E in the state in place (cells outside a pair's lengths are left as they are:
//   the product reads them as 0);
// - cosine: W = E / (|x_i| |y_j|) (clamped norms), which the product forms itself (jacobian_block's
//   kUnitRows), and
//   sum_k w_self(r, k) = <self_r, (W other)_r> / |self_r|^2, a projection applied after the product
//   (project_out_rows).
#include "cost_gradient.cuh"

namespace sdtw::kernels::detail {

template <typename T>
struct AlignmentWeightsArgs {
  int64_t batch, n, m, dim, strips;
  const int64_t* x_len;
  const int64_t* y_len;
  typename CellState<T>::Word* state;  // E in, W out
};

// Grid: (tiles of 32 columns, kWarps a block; strips of 32 rows; pairs). A warp's 32 x 32 tile:
// its costs by the policy's column() (the forward's code), staged so that each cell finds its
// own, then W over the E the backward left there.
template <typename T, typename Metric>
__global__ void __launch_bounds__(cost_gradient_warps<T>() * kWarp)
    alignment_weights_kernel(FeatureCost<T, Metric, 8, T> cost, AlignmentWeightsArgs<T> a) {
  using State = CellState<T>;
  static_assert(!Metric::kNorms, "a metric whose weights need the rows' norms (cosine) takes the product's kUnitRows");
  constexpr int kWarps = cost_gradient_warps<T>();
  // [warp][x row][y column]; rows kWarp + 2 apart, so that the 32 lanes of a warp step, each at
  // (row lane, column t - lane), fall in 32 banks (kWarp + 1 puts them all in one).
  __shared__ T costs[kWarps][kWarp][kWarp + 2];
  __shared__ typename FeatureCost<T, Metric, 8, T>::Scratch scratch[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  const int64_t b = blockIdx.z, i0 = static_cast<int64_t>(blockIdx.y) * kWarp;
  const int64_t j0 = (static_cast<int64_t>(blockIdx.x) * kWarps + warp) * kWarp;
  const int64_t xl = a.x_len ? Schedule::clamp_length(a.x_len[b], a.n) : a.n;
  const int64_t yl = a.y_len ? Schedule::clamp_length(a.y_len[b], a.m) : a.m;
  if (i0 >= xl || j0 >= yl) return;  // warp-uniform: no cell of this tile is in the pair
  // Warp step t holds column t - lane of row i0 + lane: steps [j0, j0 + 63) cover the tile.
  constexpr int kSteps = 2 * kWarp - 1, kBatch = 8;
  auto* words = a.state + state_index(b * a.strips + i0 / kWarp, a.m, 0, lane);
  const auto in_tile = [&](int t) {
    const int c = t - lane;
    return t < kSteps && c >= 0 && c < kWarp && i0 + lane < xl && j0 + c < yl;
  };
  // W = 0 where E = 0, and E underflows to 0 a few cells off the alignment: a tile of zeros keeps
  // its words as they are and needs no costs (exact; a NaN E is not 0).
  bool nonzero = false;
  for (int t = 0; t < kSteps; ++t) nonzero |= in_tile(t) && State::held(words[(j0 + t) * kWarp]) != T(0);
  if (!__any_sync(kFullMask, nonzero)) return;
  const int64_t j_lane = j0 + lane < a.m ? j0 + lane : a.m - 1;
  T column[kWarp];
  cost.column(b, i0, a.n, j_lane, scratch[warp], column);
#pragma unroll
  for (int r = 0; r < kWarp; ++r) costs[warp][r][lane] = column[r];
  __syncwarp();
  // The words of kBatch steps are loaded before any is rewritten: one memory round trip a batch,
  // where a step at a time waited one a step (most of this pass's stalls under ncu).
  for (int t0 = 0; t0 < kSteps; t0 += kBatch) {
    typename State::Word held[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) held[q] = in_tile(t0 + q) ? words[(j0 + t0 + q) * kWarp] : typename State::Word{};
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (!in_tile(t0 + q)) continue;
      T w_self, w_other;
      Metric::weights(State::held(held[q]), costs[warp][lane][t0 + q - lane], T(0), T(0), w_self, w_other);
      words[(j0 + t0 + q) * kWarp] = State::hold(-w_other);
    }
  }
}

// grad_r -= <self_r, grad_r> / |self_r|^2 self_r for each row of x and of y (one warp a row; the
// first batch * n warps take rows of x): the cosine's self term, given grad = -W other. A row
// whose norm is below the cost's eps has no radial term (Cosine in costs.cuh).
template <typename T>
__global__ void project_out_rows(int64_t rows_x, int64_t rows_y, int64_t dim, const T* x, const T* y, T* grad_x,
                                 T* grad_y) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x & 31;
  if (row >= rows_x + rows_y) return;
  const bool is_x = row < rows_x;
  const T* self = (is_x ? x : y) + (is_x ? row : row - rows_x) * dim;
  T* grad = (is_x ? grad_x : grad_y) + (is_x ? row : row - rows_x) * dim;
  T norm2 = T(0), dot = T(0);
  for (int64_t f = lane; f < dim; f += kWarp) {
    norm2 = fma(self[f], self[f], norm2);
    dot = fma(self[f], grad[f], dot);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    norm2 += __shfl_xor_sync(kFullMask, norm2, offset);
    dot += __shfl_xor_sync(kFullMask, dot, offset);
  }
  if (!(sqrt(norm2) >= T(1e-8))) return;
  const T scale = dot / norm2;
  for (int64_t f = lane; f < dim; f += kWarp) grad[f] = fma(-scale, self[f], grad[f]);
}

}  // namespace sdtw::kernels::detail
