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

constexpr int kJacRows = 64;      // output rows per block
constexpr int kJacFeatures = 32;  // features per block
constexpr int kJacInner = 32;     // reduction step
constexpr int kJacThreads = 256;  // 32 row pairs x 8 feature quads

// Fills e_tile[r][kk] with E(row r0 + r, inner k0 + kk) (zero outside the pair), reading the state
// by whole warp steps: 32 consecutive words hold E(row0 + l, step - l) for the 32 rows of a strip.
template <typename T, bool for_y, typename C>
__device__ void load_alignment_tile(const JacobianArgs<T>& a, int64_t b, int64_t r0, int64_t k0, int64_t rows,
                                    int64_t inner, C (&e_tile)[kJacRows][kJacInner + 1]) {
  using State = CellState<T>;
  for (int idx = threadIdx.x; idx < kJacRows * kJacInner; idx += kJacThreads) e_tile[idx / kJacInner][idx % kJacInner] = 0;
  __syncthreads();
  // Rows of E (i) come from strips; grad_x tiles span kJacRows / 32 strips, grad_y tiles one strip.
  const int64_t i0 = for_y ? k0 : r0, j0 = for_y ? r0 : k0;
  const int strips = for_y ? 1 : kJacRows / kWarp;
  const int width = (for_y ? kJacRows : kJacInner) + kWarp - 1;  // warp steps that touch the tile
  for (int idx = threadIdx.x; idx < strips * width * kWarp; idx += kJacThreads) {
    const int l = idx % kWarp, step = (idx / kWarp) % width, strip = idx / (kWarp * width);
    const int64_t i = i0 + strip * kWarp + l, j = j0 + step - l;
    const int64_t row = for_y ? j : i, in = for_y ? i : j;
    if (j < j0 || row >= r0 + kJacRows || in >= k0 + kJacInner || row >= rows || in >= inner) continue;
    e_tile[row - r0][in - k0] = State::to_alignment(a.state[state_index(b * a.strips + i / kWarp, a.m, j0 + step, l)]);
  }
}

// for_y = false: rows are i, the reduction runs over j. for_y = true: rows are j, over i.
template <typename T, bool for_y>
__global__ void __launch_bounds__(kJacThreads) jacobian_kernel(JacobianArgs<T> a) {
  using State = CellState<T>;
  using C = typename State::Compute;
  __shared__ C e_tile[kJacRows][kJacInner + 1];
  __shared__ C o_tile[kJacInner][kJacFeatures + 1];

  const int64_t b = blockIdx.z;
  const int64_t rows = for_y ? (a.y_len ? a.y_len[b] : a.m) : (a.x_len ? a.x_len[b] : a.n);
  const int64_t inner = for_y ? (a.x_len ? a.x_len[b] : a.n) : (a.y_len ? a.y_len[b] : a.m);
  const int64_t padded_rows = for_y ? a.m : a.n, padded_inner = for_y ? a.n : a.m;
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kJacRows;
  const int64_t d0 = static_cast<int64_t>(blockIdx.y) * kJacFeatures;
  const int tr = threadIdx.x / 8, tf = threadIdx.x % 8;

  C acc[2][4] = {};
  C rowsum[2] = {};
  for (int64_t k0 = 0; k0 < inner; k0 += kJacInner) {
    load_alignment_tile<T, for_y>(a, b, r0, k0, rows, inner, e_tile);
    for (int idx = threadIdx.x; idx < kJacInner * kJacFeatures; idx += kJacThreads) {
      const int kk = idx / kJacFeatures, f = idx % kJacFeatures;
      const int64_t in = k0 + kk, d = d0 + f;
      o_tile[kk][f] = (in < inner && d < a.dim) ? static_cast<C>(a.other[(b * padded_inner + in) * a.dim + d]) : C(0);
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kJacInner; ++kk) {
      const C e0 = e_tile[tr * 2][kk], e1 = e_tile[tr * 2 + 1][kk];
      rowsum[0] += e0;
      rowsum[1] += e1;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const C o = o_tile[kk][tf * 4 + q];
        acc[0][q] += e0 * o;
        acc[1][q] += e1 * o;
      }
    }
    __syncthreads();
  }
  for (int rr = 0; rr < 2; ++rr) {
    const int64_t row = r0 + tr * 2 + rr;
    if (row >= padded_rows) continue;
    for (int q = 0; q < 4; ++q) {
      const int64_t d = d0 + tf * 4 + q;
      if (d >= a.dim) continue;
      const int64_t at = (b * padded_rows + row) * a.dim + d;
      const C g = row < rows ? C(2) * (static_cast<C>(a.self[at]) * rowsum[rr] - acc[rr][q]) : C(0);
      a.grad[at] = static_cast<T>(g);
    }
  }
}

}  // namespace sdtw::kernels::detail
