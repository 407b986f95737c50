#pragma once
// Cost policies: the DP kernels never know which cost they run on. Once per 32 columns, each lane
// of a warp asks the policy for one column of its strip's cost tile: out[r] = cost(row0 + r, j)
// for the 32 rows of the strip. A cost computed from x and y is a metric (below) run by FeatureCost;
// a new one is a new metric and one row of the kernels' Cost table (named_costs.cuh).
#include <cstdint>
#include <type_traits>

namespace sdtw::kernels {

constexpr int kStripRows = 32;

// The caller's cost tensor D, batch x n x m, row-major: one coalesced load per row.
template <typename T>
struct PrecomputedCost {
  const T* D;
  int64_t n, m;

  struct Scratch {};
  __device__ void column(int64_t b, int64_t row0, int64_t rows, int64_t j, Scratch&, T (&out)[kStripRows]) const {
#pragma unroll
    for (int r = 0; r < kStripRows; ++r) out[r] = row0 + r < rows ? __ldg(D + (b * n + row0 + r) * m + j) : T(0);
  }
};

// A metric is what FeatureCost needs of a cost of two rows x_i, y_j: add() folds one feature into
// the accumulator, finish() turns it into the cost (kNorms: it also gets norm_scale() of ||x_i||^2
// and of ||y_j||^2, computed once a row of a column rather than once a cell). A fused gradient
// takes one of three routes: jacobian.cuh's tensor-core product over E (SqEuclidean, NegativeDot,
// Cosine with unit rows), the same product over weights() of E and the cell's cost (Euclidean,
// alignment_weights.cuh), or derivative() of E and the two features summed on CUDA cores (L1,
// cost_gradient.cuh). Every metric here is symmetric in x and y. The definitions are the unfused
// path's (pytorch/src/ops_cpu.cpp, pairwise_cost) and the reference's (reference/costs.hpp).
struct SqEuclidean {
  static constexpr bool kNorms = false;
  template <typename T>
  __device__ static T add(T x, T y, T acc) {
    const T diff = x - y;
    return fma(diff, diff, acc);
  }
  template <typename T>
  __device__ static T finish(T acc, T, T) { return acc; }
};

// sum_k |x_k - y_k|, subgradient sign(0) = 0 as torch's abs.
struct L1 {
  static constexpr bool kNorms = false;
  template <typename T>
  __device__ static T add(T x, T y, T acc) { return acc + fabs(x - y); }
  template <typename T>
  __device__ static T finish(T acc, T, T) { return acc; }
  // E d cost / d self_f, the summand of the gradient.
  template <typename T>
  __device__ static T derivative(T e, T self, T other) {
    return self > other ? e : self < other ? -e : T(0);
  }
};

// sqrt(max(||x - y||^2, 1e-30)) as the unfused path: at the floor (coincident rows) the gradient is
// 0; a NaN distance stays NaN and +inf stays +inf, as clamp_min and sqrt keep them.
struct Euclidean {
  static constexpr bool kNorms = false;
  template <typename T>
  __device__ static T add(T x, T y, T acc) { return SqEuclidean::add(x, y, acc); }
  template <typename T>
  __device__ static T finish(T acc, T, T) {
    const T floored = acc <= T(1e-30) ? T(1e-30) : acc;
    // float: x * rsqrt(x) (rsqrtf's 2 ulp and one rounding) instead of the correctly rounded root's
    // refinement and slow-path branch, except at +inf, where it would give inf * 0; every kernel
    // computes a cost by this, so all agree.
    if constexpr (sizeof(T) == 4) return floored < T(INFINITY) ? floored * rsqrtf(floored) : floored;
    else return sqrt(floored);
  }
  template <typename T>
  __device__ static void weights(T e, T cost, T, T, T& w_self, T& w_other) {
    // E times the reciprocal: a division with E as numerator takes the division's slow path for the
    // tiny E of the cells far from the path, which made it most of the weights pass's stalls (ncu).
    // The floor's cost as finish() computes it, so that coincident rows keep a zero gradient.
    w_self = cost > finish(T(0), T(0), T(0)) ? e * (T(1) / cost) : T(0), w_other = -w_self;
  }
};

// 1 - <x, y> / (max(||x||, eps) max(||y||, eps)), eps = 1e-8. A row whose norm is below eps is
// divided by eps, a linear map: no radial term in its gradient (at eps exactly the radial term is
// kept, as clamp_min's backward does). The gradient is -(1 / |self_r|) sum_k E_rk other_k / |other_k|
// (jacobian_block's kUnitRows), then the radial part of each row projected out (project_out_rows).
struct Cosine {
  static constexpr bool kNorms = true;
  template <typename T>
  __device__ static T add(T x, T y, T acc) { return fma(x, y, acc); }
  template <typename T>
  __device__ static T clamped(T norm2) {
    const T norm = sqrt(norm2);
    return norm >= T(1e-8) ? norm : T(1e-8);
  }
  // 1 / max(||row||, eps): the square root and the division once a row, two multiplications a cell.
  template <typename T>
  __device__ static T norm_scale(T norm2) { return T(1) / clamped(norm2); }
  template <typename T>
  __device__ static T finish(T acc, T x_scale, T y_scale) {
    // One explicit fma: a contraction left to the compiler could differ between the kernels that
    // inline this, and the fused, unfused and values-only forwards must see the same cost.
    return fma(-(acc * x_scale), y_scale, T(1));
  }
};

// -<x, y>: a similarity as a cost, unbounded below.
struct NegativeDot {
  static constexpr bool kNorms = false;
  template <typename T>
  __device__ static T add(T x, T y, T acc) { return fma(x, y, acc); }
  template <typename T>
  __device__ static T finish(T acc, T, T) { return -acc; }
};

// Metric's cost of x_i and y_j from x (batch x n x dim) and y (batch x m x dim), never stored: each
// lane holds a slice of y_j in registers while the strip's slice of x is broadcast from shared
// memory. x and y are read as In (T, or bfloat16 / float16 for T = float) and the cost is computed in T.
template <typename T, typename Metric, int kSlice = 8, typename In = T>
struct FeatureCost {
  const In* x;
  const In* y;
  int64_t n, m, dim;
  const int64_t* x_index = nullptr;  // pair b reads x[x_index[b]] and y[y_index[b]]; null: b
  const int64_t* y_index = nullptr;

