#pragma once
// Chains E through the squared-Euclidean cost: grad_x_i = 2 sum_j E_ij (x_i - y_j) and
// grad_y_j = 2 sum_i E_ij (y_j - x_i), i.e. 2 (self_r sum_k E_rk - sum_k E_rk other_k), a tiled
// product over the E left in the saved state. float runs the product on the tensor cores at
// float32 accuracy (3xTF32), double with FMAs.
#include <type_traits>

#include "forward.cuh"
#include "tf32x3.cuh"

namespace sdtw::kernels::detail {

// x, y and the gradients are In (T, or bfloat16 / float16 for T = float); the product runs in T.
template <typename T, typename In = T>
struct JacobianArgs {
  int64_t batch, n, m, dim, strips;
  const int64_t* x_len;
  const int64_t* y_len;
  const typename CellState<T>::Word* state;  // holds E after the backward
  const In* self;   // x for grad_x, y for grad_y
  const In* other;  // y for grad_x, x for grad_y
  In* grad;
  const T* dense = nullptr;  // batch x n x m row-major, read instead of the state (kDense)
};

constexpr int kJacThreads = 256;
constexpr int kJacWarps = kJacThreads / kWarp;
constexpr int kJacInner = 32;  // reduction step: one strip of rows of E

// One reduction step's operands: E as [inner][row] and the other sequence as [inner][feature].
template <typename C, int kRows, int kFeatures, int kPad>
struct JacobianTiles {
  alignas(16) C e[kJacInner][kRows + kPad];
  alignas(16) C other[kJacInner][kFeatures + kPad];
};

// FMA product: each thread owns 2 rows x 4 features of the block's kRows x kFeatures output.
template <typename T, int kFeatures>
struct FmaProduct {
  static constexpr int kRowsPerThread = 2;
  static constexpr int kThreadsF = kFeatures / 4;
  static constexpr int kThreadsR = kJacThreads / kThreadsF;
  static constexpr int kRows = kRowsPerThread * kThreadsR;
  using Tiles = JacobianTiles<T, kRows, kFeatures, 16 / sizeof(T)>;

  T acc[kRowsPerThread][4] = {};
  T rowsum[kRowsPerThread] = {};

  __device__ void accumulate(const Tiles& tiles) {
    const int tr = threadIdx.x / kThreadsF, tf = threadIdx.x % kThreadsF;
#pragma unroll 4
    for (int kk = 0; kk < kJacInner; ++kk) {
      T e[kRowsPerThread], o[4];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) e[r] = tiles.e[kk][tr * kRowsPerThread + r];
#pragma unroll
      for (int q = 0; q < 4; ++q) o[q] = tiles.other[kk][tf * 4 + q];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) {
        rowsum[r] += e[r];
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[r][q] = fma(e[r], o[q], acc[r][q]);
      }
    }
  }

  // Calls out(row, feature, sum_k E_rk other_k, sum_k E_rk) for each output element this thread holds.
  template <typename Out>
  __device__ void finish(Tiles&, Out&& out) const {
    const int tr = threadIdx.x / kThreadsF, tf = threadIdx.x % kThreadsF;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
#pragma unroll
      for (int q = 0; q < 4; ++q) out(tr * kRowsPerThread + r, tf * 4 + q, acc[r][q], rowsum[r]);
  }
};

// Tensor-core product: warps tile the block's output in kWarpRows x kWarpFeatures pieces of
// m16n8k8 steps. Row strides of 8 mod 32 words make every fragment load bank-conflict free.
template <int kFeatures>
struct Tf32Product {
  static constexpr int kRows = kFeatures <= 16 ? 256 : 64;
  static constexpr int kWarpFeatures = kFeatures < 32 ? kFeatures : 32;
  static constexpr int kWarpsF = kFeatures / kWarpFeatures;
  static constexpr int kWarpRows = kRows / (kJacWarps / kWarpsF);
  static constexpr int kMTiles = kWarpRows / 16, kNTiles = kWarpFeatures / 8;
  using Tiles = JacobianTiles<float, kRows, kFeatures, 8>;
  static_assert(kWarpRows % 16 == 0 && kWarpFeatures % 8 == 0, "whole m16n8 tiles per warp");

  float acc[kMTiles][kNTiles][4] = {};
  float rowsum = 0.0f;  // of row threadIdx.x, for the first kRows threads

  __device__ int row_base() const { return (threadIdx.x / kWarp / kWarpsF) * kWarpRows; }
  __device__ int feature_base() const { return (threadIdx.x / kWarp % kWarpsF) * kWarpFeatures; }

