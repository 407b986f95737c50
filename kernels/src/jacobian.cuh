#pragma once
// Chains E through the squared-Euclidean cost: grad_x_i = 2 sum_j E_ij (x_i - y_j) and
// grad_y_j = 2 sum_i E_ij (y_j - x_i), i.e. 2 (self_r sum_k E_rk - sum_k E_rk other_k), a tiled
// product over the E left in the saved state. With another scale and self weight it is the
// gradient of the named costs linear in the rows, over their weights W (alignment_weights.cuh), or
// with kUnitRows over E / (|self_r| |other_k|). float runs the product on the tensor cores at
// float32 accuracy (3xTF32), double with FMAs.
#include <algorithm>
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
  // grad_r = scale (self_weight self_r sum_k E_rk - sum_k E_rk other_k); with jacobian_block's
  // kUnitRows, other_k and grad_r are divided by their rows' norms
  T scale = T(2);
  T self_weight = T(1);
  // Checkpointing (jacobian_block's kBand): the state holds the E of rows [row0, row_end) alone;
  // grad_x gets those rows, grad_y their share, added to the earlier bands' in grad_sum when
  // accumulate is set.
  int64_t row0 = 0, row_end = 0;
  bool accumulate = false;
  // When set (grad_y of a band), the bands' shares are summed here in float64 and grad gets the sum
  // rounded once, so that many bands add no more rounding than the full state's one reduction.
  double* grad_sum = nullptr;
};

constexpr int kJacThreads = 256;
constexpr int kJacWarps = kJacThreads / kWarp;
constexpr int kJacInner = 32;  // reduction step: one strip of rows of E

// Where the product reads E(row, k) of a reduction step (k: the reduced index) in the block's E
// buffer. StepLayout: as the saved state holds it, whole warp steps (lane l of step t at [t][l]) of
// kRows / 32 strips of 63 steps (rows of x: E(i0 + row, j0 + k) is lane row % 32 of step k + row %
// 32) or of one strip of kRows + 31 steps (rows of y: E(i0 + k, j0 + row) is lane k of step row +
// k), so E is copied without index arithmetic and the skew is undone where it is read. Strides of
// 40 and 36 words keep the fragment reads of the tensor-core product bank-conflict free.
template <bool for_y, int kRows>
struct StepLayout {
  static constexpr int kStrips = for_y ? 1 : kRows / kWarp;
  static constexpr int kWidth = (for_y ? kRows : kJacInner) + kWarp - 1;  // warp steps of a strip that touch the tile
  static constexpr int kStride = for_y ? kWarp + 4 : kWarp + 8;
  static constexpr int kWords = kStrips * kWidth * kStride;
  __device__ static int word(int strip, int step, int lane) { return (strip * kWidth + step) * kStride + lane; }
  __device__ static int at(int k, int row) {
    return for_y ? word(0, row + k, k) : word(row / kWarp, k + row % kWarp, row % kWarp);
  }
};

// A row-major tile, [k][row] (the dense E or G of the unfused gradient).
template <int kRows, int kPad>
struct DenseLayout {
  static constexpr int kWords = kJacInner * (kRows + kPad);
  __device__ static int at(int k, int row) { return k * (kRows + kPad) + row; }
};

// One reduction step's operands: E in one of the layouts above, the other sequence as [k][feature].
template <typename C, int kRows, int kFeatures, int kPad>
struct JacobianTiles {
  static constexpr int kRowPad = kPad;
  static constexpr int kEWords = std::max({StepLayout<false, kRows>::kWords, StepLayout<true, kRows>::kWords,
                                           DenseLayout<kRows, kPad>::kWords});
  alignas(16) C e[kEWords];
  alignas(16) C other[kJacInner][kFeatures + kPad];
};