  struct alignas(16) Scratch {  // aligned so that a row of a slice is read by vector loads
    T x[kStripRows][kSlice];
  };
  static constexpr int kPerVector = 16 / sizeof(In);
  static_assert(kSlice % kPerVector == 0, "a slice is whole 16-byte vectors");

  // row[d0, d0 + kSlice) into out, in T, 0 past dim.
  __device__ void load_slice(const In* row, int64_t d0, bool vectors, T (&out)[kSlice]) const {
    using Vector = std::conditional_t<sizeof(In) == 8, double2, std::conditional_t<sizeof(In) == 4, float4, uint4>>;
    if (vectors) {
#pragma unroll
      for (int v = 0; v < kSlice / kPerVector; ++v) {
        Vector w{};
        if (d0 + v * kPerVector < dim) w = __ldg(reinterpret_cast<const Vector*>(row + d0) + v);
        const In* parts = reinterpret_cast<const In*>(&w);
#pragma unroll
        for (int e = 0; e < kPerVector; ++e) out[v * kPerVector + e] = static_cast<T>(parts[e]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < kSlice; ++q) out[q] = d0 + q < dim ? static_cast<T>(__ldg(row + d0 + q)) : T(0);
    }
  }
  __device__ void column(int64_t b, int64_t row0, int64_t rows, int64_t j, Scratch& s, T (&out)[kStripRows]) const {
    const int lane = threadIdx.x & 31;
    const int64_t xb = x_index ? x_index[b] : b, yb = y_index ? y_index[b] : b;
    const In* xi = x + (xb * n + (row0 + lane < rows ? row0 + lane : row0)) * dim;
    const In* yj = y + (yb * m + j) * dim;
    // 16-byte loads where every row starts 16-byte aligned: each load instruction of a lane
    // touches a separate row, so fewer, wider loads are what keeps the L1 from being the limit.
    const bool vectors =
        dim % kPerVector == 0 && (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16 == 0;
    // The next slice's loads are issued before this slice's products, so a column waits for
    // one memory round trip, not one per slice.
    T x_next[kSlice], y_next[kSlice];
    auto load = [&](int64_t d0) {
      load_slice(xi, d0, vectors, x_next);
      load_slice(yj, d0, vectors, y_next);
    };
#pragma unroll
    for (int r = 0; r < kStripRows; ++r) out[r] = T(0);
    // kNorms: this lane's squared norms of x_{row0 + lane} and y_j.
    [[maybe_unused]] T x_norm2 = T(0), y_norm2 = T(0);
    load(0);
    for (int64_t d0 = 0; d0 < dim; d0 += kSlice) {
      T yv[kSlice];
      __syncwarp();
#pragma unroll
      for (int q = 0; q < kSlice; ++q) {
        s.x[lane][q] = x_next[q];
        yv[q] = y_next[q];
        if constexpr (Metric::kNorms) {
          x_norm2 = fma(x_next[q], x_next[q], x_norm2);
          y_norm2 = fma(y_next[q], y_next[q], y_norm2);
        }
      }
      if (d0 + kSlice < dim) load(d0 + kSlice);
      __syncwarp();
#pragma unroll
      for (int r = 0; r < kStripRows; ++r)
#pragma unroll
        for (int q = 0; q < kSlice; ++q) out[r] = Metric::add(s.x[r][q], yv[q], out[r]);
    }
    [[maybe_unused]] T x_scale = T(0), y_scale = T(0);
    if constexpr (Metric::kNorms) x_scale = Metric::norm_scale(x_norm2), y_scale = Metric::norm_scale(y_norm2);
#pragma unroll
    for (int r = 0; r < kStripRows; ++r) {
      [[maybe_unused]] T row_scale = T(0);
      if constexpr (Metric::kNorms) row_scale = __shfl_sync(0xffffffffu, x_scale, r);
      out[r] = Metric::finish(out[r], row_scale, y_scale);
    }
  }
};

// ||x_i - y_j||^2, the cost the fused mode was first written for, with its own gradient product (jacobian.cuh).
template <typename T, int kSlice = 8, typename In = T>
using SqEuclideanCost = FeatureCost<T, SqEuclidean, kSlice, In>;

}  // namespace sdtw::kernels
