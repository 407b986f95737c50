#pragma once
// The cost tensor of a cost policy, written out: each warp computes one 32 x 32 tile with the
// policy's column() (the same code the fused forward runs) and stores it row by row, coalesced.
#include "schedule.cuh"
#include "sdtw/kernels/costs.cuh"

namespace sdtw::kernels::detail {

constexpr int kCostTileWarps = 4;

// Grid: (column tiles / kCostTileWarps, row tiles, batch).
template <typename T, typename Cost>
__global__ void __launch_bounds__(kCostTileWarps * kWarp) cost_tile_kernel(Cost cost, int64_t n, int64_t m, T* D) {
  __shared__ typename Cost::Scratch scratch[kCostTileWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  const int64_t b = blockIdx.z, row0 = static_cast<int64_t>(blockIdx.y) * kWarp;
  const int64_t col0 = (static_cast<int64_t>(blockIdx.x) * kCostTileWarps + warp) * kWarp;
  if (col0 >= m) return;  // whole warps only: column() synchronises the warp
  const int64_t j = col0 + lane < m ? col0 + lane : m - 1;
  T column[kWarp];
  cost.column(b, row0, n, j, scratch[warp], column);
  if (col0 + lane >= m) return;
#pragma unroll
  for (int r = 0; r < kWarp; ++r)
    if (row0 + r < n) D[(b * n + row0 + r) * m + j] = column[r];
}

}  // namespace sdtw::kernels::detail
