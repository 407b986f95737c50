#pragma once
// Chains E through the squared-Euclidean cost: grad_x_i = 2 sum_j E_ij (x_i - y_j) and
// grad_y_j = 2 sum_i E_ij (y_j - x_i), a tiled product over the E left in the saved state.
#include "forward.cuh"

namespace sdtw::kernels::detail {

template <typename T>
struct JacobianArgs {
  int64_t batch, n, m, dim, strips;
  const int64_t* x_len;
  const int64_t* y_len;
  const typename CellState<T>::Word* state;  // holds E after the backward
  const T* self;   // x for grad_x, y for grad_y
  const T* other;  // y for grad_x, x for grad_y
  T* grad;
};

constexpr int kJacThreads = 256;
constexpr int kJacInner = 32;  // reduction step: one strip of rows of E

// Block shape for a feature tile of kFeatures: each thread owns kRowsPerThread rows x 4 features.
template <typename T, int kFeatures>
struct JacobianShape {
  static constexpr int kRowsPerThread = sizeof(T) == 4 ? 4 : 2;
  static constexpr int kThreadsF = kFeatures / 4;
  static constexpr int kThreadsR = kJacThreads / kThreadsF;
  static constexpr int kRows = kRowsPerThread * kThreadsR;  // output rows per block
};

template <typename T, int kFeatures>
struct JacobianTiles {
  using C = typename CellState<T>::Compute;
  static constexpr int kPad = 16 / sizeof(C);
  alignas(16) C e[kJacInner][JacobianShape<T, kFeatures>::kRows + kPad];
  alignas(16) C other[kJacInner][kFeatures + kPad];
};

// One block of output rows. for_y = false: rows are i and the reduction runs over j; for_y =
// true: rows j, over i. E is read by whole warp steps (32 consecutive words = E(row0 + l, step - l)
// of one strip).
template <typename T, bool for_y, int kFeatures>
__device__ void jacobian_block(const JacobianArgs<T>& a, int64_t row_block, JacobianTiles<T, kFeatures>& tiles) {
  using State = CellState<T>;
  using C = typename State::Compute;
  using Shape = JacobianShape<T, kFeatures>;
  constexpr int kRows = Shape::kRows, kRPT = Shape::kRowsPerThread;
  auto& e_tile = tiles.e;
  auto& o_tile = tiles.other;

  const int64_t b = blockIdx.z;
  const int64_t xl = a.x_len ? a.x_len[b] : a.n, yl = a.y_len ? a.y_len[b] : a.m;
  const int64_t rows = for_y ? yl : xl, inner = for_y ? xl : yl;
  const int64_t padded_rows = for_y ? a.m : a.n, padded_inner = for_y ? a.n : a.m;
  const int64_t r0 = row_block * kRows;
  const int64_t d0 = static_cast<int64_t>(blockIdx.y) * kFeatures;
  const int tr = threadIdx.x / Shape::kThreadsF, tf = threadIdx.x % Shape::kThreadsF;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  constexpr int kStrips = for_y ? 1 : kRows / kWarp;
  constexpr int kWidth = (for_y ? kRows : kJacInner) + kWarp - 1;  // warp steps that touch the tile

  // A k-step's tile loads go in batches of independent loads (one latency per batch, not per
  // load); every tile element is written, 0 off the grid, so no clearing pass is needed.
  constexpr int kWarps = kJacThreads / kWarp;
  constexpr int kItems = (kStrips * kWidth + kWarps - 1) / kWarps;  // warp steps per warp and k-step
  constexpr int kBatch = 8;
  constexpr int kOthers = kJacInner * kFeatures / kJacThreads;
  static_assert(kJacInner * kFeatures % kJacThreads == 0, "the other tile divides among the threads");

  C acc[kRPT][4] = {};
  C rowsum[kRPT] = {};
  for (int64_t k0 = 0; k0 < inner; k0 += kJacInner) {
    const int64_t i0 = for_y ? k0 : r0, j0 = for_y ? r0 : k0;
    for (int q0 = 0; q0 < kItems; q0 += kBatch) {
      C e_item[kBatch];
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        const int item = warp + (q0 + q) * kWarps, strip = item / kWidth, step = item - strip * kWidth;
        const int64_t i = i0 + strip * kWarp + lane, j = j0 + step - lane;
        const bool ok = item < kStrips * kWidth && i < (for_y ? inner : rows) && j >= 0 && j < (for_y ? rows : inner);
        e_item[q] = ok ? State::to_alignment(a.state[state_index(b * a.strips + i / kWarp, a.m, j0 + step, lane)]) : C(0);
      }
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        const int item = warp + (q0 + q) * kWarps, strip = item / kWidth, step = item - strip * kWidth;
        const int row = for_y ? step - lane : strip * kWarp + lane, in = for_y ? strip * kWarp + lane : step - lane;
        if (item < kStrips * kWidth && row >= 0 && row < kRows && in >= 0 && in < kJacInner) e_tile[in][row] = e_item[q];
      }
    }
    C o_item[kOthers];
#pragma unroll
    for (int q = 0; q < kOthers; ++q) {
      const int idx = threadIdx.x + q * kJacThreads, kk = idx / kFeatures, f = idx % kFeatures;
      const int64_t in = k0 + kk, d = d0 + f;
      o_item[q] = (in < inner && d < a.dim) ? static_cast<C>(a.other[(b * padded_inner + in) * a.dim + d]) : C(0);
    }
#pragma unroll
    for (int q = 0; q < kOthers; ++q) {
      const int idx = threadIdx.x + q * kJacThreads;
      o_tile[idx / kFeatures][idx % kFeatures] = o_item[q];
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < kJacInner; ++kk) {
      C e[kRPT], o[4];
#pragma unroll
      for (int r = 0; r < kRPT; ++r) e[r] = e_tile[kk][tr * kRPT + r];
#pragma unroll
      for (int q = 0; q < 4; ++q) o[q] = o_tile[kk][tf * 4 + q];
#pragma unroll
      for (int r = 0; r < kRPT; ++r) {
        rowsum[r] += e[r];
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[r][q] = fma(e[r], o[q], acc[r][q]);
      }
    }
    __syncthreads();
  }
  for (int r = 0; r < kRPT; ++r) {
    const int64_t row = r0 + tr * kRPT + r;
    if (row >= padded_rows) continue;
    for (int q = 0; q < 4; ++q) {
      const int64_t d = d0 + tf * 4 + q;
      if (d >= a.dim) continue;
      const int64_t at = (b * padded_rows + row) * a.dim + d;
      const C g = row < rows ? C(2) * (static_cast<C>(a.self[at]) * rowsum[r] - acc[r][q]) : C(0);
      a.grad[at] = static_cast<T>(g);
    }
  }
}

// grad_x and grad_y in one launch: the first x_blocks blocks (in x) take rows of x, the rest rows of y.
template <typename T, int kFeatures>
__global__ void __launch_bounds__(kJacThreads) jacobian_kernel(JacobianArgs<T> gx, JacobianArgs<T> gy, int x_blocks) {
  __shared__ JacobianTiles<T, kFeatures> tiles;
  if (static_cast<int>(blockIdx.x) < x_blocks)
    jacobian_block<T, false>(gx, blockIdx.x, tiles);
  else
    jacobian_block<T, true>(gy, blockIdx.x - x_blocks, tiles);
}

}  // namespace sdtw::kernels::detail
