#pragma once
// The synthetic rungs' common cell: each thread owns a tile of kRows rows (a strip's height in the
// production kernels) and walks its columns; within a column, row i's cell reads diag = R(i-1, j-1),
// up = R(i-1, j) and left = R(i, j-1), all in registers.
#include <cstdint>

#include "forward.cuh"

namespace sdtw::kernels::ladder {

constexpr int kRows = 32;
constexpr int kThreads = 128;  // 4 warps a block, as the float production kernels
constexpr int kSlice = 8;      // features per slice of y in registers

// A 16-byte shared-memory load the compiler may not hoist out of the column loop: x stays in shared
// memory, as in the production cost, instead of taking kRows x kD registers.
__device__ inline float4 shared_load4(const float* p) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
  return v;
}

// c[i] = ||xs[i] - y_row||^2 for a tile's 32 rows: one fmaf a feature in feature order, as the
// production's SqEuclidean (costs.cuh).
template <int kD>
__device__ inline void tile_cost(const float (&xs)[kRows][kD], const float* y_row, float (&c)[kRows]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) c[i] = 0.0f;
#pragma unroll 2
  for (int d0 = 0; d0 < kD; d0 += kSlice) {
    float y[kSlice];
    const float4 lo = *reinterpret_cast<const float4*>(y_row + d0);
    const float4 hi = *reinterpret_cast<const float4*>(y_row + d0 + 4);
    y[0] = lo.x, y[1] = lo.y, y[2] = lo.z, y[3] = lo.w, y[4] = hi.x, y[5] = hi.y, y[6] = hi.z, y[7] = hi.w;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const float4 a = shared_load4(&xs[i][d0]), b = shared_load4(&xs[i][d0 + 4]);
      const float xr[kSlice] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
      for (int f = 0; f < kSlice; ++f) {
        const float diff = xr[f] - y[f];
        c[i] = fmaf(diff, diff, c[i]);
      }
    }
  }
}

// A value in [0, 1) per (thread, row), and the next column's value of a thread: cheap stand-ins
// for features that the compiler cannot fold.
__device__ inline float row_feature(int64_t tid, int i) {
  const uint32_t h = static_cast<uint32_t>(tid) * 2654435761u + static_cast<uint32_t>(i) * 40503u;
  return static_cast<float>(h >> 16) * (1.0f / 65536.0f);
}
__device__ inline float next_feature(float y) {
  y += 0.618034f;
  return y >= 1.0f ? y - 1.0f : y;
}

// The softmin of a cell's three predecessors in R's type, by rank: the minimum's weight is 1, so
// two exp2 in float32 on the exact differences give the other two and their sum.
template <typename R>
struct Softmin {
  R rmin, mid, hi;
  float e_mid, e_hi, sum;

  __device__ Softmin(R diag, R up, R left, float exp2_scale)
      : rmin(fmin(diag, fmin(up, left))),
        mid(fmax(fmin(diag, up), fmin(fmax(diag, up), left))),
        hi(fmax(diag, fmax(up, left))) {
    e_mid = detail::fast_exp2(static_cast<float>(mid - rmin) * exp2_scale);
    const float head = 1.0f + e_mid;
    e_hi = detail::fast_exp2(static_cast<float>(hi - rmin) * exp2_scale);
    sum = head + e_hi;
  }

  // R of the cell with cost c: (c + rmin) - gamma ln(sum), one log2.
  __device__ R value(float c, R log2_scale) const {
    return (static_cast<R>(c) + rmin) - log2_scale * static_cast<R>(detail::fast_log2(sum));
  }
};

// The production forward's softmin (forward.cuh): the minimum of the three in R's type, then one
// exp2 a predecessor on the exact differences; the three exp2 are the weights in their places.
template <typename R>
struct MinSoftmin {
  R rmin;
  float e_diag, e_up, e_left, sum;

  __device__ MinSoftmin(R diag, R up, R left, float exp2_scale) : rmin(fmin(diag, fmin(up, left))) {
    e_diag = detail::fast_exp2(static_cast<float>(diag - rmin) * exp2_scale);
    e_up = detail::fast_exp2(static_cast<float>(up - rmin) * exp2_scale);
    e_left = detail::fast_exp2(static_cast<float>(left - rmin) * exp2_scale);
    sum = e_diag + e_up + e_left;
  }

  __device__ R value(float c, R log2_scale) const {
    return (static_cast<R>(c) + rmin) - log2_scale * static_cast<R>(detail::fast_log2(sum));
  }
};

// R of a cell, for the rungs that save no state.
template <typename R>
__device__ inline R soft_cell(float c, R diag, R up, R left, float exp2_scale, R log2_scale) {
  return Softmin<R>(diag, up, left, exp2_scale).value(c, log2_scale);
}

}  // namespace sdtw::kernels::ladder
