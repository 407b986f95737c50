// Rungs a, a', b and c, each one piece on top of the one before, as the production forward does it:
// (a) the cost of real D-dimensional float32 inputs read from global memory, squared Euclidean
// (a block's 32 rows of x broadcast from shared memory, each thread's y row in registers 8 features
// at a time); (a') the production forward's softmin in place of the ceiling's (the minimum of three
// and 3 exp2, for 2 exp2 by rank); (b) R accumulated in float64 (docs/DESIGN.md §3.2); (c) the
// state the backward needs, on b's kernel, launch shape and softmin: the three exp2 normalised by
// one reciprocal, encoded as CellState<float> does and written, one 4-byte word per cell, 128
// consecutive bytes per warp and cell as the production layout.
#include <cmath>
#include <stdexcept>
#include <string>

#include "ladder.hpp"
#include "pair_per_thread.cuh"  // strip_costs: the product's cost of a strip of 32 rows
#include "state.cuh"
#include "tile.cuh"

namespace sdtw::kernels::ladder {
namespace {

constexpr uint32_t kInputRows = 1 << 16;  // rows of x and of y (16 MiB each at D = 64), a power of 2

enum class Piece { kInputs, kProductionSoftmin, kFloat64, kState };

// Blocks an SM holds of rung b's kernel (ptxas -v: 142-153 registers at D 8-64, so 3 x 128
// threads). c is held to it (168 registers, with a few spills): left free, ptxas gives c 255
// registers, so 2 blocks an SM and another launch shape. run_one checks that the shapes agree.
constexpr int kBlocksOfB = 3;

template <Piece kPiece, int kD>
__global__ void __launch_bounds__(kThreads, kPiece == Piece::kState ? kBlocksOfB : 1)
    inputs_kernel(const float* x, const float* y, int64_t columns, float exp2_scale, double log2_scale,
                  uint32_t* state, float* out) {
  using R = std::conditional_t<kPiece == Piece::kInputs || kPiece == Piece::kProductionSoftmin, float, double>;
  using Cell = std::conditional_t<kPiece == Piece::kInputs, Softmin<R>, MinSoftmin<R>>;
  using State = detail::CellState<float>;
  __shared__ __align__(16) float xs[kRows][kD];
  const int64_t row0 = (blockIdx.x * kRows) & (kInputRows - 1);
  for (int k = threadIdx.x; k < kRows * kD; k += blockDim.x) xs[k / kD][k % kD] = x[row0 * kD + k];
  __syncthreads();
  const int64_t threads = int64_t(gridDim.x) * blockDim.x, tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int64_t warp = tid / 32;
  R r[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) r[i] = INFINITY;
  R corner = 0.0;
  // A warp's 32 x 32 cells of column j are 32 runs of 128 bytes, so a thread's next cell is 128
  // bytes on, an immediate offset as in the production layout (forward.cuh, state_index).
  uint32_t* column_state = state + warp * columns * kRows * 32 + lane;
#pragma unroll 1
  for (int64_t j = 0; j < columns; ++j) {
    float c[kRows];
    detail::strip_costs(detail::StripRows<kD, true>{xs}, y + (static_cast<uint32_t>(tid + j * threads) & (kInputRows - 1)) * kD, c);
    R diag = corner, up = INFINITY;
    corner = INFINITY;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const R left = r[i];
      const Cell s(diag, up, left, exp2_scale);
      const R v = s.value(c[i], static_cast<R>(log2_scale));
      if constexpr (kPiece == Piece::kState)
        column_state[i * 32] = State::encode(s.e_diag, s.e_up, s.e_left, detail::fast_rcp(s.sum));
      diag = left;
      up = v;
      r[i] = v;
    }
    if constexpr (kPiece == Piece::kState) column_state += kRows * 32;
  }
  out[tid] = static_cast<float>(r[kRows - 1]);
}

const char* label_of(Piece piece) {
  switch (piece) {
    case Piece::kInputs: return "+ cost of D-dimensional float32 inputs from global memory";
    case Piece::kProductionSoftmin: return "+ the production's softmin (minimum of three, 3 exp2, for 2 by rank)";
    case Piece::kFloat64: return "+ R accumulated in float64";
    case Piece::kState: return "+ state saved for the backward (weights, 4 B per cell written)";
  }
  return "";
}

template <Piece kPiece, int kD>
void run_one(const Settings& settings, const float* x, const float* y) {
  Buffers buf;
  const auto kernel = inputs_kernel<kPiece, kD>;
  const Shape shape = fill_device(reinterpret_cast<const void*>(kernel), kThreads, 0, kRows, settings.synthetic_cells);
  // c runs b's launch shape, so that b -> c adds nothing but the state: it must fit as many blocks an SM.
  if (kPiece == Piece::kState) {
    const auto b_kernel = inputs_kernel<Piece::kFloat64, kD>;
    const Shape b = fill_device(reinterpret_cast<const void*>(b_kernel), kThreads, 0, kRows, settings.synthetic_cells);
    if (shape.blocks != b.blocks || shape.columns != b.columns)
      throw std::runtime_error("ladder: rung c at D " + std::to_string(kD) + " launches " + std::to_string(shape.blocks) +
                               " blocks, rung b " + std::to_string(b.blocks) +
                               ": c's registers must let an SM hold as many blocks as b's (ptxas -v)");
  }
  const int64_t threads = int64_t(shape.blocks) * shape.threads, cells = threads * kRows * shape.columns;
  float* out = buf.alloc<float>(threads);
  uint32_t* state = kPiece == Piece::kState ? buf.alloc<uint32_t>(cells) : nullptr;
  const auto times = time_ms([&] {
    kernel<<<shape.blocks, shape.threads>>>(x, y, shape.columns, -1.4426950408889634f, 0.6931471805599453, state, out);
  }, settings);
  const char* rung = kPiece == Piece::kInputs ? "a" : kPiece == Piece::kProductionSoftmin ? "a'" : kPiece == Piece::kFloat64 ? "b" : "c";
  const char* previous = kPiece == Piece::kInputs ? "0" : kPiece == Piece::kProductionSoftmin ? "a" : kPiece == Piece::kFloat64 ? "a'" : "b";
  Rung r{rung, label_of(kPiece), "forward", previous, threads, kRows, shape.columns, kD};
  r.cells = cells;
  emit(r, times, settings);
}

template <int kD>
void run_dim(const Settings& settings, const float* x, const float* y) {
  run_one<Piece::kInputs, kD>(settings, x, y);
  run_one<Piece::kProductionSoftmin, kD>(settings, x, y);
  run_one<Piece::kFloat64, kD>(settings, x, y);
  run_one<Piece::kState, kD>(settings, x, y);
}

}  // namespace

void run_inputs(const Settings& settings) {
  Buffers buf;
  constexpr int kMaxD = 64;
  float* x = buf.alloc<float>(int64_t(kInputRows) * kMaxD);
  float* y = buf.alloc<float>(int64_t(kInputRows) * kMaxD);
  fill_uniform(x, int64_t(kInputRows) * kMaxD, 0x9e3779b9u);
  fill_uniform(y, int64_t(kInputRows) * kMaxD, 0x85ebca6bu);
  run_dim<8>(settings, x, y);
  run_dim<16>(settings, x, y);
  run_dim<kMaxD>(settings, x, y);
}

}  // namespace sdtw::kernels::ladder