// scale[r] = 1 / max(|rows[first + r]|, Cosine's eps) for r < kCount (0 from `limit` on), then a
// barrier. A warp takes kCount / kJacWarps rows, their loads all issued before any sum, so that the
// rows cost one memory round trip per 32 features, not one a row.
template <int kCount, typename T, typename In>
__device__ void inverse_row_norms(const In* rows, int64_t dim, int64_t first, int64_t limit, T* scale) {
  static_assert(kCount % kJacWarps == 0, "whole rows a warp");
  constexpr int kPerWarp = kCount / kJacWarps;
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  T sum[kPerWarp];
#pragma unroll
  for (int q = 0; q < kPerWarp; ++q) sum[q] = T(0);
  for (int64_t f = lane; f < dim + lane; f += kWarp) {
#pragma unroll
    for (int q = 0; q < kPerWarp; ++q) {
      const int64_t row = first + warp + q * kJacWarps;
      const T v = row < limit && f < dim ? static_cast<T>(rows[row * dim + f]) : T(0);
      sum[q] = fma(v, v, sum[q]);
    }
  }
#pragma unroll
  for (int q = 0; q < kPerWarp; ++q) {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) sum[q] += __shfl_xor_sync(kFullMask, sum[q], offset);
    if (lane == 0) scale[warp + q * kJacWarps] = first + warp + q * kJacWarps < limit ? T(1) / Cosine::clamped(sum[q]) : T(0);
  }
  __syncthreads();
}

// FMA product: each thread owns kRowsPerThread rows x 4 features of the block's kRows x kFeatures output.
template <typename T, int kFeatures>
struct FmaProduct {
  static constexpr int kRowsPerThread = kFeatures <= 16 ? 1 : 2;  // whole strips of rows, in 48 KB
  static constexpr int kThreadsF = kFeatures / 4;
  static constexpr int kThreadsR = kJacThreads / kThreadsF;
  static constexpr int kRows = kRowsPerThread * kThreadsR;
  using Tiles = JacobianTiles<T, kRows, kFeatures, 16 / sizeof(T)>;

  T acc[kRowsPerThread][4] = {};
  T rowsum[kRowsPerThread] = {};

