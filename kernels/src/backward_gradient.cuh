#pragma once
// The fused mode's backward and its gradient in one launch. Warps first run the backward's strips
// (backward_strips); once those tickets are gone, blocks take tiles of the gradient product
// (jacobian_block) from a second ticket, each after the strips whose E it uses have published kDone.
// Every strip's ticket is taken, by a running warp, before any block takes a tile, so a block only
// ever waits on warps that are running: no deadlock for any grid size.
#include <cuda/atomic>

#include "backward.cuh"
#include "jacobian.cuh"

namespace sdtw::kernels::detail {

// Waits until the strips at positions [first, last] of pair b's backward order are done; their E
// is then visible to every thread of the block (the fence: the tiles read E with plain loads). One
// warp polls, slowly: a tile can start a microsecond late, and its polls share the L2 with the
// strips' border traffic.
__device__ inline void wait_for_strips(const Schedule& s, int64_t b, int64_t first, int64_t last) {
  if (threadIdx.x < kWarp)
    for (int64_t order = first + threadIdx.x; order <= last; order += kWarp)
      wait_for(s.progress + b * s.strips + order, kDone, 512);
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  __syncthreads();
}

// Warps of a block that run strips; the others wait for the tiles. Strips then spread over as many
// SMs as in the backward's own launch instead of crowding half as many.
constexpr int kStripWarps = warps_per_block<float>();

// Out of line, so that the registers of the gradient's tiles never crowd the strips' chain.
template <typename T>
__device__ __noinline__ void strips_out_of_line(const BackwardArgs<T>& a) {
  backward_strips<T, false>(a, nullptr);
}

// Tiles of a pair: rows of x from the bottom up (the backward finishes the bottom strips first,
// so their tiles overlap the strips still running above), then rows of y, which read every strip.
template <typename T, int kFeatures, typename In, bool kUnitRows = false>
__global__ void __launch_bounds__(kJacThreads, 2)
    backward_gradient_kernel(BackwardArgs<T> a, JacobianArgs<T, In> gx, JacobianArgs<T, In> gy) {
  using Product = JacobianProduct<T, kFeatures>;
  constexpr int64_t kRows = Product::kRows;
  __shared__ typename Product::Tiles tiles;
  __shared__ int64_t taken;
  if (threadIdx.x / kWarp < kStripWarps) strips_out_of_line(a);

  const Schedule& s = a.s;
  const GradientTiles<T, kFeatures> count(s.n, s.m, gx.dim);
  const int64_t x_blocks = count.x_blocks, features = count.features;
  const int64_t per_pair = count.per_pair(), total = s.batch * per_pair;
  for (;;) {
    __syncthreads();  // the block's strips, or its last tile's use of `tiles`, `taken` and its row scales, are done
    if (threadIdx.x == 0) taken = static_cast<int64_t>(atomicAdd(tile_ticket(s), 1ull));
    __syncthreads();
    const int64_t tile = taken;
    if (tile >= total) break;
    const int64_t b = tile / per_pair, block = tile % per_pair / features, feature_tile = tile % features;
    if (block < x_blocks) {
      const int64_t row_block = x_blocks - 1 - block;
      const int64_t top = row_block * kRows / kWarp, bottom = min(s.strips - 1, ((row_block + 1) * kRows - 1) / kWarp);
      wait_for_strips(s, b, s.strips - 1 - bottom, s.strips - 1 - top);
      jacobian_block<T, false, kFeatures, false, In, false, kUnitRows>(gx, b, row_block, feature_tile, tiles);
    } else {
      wait_for_strips(s, b, 0, s.strips - 1);
      jacobian_block<T, true, kFeatures, false, In, false, kUnitRows>(gy, b, block - x_blocks, feature_tile, tiles);
    }
  }
  finish_launch(s);
}

}  // namespace sdtw::kernels::detail
