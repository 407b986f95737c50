#pragma once
// The synthetic rungs' common cell: each thread owns a tile of kRows rows (a strip's height in the
// production kernels) and walks its columns; within a column, row i's cell reads diag = R(i-1, j-1),
// up = R(i-1, j) and left = R(i, j-1), all in registers.
#include <cstdint>

#include "forward.cuh"

namespace sdtw::kernels::ladder {

constexpr int kRows = 32;
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

// R of a cell with cost c, in R's type: (c + rmin) - gamma ln(sum of the three weights), the
// minimum's weight being 1, so two exp2 and one log2 in float32 on the exact differences.
template <typename R>
__device__ inline R soft_cell(float c, R diag, R up, R left, float exp2_scale, R log2_scale) {
  const R rmin = fmin(diag, fmin(up, left));
  const R mid = fmax(fmin(diag, up), fmin(fmax(diag, up), left));
  const R hi = fmax(diag, fmax(up, left));
  const float sum = 1.0f + detail::fast_exp2(static_cast<float>(mid - rmin) * exp2_scale) +
                    detail::fast_exp2(static_cast<float>(hi - rmin) * exp2_scale);
  return (static_cast<R>(c) + rmin) - log2_scale * static_cast<R>(detail::fast_log2(sum));
}

}  // namespace sdtw::kernels::ladder