  template <typename Layout>
  __device__ void accumulate(const Tiles& tiles) {
    const int tr = threadIdx.x / kThreadsF, tf = threadIdx.x % kThreadsF;
#pragma unroll 4
    for (int kk = 0; kk < kJacInner; ++kk) {
      T e[kRowsPerThread], o[4];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) e[r] = tiles.e[Layout::at(kk, tr * kRowsPerThread + r)];
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
// m16n8k8 steps. Fragment loads are bank-conflict free: the other tile's and the dense E tile's
// row strides are 8 mod 32 words, StepLayout's strides are chosen for it.
template <int kFeatures>
struct Tf32Product {
  static constexpr int kRows = kFeatures <= 16 ? 128 : 64;
  static constexpr int kWarpFeatures = kFeatures < 32 ? kFeatures : 32;
  static constexpr int kWarpsF = kFeatures / kWarpFeatures;
  static constexpr int kWarpRows = kRows / (kJacWarps / kWarpsF);
  static constexpr int kMTiles = kWarpRows / 16, kNTiles = kWarpFeatures / 8;
  using Tiles = JacobianTiles<float, kRows, kFeatures, 8>;
  static_assert(kWarpRows % 16 == 0 && kWarpFeatures % 8 == 0, "whole m16n8 tiles per warp");

  float acc[kMTiles][kNTiles][4] = {};
  // Row sums of rows m0 + mt * 16 + g and that + 8, over this lane's k (t and t + 4 of each step)
  // of the A fragments: the quad's lanes hold the rest, and the lane holds those rows' outputs.
  float rowsum[kMTiles][2] = {};

  __device__ int row_base() const { return (threadIdx.x / kWarp / kWarpsF) * kWarpRows; }
  __device__ int feature_base() const { return (threadIdx.x / kWarp % kWarpsF) * kWarpFeatures; }

  template <typename Layout>
  __device__ void accumulate(const Tiles& tiles) {
    const int lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int m0 = row_base(), n0 = feature_base();
#pragma unroll
    for (int k0 = 0; k0 < kJacInner; k0 += 8) {
      Tf32Split a[kMTiles][4], b[kNTiles][2];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        const int row = m0 + mt * 16 + g;
        const float e[4] = {tiles.e[Layout::at(k0 + t, row)], tiles.e[Layout::at(k0 + t, row + 8)],
                            tiles.e[Layout::at(k0 + t + 4, row)], tiles.e[Layout::at(k0 + t + 4, row + 8)]};
        rowsum[mt][0] += e[0] + e[2];
        rowsum[mt][1] += e[1] + e[3];
#pragma unroll
        for (int q = 0; q < 4; ++q) a[mt][q] = split_tf32(e[q]);
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

  template <typename Out>
  __device__ void finish(Tiles&, Out&& out) const {
    const int lane = threadIdx.x % kWarp, g = lane / 4, t = lane % 4;
    const int m0 = row_base(), n0 = feature_base();
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float sum = rowsum[mt][half];
        sum += __shfl_xor_sync(kFullMask, sum, 1);
        sum += __shfl_xor_sync(kFullMask, sum, 2);
#pragma unroll
        for (int nt = 0; nt < kNTiles; ++nt)
#pragma unroll
          for (int c = 0; c < 2; ++c)
            out(m0 + mt * 16 + g + 8 * half, n0 + nt * 8 + 2 * t + c, acc[mt][nt][2 * half + c], sum);
      }
  }
};

template <typename T, int kFeatures>
using JacobianProduct = std::conditional_t<std::is_same_v<T, float>, Tf32Product<kFeatures>, FmaProduct<T, kFeatures>>;

// A row-major E (or any G) in DenseLayout: consecutive threads take consecutive columns j
// (coalesced); cells past the lengths are 0.
template <typename T, bool for_y, int kRows, int kPad, typename In>
__device__ void load_dense_tile(const JacobianArgs<T, In>& a, int64_t b, int64_t i0, int64_t j0, int64_t xl, int64_t yl,
                                T* e) {
  for (int idx = threadIdx.x; idx < kJacInner * kRows; idx += kJacThreads) {
    const int in = for_y ? idx / kRows : idx % kJacInner, row = for_y ? idx % kRows : idx / kJacInner;
    const int64_t i = i0 + (for_y ? in : row), j = j0 + (for_y ? row : in);
    e[DenseLayout<kRows, kPad>::at(in, row)] = i < xl && j < yl ? a.dense[(b * a.n + i) * a.m + j] : T(0);
  }
}

// The saved E of the tile at (i0, j0) in StepLayout: each warp copies a run of warp steps of each
// strip, whole (128 bytes a load), in batches of independent loads (one latency per batch). A cell
// that would reach a kept output past the lengths (j >= yl; for rows of y, i >= xl) reads as 0.
// kEdge (rows of x, where the tile is the first of its rows or holds rows past x_len): the steps
// before a lane's column 0, the strip above's last cells, which the one-launch backward may still
// be writing, and the rows past x_len read as 0 too. Other words are copied as they are (off the
// tile's cells and never read), except past the last strip, which is not read.
// row0: the first row that the state holds.
template <typename T, bool for_y, int kRows, bool kEdge, typename In>
__device__ void load_state_tile(const JacobianArgs<T, In>& a, int64_t b, int64_t i0, int64_t j0, int64_t xl, int64_t yl,
                                int64_t row0, T* e) {
  using State = CellState<T>;
  using Layout = StepLayout<for_y, kRows>;
  constexpr int kPerWarp = (Layout::kWidth + kJacWarps - 1) / kJacWarps;
  constexpr int kBatch = 8;
  const int lane = threadIdx.x % kWarp, first_step = threadIdx.x / kWarp * kPerWarp;
  const int64_t step_limit = yl - j0 + lane;  // step t holds column j0 + t - lane
  const int64_t step_first = kEdge ? lane - j0 : 0;
#pragma unroll
  for (int strip = 0; strip < Layout::kStrips; ++strip) {
    const bool strip_ok = for_y ? i0 + lane < xl
                                : kEdge ? i0 + strip * kWarp + lane < xl : (i0 - row0) / kWarp + strip < a.strips;
    const auto* words = a.state + state_index(b * a.strips + (i0 - row0) / kWarp + strip, a.m, j0, lane);
#pragma unroll
    for (int q0 = 0; q0 < kPerWarp; q0 += kBatch) {
      T item[kBatch];
#pragma unroll
      for (int q = 0; q < kBatch && q0 + q < kPerWarp; ++q) {
        const int step = first_step + q0 + q;
        const bool cell_ok = step < step_limit && (!kEdge || step >= step_first);
        item[q] = strip_ok && step < Layout::kWidth && cell_ok ? State::held(words[step * kWarp]) : T(0);
      }
#pragma unroll
      for (int q = 0; q < kBatch && q0 + q < kPerWarp; ++q) {
        const int step = first_step + q0 + q;
        if (step < Layout::kWidth) e[Layout::word(strip, step, lane)] = item[q];
      }
    }
  }
}

// One block of output rows. for_y = false: rows are i and the reduction runs over j; for_y =
// true: rows j, over i. E comes from the saved state, or from a.dense when kDense. kBand: the state
// holds one band of rows (a.row0, a.row_end, a.accumulate), a separate instantiation.
// kUnitRows (cosine): each other_k enters divided by its norm and each output row is divided by its
// own row's (norms clamped at Cosine's eps), so the product is over E / (|self_r| |other_k|) with no
// pass over the state; a separate instantiation, so that the others compile as without it.
template <typename T, bool for_y, int kFeatures, bool kDense, typename In, bool kBand = false, bool kUnitRows = false>
__device__ void jacobian_block(const JacobianArgs<T, In>& a, int64_t b, int64_t row_block, int64_t feature_tile,
                               typename JacobianProduct<T, kFeatures>::Tiles& tiles) {
  using Product = JacobianProduct<T, kFeatures>;
  constexpr int kRows = Product::kRows;
  constexpr int kPad = Product::Tiles::kRowPad;
  using Layout = std::conditional_t<kDense, DenseLayout<kRows, kPad>, StepLayout<for_y, kRows>>;
  auto& o_tile = tiles.other;

  const int64_t xl = a.x_len ? Schedule::clamp_length(a.x_len[b], a.n) : a.n;
  const int64_t yl = a.y_len ? Schedule::clamp_length(a.y_len[b], a.m) : a.m;
  const int64_t band_row0 = kBand ? a.row0 : 0;
  const int64_t rows = for_y ? yl : xl, inner = for_y ? (kBand ? min(xl, a.row_end) : xl) : yl;
  const int64_t padded_rows = for_y ? a.m : a.n, padded_inner = for_y ? a.n : a.m;
  const int64_t written_rows = for_y || !kBand ? padded_rows : a.row_end;
  const int64_t r0 = (for_y ? 0 : band_row0) + row_block * kRows;
  const int64_t d0 = feature_tile * kFeatures;
  constexpr int kOthers = kJacInner * kFeatures / kJacThreads;
  static_assert(kJacInner * kFeatures % kJacThreads == 0, "the other tile divides among the threads");
  static_assert(kJacThreads % kFeatures == 0, "a thread's other elements share one feature");
  // Thread's elements of the other tile: feature f, rows kk0 + q * kOtherRows.
  constexpr int kOtherRows = kJacThreads / kFeatures;
  const int feature = threadIdx.x % kFeatures, kk0 = threadIdx.x / kFeatures;
  const bool feature_ok = d0 + feature < a.dim;
  const In* other = a.other + (b * padded_inner + kk0) * a.dim + d0 + feature;

  __shared__ T other_scale[kUnitRows ? kJacInner : 1], self_scale[kUnitRows ? kRows : 1];
  if constexpr (kUnitRows) inverse_row_norms<kRows>(a.self + b * padded_rows * a.dim, a.dim, r0, rows, self_scale);
  Product product;
  for (int64_t k0 = for_y ? band_row0 : 0; k0 < inner; k0 += kJacInner) {
    const int64_t i0 = for_y ? k0 : r0, j0 = for_y ? r0 : k0;
    if constexpr (kDense)
      load_dense_tile<T, for_y, kRows, kPad>(a, b, i0, j0, xl, yl, tiles.e);
    else if (!for_y && (j0 == 0 || i0 + kRows > xl))
      load_state_tile<T, for_y, kRows, true>(a, b, i0, j0, xl, yl, band_row0, tiles.e);
    else
      load_state_tile<T, for_y, kRows, false>(a, b, i0, j0, xl, yl, band_row0, tiles.e);
    T o_item[kOthers];
#pragma unroll
    for (int q = 0; q < kOthers; ++q) {
      const bool ok = feature_ok && k0 + kk0 + q * kOtherRows < inner;
      o_item[q] = ok ? static_cast<T>(other[(k0 + q * kOtherRows) * a.dim]) : T(0);
    }
    if constexpr (kUnitRows) {
      inverse_row_norms<kJacInner>(a.other + b * padded_inner * a.dim, a.dim, k0, inner, other_scale);
#pragma unroll
      for (int q = 0; q < kOthers; ++q) o_item[q] *= other_scale[kk0 + q * kOtherRows];
    }
#pragma unroll
    for (int q = 0; q < kOthers; ++q) o_tile[kk0 + q * kOtherRows][feature] = o_item[q];
    __syncthreads();
    product.template accumulate<Layout>(tiles);
    __syncthreads();
  }
  product.finish(tiles, [&](int r, int f, T dot, T rowsum) {
    const int64_t row = r0 + r, d = d0 + f;
    if (row >= written_rows || d >= a.dim) return;
    const int64_t at = (b * padded_rows + row) * a.dim + d;
    T g = row < rows ? a.scale * (a.self_weight * static_cast<T>(a.self[at]) * rowsum - dot) : T(0);
    if constexpr (kUnitRows) g *= self_scale[r];
    if constexpr (kBand) {
      if (a.grad_sum) {
        const double sum = (a.accumulate ? a.grad_sum[at] : 0.0) + static_cast<double>(g);
        a.grad_sum[at] = sum;
        a.grad[at] = static_cast<In>(static_cast<T>(sum));
        return;
      }
    }
    a.grad[at] = static_cast<In>(g);
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
// Register caps chosen by measurement (H100): float takes three blocks per SM up to 64 features and
// two for the widest tile; double keeps two, as three would spill its dense tile.
template <typename T, int kFeatures, bool kDense, typename In, bool kBand = false, bool kUnitRows = false>
__global__ void __launch_bounds__(kJacThreads, std::is_same_v<T, float> && kFeatures <= 64 ? 3 : 2) jacobian_kernel(JacobianArgs<T, In> gx, JacobianArgs<T, In> gy, int x_blocks) {
  __shared__ typename JacobianProduct<T, kFeatures>::Tiles tiles;
  if (static_cast<int>(blockIdx.x) < x_blocks)
    jacobian_block<T, false, kFeatures, kDense, In, kBand, kUnitRows>(gx, blockIdx.z, blockIdx.x, blockIdx.y, tiles);
  else
    jacobian_block<T, true, kFeatures, kDense, In, kBand, kUnitRows>(gy, blockIdx.z, blockIdx.x - x_blocks, blockIdx.y, tiles);
}

}  // namespace sdtw::kernels::detail