  __device__ void accumulate(const Tiles& tiles) {
    const int lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int m0 = row_base(), n0 = feature_base();
    if (threadIdx.x < kRows)
#pragma unroll 8
      for (int kk = 0; kk < kJacInner; ++kk) rowsum += tiles.e[kk][threadIdx.x];
#pragma unroll
    for (int k0 = 0; k0 < kJacInner; k0 += 8) {
      Tf32Split a[kMTiles][4], b[kNTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        const int row = m0 + mt * 16 + g;
        a[mt][0] = split_tf32(tiles.e[k0 + t][row]);
        a[mt][1] = split_tf32(tiles.e[k0 + t][row + 8]);
        a[mt][2] = split_tf32(tiles.e[k0 + t + 4][row]);
        a[mt][3] = split_tf32(tiles.e[k0 + t + 4][row + 8]);
      }
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {
        const int f = n0 + nt * 8 + g;
        b[nt][0] = split_tf32(tiles.other[k0 + t][f]);
        b[nt][1] = split_tf32(tiles.other[k0 + t + 4][f]);
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt) mma_3xtf32(acc[mt][nt], a[mt], b[nt]);
    }
  }

  // Row sums reach the threads that hold their rows' outputs through the (now free) E tile.
  template <typename Out>
  __device__ void finish(Tiles& tiles, Out&& out) const {
    if (threadIdx.x < kRows) tiles.e[0][threadIdx.x] = rowsum;
    __syncthreads();
    const int lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int m0 = row_base(), n0 = feature_base();
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int row = m0 + mt * 16 + g + 8 * (r / 2);
          out(row, n0 + nt * 8 + 2 * t + r % 2, acc[mt][nt][r], tiles.e[0][row]);
        }
  }
};

template <typename T, int kFeatures>
using JacobianProduct = std::conditional_t<std::is_same_v<T, float>, Tf32Product<kFeatures>, FmaProduct<T, kFeatures>>;

// A row-major E (or any G): tile [in][row] is E(i0 + row, j0 + in) for rows of x and
// E(i0 + in, j0 + row) for rows of y; consecutive threads take consecutive columns j (coalesced).
template <typename T, bool for_y, int kRows, typename In, typename Tile>
__device__ void load_dense_tile(const JacobianArgs<T, In>& a, int64_t b, int64_t i0, int64_t j0, int64_t xl, int64_t yl,
                                Tile& e_tile) {
  for (int idx = threadIdx.x; idx < kJacInner * kRows; idx += kJacThreads) {
    const int in = for_y ? idx / kRows : idx % kJacInner, row = for_y ? idx % kRows : idx / kJacInner;
    const int64_t i = i0 + (for_y ? in : row), j = j0 + (for_y ? row : in);
    e_tile[in][row] = i < xl && j < yl ? a.dense[(b * a.n + i) * a.m + j] : T(0);
  }
}

