#pragma once
// The second order's sweeps run a strip a block: the strip's chain warp and a loader warp. The loader
// moves a chunk's G into a shared tile along rows (32 consecutive columns a warp load) and, where
// the sweep writes E_dot, takes the chunk's E_dot out of the tile along rows once the chain is done
// with it. Read or written by the chain itself, each would touch 32 rows a warp step, and at many
// strips an SM those accesses, not the chain, set the time.
#include <type_traits>

#include "schedule.cuh"

namespace sdtw::kernels::detail {

constexpr int kStripBlock = 2 * kWarp;  // threads of a strip's block
constexpr int kTileSlots = 2;
constexpr int kTilePad = kWarp + 1;  // a tile row of 33 doubles: a step's column and a row are both conflict-free
using Tile = double[kWarp * kTilePad];

// Named barriers with constant ids (so the block reserves only these): a tile is full (1 + slot),
// a tile is done with (1 + kTileSlots + slot); barrier 0 is __syncthreads. The chain and the loader
// meet at different instructions, so the barriers are the unaligned forms (bar.sync is aligned:
// every thread at the same one); each warp arrives whole.
template <bool kWait>
__device__ inline void tile_barrier(int id) {
  const auto at = [](auto c) {
    if constexpr (kWait) asm volatile("barrier.sync %0, %1;" ::"n"(decltype(c)::value), "n"(kStripBlock) : "memory");
    else asm volatile("barrier.arrive %0, %1;" ::"n"(decltype(c)::value), "n"(kStripBlock) : "memory");
  };
  static_assert(kTileSlots == 2, "one case per barrier id");
  __syncwarp();
  switch (id) {
    case 1: at(std::integral_constant<int, 1>{}); break;
    case 2: at(std::integral_constant<int, 2>{}); break;
    case 3: at(std::integral_constant<int, 3>{}); break;
    default: at(std::integral_constant<int, 4>{}); break;
  }
}

// The chain's side: chunk c's G is in tiles[c % kTileSlots] once await_tile returns, lane l's step s
// at l * kTilePad + s; release_tile hands the tile back (with E_dot in G's place where there is one).
__device__ inline void await_tile(int chunk) { tile_barrier<true>(1 + chunk % kTileSlots); }
__device__ inline void release_tile(int chunk) { tile_barrier<true>(1 + kTileSlots + chunk % kTileSlots); }

// The block's next strip: the chain warp takes the ticket (and claims the strip), the loader learns it.
__device__ inline int64_t block_ticket(const Schedule& s, bool loader, long long& shared_ticket) {
  if (!loader) {
    const int64_t t = take_ticket(s.ticket);
    if ((threadIdx.x & 31) == 0) shared_ticket = t;
  }
  __syncthreads();
  const int64_t ticket = shared_ticket;
  __syncthreads();
  return ticket;
}

// The loader's side of one strip of rows_here rows and cols columns in a row-major matrix of row
// length m: each chunk's G into its tile, 0 outside the pair, and (E_dot given) each chunk's tile out
// to E_dot. The chain's lane r takes, at step s of chunk c, column 32 c + s - r (top-down sweep) or
// cols + 30 - 32 c - s - r (bottom-up), so the loader's lane l fills step s = l (or 31 - l) of
// every row.
template <bool kBottomUp>
__device__ void load_strip_tiles(Tile* tiles, const double* G, double* E_dot, int64_t m, int rows_here, int cols) {
  const int lane = threadIdx.x & 31;
  const int step = kBottomUp ? kWarp - 1 - lane : lane;
  const int chunks = (cols + 2 * kWarp - 2) / kWarp;
  const auto column = [&](int c) { return kBottomUp ? cols + kWarp - 2 - c * kWarp - step : c * kWarp + step; };
  const auto in_pair = [&](int r, int j) { return r < rows_here && j >= 0 && j < cols; };
  const auto done_with = [&](int c) {
    release_tile(c);
    if (E_dot == nullptr) return;
    const double* tile = tiles[c % kTileSlots];
    const int j0 = column(c);
#pragma unroll 8
    for (int r = 0; r < kWarp; ++r)
      if (in_pair(r, j0 - r)) E_dot[static_cast<int64_t>(r) * m + j0 - r] = tile[r * kTilePad + step];
  };
  for (int c = 0; c < chunks; ++c) {
    if (c >= kTileSlots) done_with(c - kTileSlots);
    const int j0 = column(c);
    double g[kWarp];  // all 32 loads in flight before the first store
#pragma unroll
    for (int r = 0; r < kWarp; ++r) g[r] = in_pair(r, j0 - r) ? __ldg(G + static_cast<int64_t>(r) * m + j0 - r) : 0.0;
    double* tile = tiles[c % kTileSlots];
#pragma unroll
    for (int r = 0; r < kWarp; ++r) tile[r * kTilePad + step] = g[r];
    tile_barrier<false>(1 + c % kTileSlots);
  }
  for (int c = max(0, chunks - kTileSlots); c < chunks; ++c) done_with(c);
}

}  // namespace sdtw::kernels::detail
