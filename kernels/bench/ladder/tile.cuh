#pragma once
// The synthetic rungs' common cell: each thread owns a tile of kRows rows (a strip's height in the
// production kernels) and walks its columns; within a column, row i's cell reads diag = R(i-1, j-1),
// up = R(i-1, j) and left = R(i, j-1), all in registers.
#include <cstdint>

#include "forward.cuh"

namespace sdtw::kernels::ladder {

constexpr int kRows = 32;
static_assert(kRows == detail::kWarp, "a tile is the product's strip: strip_costs fills 32 rows");
constexpr int kThreads = 128;  // 4 warps a block, as the float production kernels

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