// One block of output rows. for_y = false: rows are i and the reduction runs over j; for_y =
// true: rows j, over i. E is read by whole warp steps (32 consecutive words = E(row0 + l, step - l)
// of one strip), or from a.dense when kDense.
template <typename T, bool for_y, int kFeatures, bool kDense, typename In>
__device__ void jacobian_block(const JacobianArgs<T, In>& a, int64_t b, int64_t row_block, int64_t feature_tile,
                               typename JacobianProduct<T, kFeatures>::Tiles& tiles) {
  using State = CellState<T>;
  using Product = JacobianProduct<T, kFeatures>;
  constexpr int kRows = Product::kRows;
  auto& e_tile = tiles.e;
  auto& o_tile = tiles.other;

  const int64_t xl = a.x_len ? Schedule::clamp_length(a.x_len[b], a.n) : a.n;
  const int64_t yl = a.y_len ? Schedule::clamp_length(a.y_len[b], a.m) : a.m;
  const int64_t rows = for_y ? yl : xl, inner = for_y ? xl : yl;
  const int64_t padded_rows = for_y ? a.m : a.n, padded_inner = for_y ? a.n : a.m;
  const int64_t r0 = row_block * kRows;
  const int64_t d0 = feature_tile * kFeatures;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  constexpr int kStrips = for_y ? 1 : kRows / kWarp;
  constexpr int kWidth = (for_y ? kRows : kJacInner) + kWarp - 1;  // warp steps of a strip that touch the tile
  constexpr int kPerWarp = (kWidth + kJacWarps - 1) / kJacWarps;    // of which each warp loads a run
  constexpr int kBatch = 8;
  constexpr int kOthers = kJacInner * kFeatures / kJacThreads;
  static_assert(kJacInner * kFeatures % kJacThreads == 0, "the other tile divides among the threads");
  const int first_step = warp * kPerWarp;

  Product product;
  for (int64_t k0 = 0; k0 < inner; k0 += kJacInner) {
    const int64_t i0 = for_y ? k0 : r0, j0 = for_y ? r0 : k0;
    if constexpr (kDense) load_dense_tile<T, for_y, kRows>(a, b, i0, j0, xl, yl, e_tile);
    // A strip's tile loads go in batches of independent loads (one latency per batch, not per
    // load); every tile element is written, 0 off the grid, so no clearing pass is needed.
#pragma unroll
    for (int strip = 0; strip < (kDense ? 0 : kStrips); ++strip) {
      const int64_t i = i0 + strip * kWarp + lane;
      const bool row_ok = i < (for_y ? inner : rows);
      const auto* words = a.state + state_index(b * a.strips + i0 / kWarp + strip, a.m, j0, lane);
#pragma unroll
      for (int q0 = 0; q0 < kPerWarp; q0 += kBatch) {
        T e_item[kBatch];
#pragma unroll
        for (int q = 0; q < kBatch && q0 + q < kPerWarp; ++q) {
          const int step = first_step + q0 + q;
          const int64_t j = j0 + step - lane;
          const bool ok = step < kWidth && row_ok && j >= 0 && j < (for_y ? rows : inner);
          e_item[q] = ok ? State::held(words[step * kWarp]) : T(0);
        }
#pragma unroll
        for (int q = 0; q < kBatch && q0 + q < kPerWarp; ++q) {
          const int step = first_step + q0 + q;
          const int row = for_y ? step - lane : strip * kWarp + lane, in = for_y ? lane : step - lane;
          if (step < kWidth && row >= 0 && row < kRows && in >= 0 && in < kJacInner) e_tile[in][row] = e_item[q];
        }
      }
    }
    T o_item[kOthers];
#pragma unroll
    for (int q = 0; q < kOthers; ++q) {
      const int idx = threadIdx.x + q * kJacThreads, kk = idx / kFeatures, f = idx % kFeatures;
      const int64_t in = k0 + kk, d = d0 + f;
      o_item[q] = (in < inner && d < a.dim) ? static_cast<T>(a.other[(b * padded_inner + in) * a.dim + d]) : T(0);
    }
#pragma unroll
    for (int q = 0; q < kOthers; ++q) {
      const int idx = threadIdx.x + q * kJacThreads;
      o_tile[idx / kFeatures][idx % kFeatures] = o_item[q];
    }
    __syncthreads();
    product.accumulate(tiles);
    __syncthreads();
  }
  product.finish(tiles, [&](int r, int f, T dot, T rowsum) {
    const int64_t row = r0 + r, d = d0 + f;
    if (row >= padded_rows || d >= a.dim) return;
    const int64_t at = (b * padded_rows + row) * a.dim + d;
    a.grad[at] = static_cast<In>(row < rows ? T(2) * (static_cast<T>(a.self[at]) * rowsum - dot) : T(0));
  });
}

// The gradient's blocks of output rows for one pair (rows of x, then rows of y) and its feature
// tiles; the same count on the host, which sizes grids, and in the kernels, which walk them.
template <typename T, int kFeatures>
struct GradientTiles {
  static constexpr int64_t kRows = JacobianProduct<T, kFeatures>::kRows;
  int64_t x_blocks, y_blocks, features;
  __host__ __device__ GradientTiles(int64_t n, int64_t m, int64_t dim)
      : x_blocks((n + kRows - 1) / kRows), y_blocks((m + kRows - 1) / kRows), features((dim + kFeatures - 1) / kFeatures) {}
  __host__ __device__ int64_t per_pair() const { return (x_blocks + y_blocks) * features; }
};

// grad_x and grad_y in one launch: the first x_blocks blocks (in x) take rows of x, the rest rows of y.
// Register caps chosen by measurement (H100): two blocks per SM for the wide feature tiles, three for the narrow one.
template <typename T, int kFeatures, bool kDense, typename In>
__global__ void __launch_bounds__(kJacThreads, kFeatures > 16 ? 2 : 3) jacobian_kernel(JacobianArgs<T, In> gx, JacobianArgs<T, In> gy, int x_blocks) {
  __shared__ typename JacobianProduct<T, kFeatures>::Tiles tiles;
  if (static_cast<int>(blockIdx.x) < x_blocks)
    jacobian_block<T, false, kFeatures, kDense>(gx, blockIdx.z, blockIdx.x, blockIdx.y, tiles);
  else
    jacobian_block<T, true, kFeatures, kDense>(gy, blockIdx.z, blockIdx.x - x_blocks, blockIdx.y, tiles);
}

}  // namespace sdtw::kernels::detail
