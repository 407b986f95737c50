// Rung 0, the ceiling: every thread runs its own soft-DTW recurrence over a tile of kRows x columns
// cells held in registers; the cost is that of D = 1 from registers and nothing touches memory but
// one reduced value per thread at the end (so the compiler keeps the work). The softmin takes the
// minimum of the three predecessors, then 1 + 2 exp2 + 1 log2 (the minimum's own weight is 1),
// with the production kernels' exp2 and log2 (one MUFU instruction each, forward.cuh). For
// reference: a backward cell (E from its three successors, 3 exp2) and the hard-min DTW cell.
#include <cmath>

#include "ladder.hpp"
#include "tile.cuh"

namespace sdtw::kernels::ladder {
namespace {

using detail::fast_exp2;
using detail::fast_log2;

enum class Cell { kSoftForward, kSoftBackward, kHardMin };

template <Cell kCell>
__global__ void __launch_bounds__(kThreads) ceiling_kernel(int64_t columns, float exp2_scale, float log2_scale,
                                                           float* out) {
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  float x[kRows], r[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    x[i] = row_feature(tid, i);
    r[i] = kCell == Cell::kSoftBackward ? 0.0f : INFINITY;
  }
  float y = row_feature(tid, kRows);
  float corner = kCell == Cell::kSoftBackward ? 1.0f : 0.0f;  // R(-1, -1) = 0; E of the end cell = 1
  // Unrolled as far as the tile stays in registers without spills (ptxas -v).
#pragma unroll(kCell == Cell::kHardMin ? 2 : 1)
  for (int64_t j = 0; j < columns; ++j) {
    y = next_feature(y);
    float diag = corner, up = kCell == Cell::kSoftBackward ? 0.0f : INFINITY;
    corner = kCell == Cell::kSoftBackward ? 0.0f : INFINITY;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const float left = r[i], d = x[i] - y, c = d * d;
      float v;
      if constexpr (kCell == Cell::kSoftForward) {
        v = soft_cell(c, diag, up, left, exp2_scale, log2_scale);
      } else if constexpr (kCell == Cell::kHardMin) {
        v = c + fminf(diag, fminf(up, left));
      } else {
        // E(cell) = sum over its successors of E(s) exp((R(cell) + c(s) - R(s)) / gamma): the
        // exponents' arguments stand in as cost differences, and the sweep runs the forward's way:
        // neither changes the cell's arithmetic.
        v = diag * fast_exp2((c - x[i]) * exp2_scale) + up * fast_exp2((c - y) * exp2_scale) +
            left * fast_exp2((x[i] - c) * exp2_scale);
      }
      diag = left;
      up = v;
      r[i] = v;
    }
  }
  out[tid] = r[kRows - 1];
}

template <Cell kCell>
void run_one(const Settings& settings, const char* mode, const char* label) {
  Buffers buf;
  const Shape shape = fill_device(reinterpret_cast<const void*>(ceiling_kernel<kCell>), kThreads, 0, kRows,
                                  settings.synthetic_cells);
  float* out = buf.alloc<float>(int64_t(shape.blocks) * shape.threads);
  const float exp2_scale = -1.4426950408889634f, log2_scale = 0.6931471805599453f;  // gamma = 1
  const auto times = time_ms([&] {
    ceiling_kernel<kCell><<<shape.blocks, shape.threads>>>(shape.columns, exp2_scale, log2_scale, out);
  }, settings);
  Rung r{"0", label, mode, "", 0, kRows, shape.columns, 1};
  r.B = int64_t(shape.blocks) * shape.threads;
  r.cells = r.B * kRows * shape.columns;
  emit(r, times, settings);
}

}  // namespace

void run_registers(const Settings& settings) {
  run_one<Cell::kSoftForward>(settings, "forward", "ceiling: soft-DTW forward cell in registers");
  run_one<Cell::kSoftBackward>(settings, "backward-cell", "ceiling: soft-DTW backward cell in registers (3 exp2)");
  run_one<Cell::kHardMin>(settings, "hard-min", "ceiling: hard-min DTW cell in registers");
}

}  // namespace sdtw::kernels::ladder
