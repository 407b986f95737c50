// Times the Hessian-vector product's three launches apart (the forward that saves the weights, the
// R_dot sweep, the E / A sweep) beside the first order's float32 forward on the same cost, CUDA
// events, median of 20 after 3 warm-ups; then, with "accuracy", compares the float32 weights'
// product with the float64 weights' one on the same float32 cost over gamma. Then the R_dot
// sweep's chain alone and that sweep with staged inputs (float32 weights), and last the forward and an
// R_dot sweep (on another workspace) on two streams at once. Usage: [SDTW_PARTS_DIM=d]
// hessian_parts B N [M] [accuracy] (M = N by default; N = 32 and a long M give strips that wait on
// no other strip; the costs are uniform on [0, 8), or with SDTW_PARTS_DIM the benchmark's kind).
// Target sdtw_hessian_parts (-DSDTW_BUILD_LAB=ON), or by hand: nvcc -O3 -std=c++17 -arch=sm_90
// --expt-relaxed-constexpr -Ikernels/include lab/kernels/hessian_parts.cu kernels/src/workspace.cpp
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "../../kernels/src/hessian_product.cuh"
#include "../../kernels/src/launch.cuh"

using namespace sdtw::kernels;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

template <typename F>
float median_ms(F&& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int k = 0; k < 3; ++k) f();
  std::vector<float> t;
  for (int k = 0; k < 20; ++k) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// One step of the R_dot recursion as hessian_forward_sweep takes it, for the lab's copies of that
// sweep: R_dot from the lane's left and diagonal predecessors and the one above (lane 0: the
// border of the strip above, the lane `step`'s word), handed down the ring; it carries the chain.
struct RDotChain {
  double left = 0.0, diag = 0.0, out = 0.0;
  __device__ double step(detail::FloatPair word, double g, double border, int step, bool active, uint64_t* ring_word,
                         bool writes_ring) {
    using namespace detail;
    const int lane = threadIdx.x & 31;
    double up = __shfl_up_sync(kFullMask, out, 1);
    const double border_j = __shfl_sync(kFullMask, border, step);
    up = lane == 0 ? border_j : up;
    const Weights<FloatWeights> w(word);
    const double r_dot = active ? g + w.diag * diag + w.up * up + w.left * left : 0.0;
    ring_store(ring_word, seal(r_dot), writes_ring && active);
    left = r_dot;
    diag = up;
    out = r_dot;
    return r_dot;
  }
};

// The R_dot sweep's chain alone: the same strips, steps, shuffles, selects and ring as
// hessian_forward_sweep, with each cell's weights and G made in registers instead of loaded and R_dot
// not stored. Its step against the real sweep's is what the loads and stores cost a step.
__global__ void __launch_bounds__(2 * detail::kWarp, 1) chain_only_sweep(detail::HessianProductArgs<detail::FloatWeights> a) {
  using namespace detail;
  using State = FloatWeights;
  const int lane = threadIdx.x & 31;
  const Schedule& s = a.s;
  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, false, strip)) continue;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const bool writes_ring = strip.row0 + kWarp < rows && lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    const int last_step = cols + kWarp - 1, j_end = i < rows ? cols : 0;
    RDotChain chain;
    const auto in_grid_of = [&](int t0) { return step_mask(lane - t0, j_end - t0 + lane); };
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      double border = 0.0;
      const bool reads_border = strip.k > 0 && t0 + lane < cols;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step, j = t - lane;
          const bool active = (in_grid >> step) & 1u;
          const FloatPair word = active ? FloatPair{0.25f + 0.001f * (t & 7), 0.25f} : State::empty();
          chain.step(word, 0.001 * ((t + lane) & 15), border, step, active, ring_out + j, writes_ring);
        }
      }
      ring_store(ring_in + t0 + lane, 0, reads_border);
      __syncwarp();
    }
    if (lane == kWarp - 1) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
}

// The R_dot sweep with its inputs staged: each block is a strip's two warps, a loader that copies
// the weights and G of the pieces ahead into shared memory (kStagedSlots pieces in flight) and the
// chain's warp, which reads them from there, so that no global load waits on the chain. Named
// barriers hand the slots over (full: 1 + slot, empty: 1 + kStagedSlots + slot). Same arithmetic
// as hessian_forward_sweep, so its R_dot is the same bit for bit.
constexpr int kStagedSlots = 4;

__device__ inline void bar_sync(int id) { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }
__device__ inline void bar_arrive(int id) { asm volatile("bar.arrive %0, 64;" ::"r"(id) : "memory"); }

__global__ void __launch_bounds__(2 * detail::kWarp) staged_r_dot_sweep(detail::HessianProductArgs<detail::FloatWeights> a) {
  using namespace detail;
  using State = FloatWeights;
  __shared__ FloatPair word_slot[kStagedSlots][kBorderPiece][kWarp];
  __shared__ double g_slot[kStagedSlots][kBorderPiece][kWarp];
  __shared__ long long shared_ticket;
  const int lane = threadIdx.x & 31;
  const bool loader = threadIdx.x >= kWarp;
  const Schedule& s = a.s;
  for (;;) {
    if (!loader) {
      const int64_t t = take_ticket(s.ticket);
      if (lane == 0) shared_ticket = t;
    }
    __syncthreads();
    const int64_t ticket = shared_ticket;
    __syncthreads();
    if (ticket >= s.total()) break;
    Strip strip;
    if (loader) {
      if (!locate_strip(s, ticket, false, strip)) continue;
    } else if (!begin_strip(s, ticket, false, strip)) {
      continue;
    }
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const int last_step = cols + kWarp - 1, j_end = i < rows ? cols : 0;
    const int pieces = (last_step + kWarp - 1) / kWarp * kPieces;
    const auto in_grid_of = [&](int t0) { return step_mask(lane - t0, j_end - t0 + lane); };
    const int64_t first_word = state_index(strip.b * s.strips + strip.k, s.m, 0, lane);
    if (loader) {
      const typename State::Word* st = a.state + first_word;
      const double* g_row = a.G + row_offset(s, strip.b, i, rows);
      for (int k = 0; k < pieces; ++k) {
        const int slot = k % kStagedSlots, t0 = k / kPieces * kWarp, piece = k % kPieces;
        if (k >= kStagedSlots) bar_sync(1 + kStagedSlots + slot);
        const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step;
          const bool active = (in_grid >> step) & 1u;
          word_slot[slot][q][lane] = active ? st[static_cast<int64_t>(t) * kWarp] : State::empty();
          g_slot[slot][q][lane] = __ldg(g_row + clamp_column(t - lane, cols));
        }
        bar_arrive(1 + slot);
      }
      continue;
    }
    const bool writes_ring = strip.row0 + kWarp < rows && lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    double* r_dot_out = a.r_dot + first_word;
    RDotChain chain;
    bool bad = false;
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      double border = 0.0;
      const bool reads_border = strip.k > 0 && t0 + lane < cols;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        const int k = t0 / kWarp * kPieces + piece, slot = k % kStagedSlots;
        bar_sync(1 + slot);
        FloatPair word[kBorderPiece];
        double g[kBorderPiece];
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          word[q] = word_slot[slot][q][lane];
          g[q] = g_slot[slot][q][lane];
        }
        if (k < pieces - kStagedSlots) bar_arrive(1 + kStagedSlots + slot);
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step, j = t - lane;
          const bool active = (in_grid >> step) & 1u;
          const double r_dot = chain.step(word[q], g[q], border, step, active, ring_out + j, writes_ring);
          bad |= active && !isfinite(g[q]);
          if (active) r_dot_out[static_cast<int64_t>(t) * kWarp] = r_dot;
        }
      }
      ring_store(ring_in + t0 + lane, 0, reads_border);
      __syncwarp();
    }
    if (__any_sync(kFullMask, bad) && lane == 0) a.bad_direction[strip.b] = 1;
    if (lane == kWarp - 1) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
}

// hessian_backward_sweep with G and E_dot through shared memory a chunk at a time: each is a 32 x 32
// parallelogram per warp (lane l's row, its 32 columns of the chunk), which the lanes read and write
// along rows, 32 consecutive columns a warp instruction, instead of one column a lane on 32 rows.
// The next chunk's G is loaded 8 rows a piece and stored into the other tile at the piece's end;
// the chunk's E_dot takes G's place in its tile as G is read and goes out 8 rows a piece of the next
// chunk, before that piece's G for the chunk after takes its place. Same arithmetic as the sweep, so the same E_dot
// bit for bit, except that G outside the pair reads as 0.
template <typename State>
__global__ void __launch_bounds__(2 * detail::kWarp) tiled_backward_sweep(detail::HessianProductArgs<State> a) {
  using namespace detail;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  constexpr int kPad = kWarp + 1;  // a row of a tile: 33 doubles, so a step's column and a row are conflict-free
  __shared__ double2 extra[2][3 * kWarp + 2];
  __shared__ double g_tile[2][2][kWarp * kPad];  // per warp, this chunk's and the next one's; E_dot replaces G as it is read
  double2* const zero_area = extra[warp];
  double2* const border_area = zero_area + kWarp + 1;
  double2* const seed_area = zero_area + 2 * kWarp + 2;
  zero_area[lane] = make_double2(0.0, 0.0);
  seed_area[lane] = make_double2(0.0, 0.0);
  const Schedule& s = a.s;
  constexpr int kWords = kBackwardBorderWords;
  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, true, strip)) continue;
    const int64_t b = strip.b;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const bool fed_from_below = strip.row0 + kWarp < rows;
    const bool writes_ring = strip.k > 0 && lane == 0;
    const bool last_lane = lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m * kWords;
    uint64_t* ring_in = a.ring + strip.previous * s.m * kWords;
    const int64_t first_word = state_index(b * s.strips + strip.k, s.m, 0, lane);
    const typename State::Word* st = a.state + first_word;
    const double* r_dot_in = a.r_dot + first_word;
    const int64_t strip_cells = (b * s.n + strip.row0) * s.m;  // the strip's first row
    const double* g_strip = a.G + strip_cells;
    double* E_dot_strip = a.E_dot + strip_cells;
    const auto value = a.values[b];
    const double undefined = a.bad_direction[b] != 0 || !isfinite(value) ? static_cast<double>(NAN) : 0.0;
    const int last_step = cols + kWarp - 1;
    const double inv_gamma = a.inv_gamma;
    const bool seeds = i == rows - 1;
    __syncwarp();
    if (seeds)
      seed_area[kWarp - 1 - lane] = make_double2(1.0, r_dot_in[static_cast<int64_t>(cols - 1 + lane) * kWarp] * inv_gamma);
    __syncwarp();
    const double2* extra_in = seeds ? seed_area : last_lane && fed_from_below ? border_area : zero_area;

    // Row r of chunk t0's tiles is the strip's row r at columns cols - 1 - t0 - r + c, c = 0..31,
    // kept at r * kPad + 31 - c, so that lane l's step s is at l * kPad + s.
    const auto column_of = [&](int t0, int r) { return cols - 1 - t0 - r + lane; };
    const auto in_pair = [&](int t0, int r) {
      const int j = column_of(t0, r);
      return strip.row0 + r < rows && j >= 0 && j < cols;
    };
    double g_next[kBorderPiece];
    const auto load_g = [&](int t0, int first_row) {
#pragma unroll
      for (int k = 0; k < kBorderPiece; ++k) {
        const int r = first_row + k;
        g_next[k] = in_pair(t0, r) ? __ldg(g_strip + static_cast<int64_t>(r) * s.m + column_of(t0, r)) : 0.0;
      }
    };
    const auto store_g = [&](double* tile, int first_row) {
#pragma unroll
      for (int k = 0; k < kBorderPiece; ++k) tile[(first_row + k) * kPad + kWarp - 1 - lane] = g_next[k];
    };
    // Chunk t0's E_dot, rows [first_row, first_row + 8) of its tile, out to the pair.
    const auto flush = [&](const double* tile, int t0, int first_row) {
#pragma unroll
      for (int k = 0; k < kBorderPiece; ++k) {
        const int r = first_row + k;
        if (in_pair(t0, r)) E_dot_strip[static_cast<int64_t>(r) * s.m + column_of(t0, r)] = tile[r * kPad + kWarp - 1 - lane];
      }
    };
    for (int piece = 0; piece < kPieces; ++piece) {
      load_g(0, piece * kBorderPiece);
      store_g(g_tile[warp][0], piece * kBorderPiece);
    }

    double e_right = 0.0, a_right = 0.0, e_diag = 0.0, a_diag = 0.0, e_up = 0.0, a_up = 0.0;
    const auto in_grid_of = [&](int t0) {
      return i < rows ? step_mask(kWarp - 1 - lane - t0, cols + kWarp - 1 - lane - t0) : 0u;
    };
    struct Inputs {
      typename State::Word word[kBorderPiece];
      double r_dot[kBorderPiece];
    };
    const auto load = [&](int t0, int piece, Inputs& p) {
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int q = 0; q < kBorderPiece; ++q) {
        const int step = piece * kBorderPiece + q;
        const int64_t word = static_cast<int64_t>(cols + kWarp - 2 - t0 - step) * kWarp;
        const bool active = (in_grid >> step) & 1u;
        p.word[q] = active ? st[word] : State::empty();
        p.r_dot[q] = active ? r_dot_in[word] : 0.0;
      }
    };
    Inputs now, next;
    load(0, 0, now);
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0, parity = 0; t0 < last_step; t0 += kWarp, parity ^= 1) {
      double* g_now = g_tile[warp][parity];
      double* g_later = g_tile[warp][parity ^ 1];
      const bool more = t0 + kWarp < last_step;
      const int jb = cols - 1 - t0 - lane;
      const bool reads_border = fed_from_below && jb >= 0;
      uint64_t* border_word = ring_in + static_cast<int64_t>(jb) * kWords;
      border_area[lane] = make_double2(0.0, 0.0);
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w0 = ring_load(border_word), w1 = ring_load(border_word + 1);
        const bool in = w0 != 0 && w1 != 0;
        if (in) border_area[lane] = make_double2(unseal(w0), unseal(w1));
        return in;
      };
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        if (piece + 1 < kPieces) load(t0, piece + 1, next);
        else if (more) load(t0 + kWarp, 0, next);
        if (t0 > 0) flush(g_later, t0 - kWarp, piece * kBorderPiece);  // the chunk before's E_dot, before G takes its place
        if (more) load_g(t0 + kWarp, piece * kBorderPiece);
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, j = cols + kWarp - 2 - t0 - step - lane;
          const double e_below = __shfl_down_sync(kFullMask, e_up, 1);
          const double a_below = __shfl_down_sync(kFullMask, a_up, 1);
          const double2 x = extra_in[step];
          const double e_in = last_lane ? 0.0 : e_below, a_in = last_lane ? 0.0 : a_below;
          const bool active = (in_grid >> step) & 1u;
          const Weights<State> w(now.word[q]);
          const double g = g_now[lane * kPad + step], r_dot = now.r_dot[q];
          const double e = (e_right + x.x) + e_in;
          const double a_cell = (a_right + x.y) + a_in - e * (g * inv_gamma);
          g_now[lane * kPad + step] = a_cell - e * ((r_dot - g) * inv_gamma) + undefined;
          e_up = e * w.up + e_diag;
          a_up = a_cell * w.up + a_diag;
          uint64_t* word = ring_out + static_cast<int64_t>(j) * kWords;
          const bool hands_up = writes_ring & active;
          ring_store(word, seal(e_up), hands_up);
          ring_store(word + 1, seal(a_up), hands_up);
          e_diag = e * w.diag;
          a_diag = a_cell * w.diag;
          e_right = e * w.left;
          a_right = a_cell * w.left;
        }
        if (more) store_g(g_later, piece * kBorderPiece);
        now = next;
      }
      if (!more) {
        __syncwarp();
#pragma unroll
        for (int piece = 0; piece < kPieces; ++piece) flush(g_now, t0, piece * kBorderPiece);
      }
#pragma unroll
      for (int q = 0; q < kWords; ++q) ring_store(border_word + q, 0, reads_border);
      if (t0 == 0 && seeds) seed_area[kWarp - 1 - lane] = make_double2(0.0, 0.0);
      __syncwarp();
    }
    __syncwarp();
    if (lane == 0) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
}

// tiled_backward_sweep's tiles with the row traffic in a second warp: each block is a strip's
// chain warp and a loader warp. The loader fills a tile with a chunk's G (rows, coalesced) and,
// once the chain is done with that chunk, writes the E_dot the chain left in its place out along
// rows; the chain reads G and writes E_dot in shared memory, one of each a step, where the sweep
// loads and stores global memory. Named barriers hand the tiles over (full: 1 + slot, done:
// 1 + kSplitSlots + slot).
constexpr int kSplitSlots = 2;

template <typename State>
__global__ void __launch_bounds__(2 * detail::kWarp) split_backward_sweep(detail::HessianProductArgs<State> a) {
  using namespace detail;
  const int lane = threadIdx.x & 31;
  const bool loader = threadIdx.x >= kWarp;
  constexpr int kPad = kWarp + 1;
  __shared__ double2 extra[3 * kWarp + 2];
  __shared__ double tiles[kSplitSlots][kWarp * kPad];
  __shared__ long long shared_ticket;
  double2* const zero_area = extra;
  double2* const border_area = zero_area + kWarp + 1;
  double2* const seed_area = zero_area + 2 * kWarp + 2;
  if (!loader) {
    zero_area[lane] = make_double2(0.0, 0.0);
    seed_area[lane] = make_double2(0.0, 0.0);
  }
  const Schedule& s = a.s;
  constexpr int kWords = kBackwardBorderWords;
  for (;;) {
    if (!loader) {
      const int64_t t = take_ticket(s.ticket);
      if (lane == 0) shared_ticket = t;
    }
    __syncthreads();
    const int64_t ticket = shared_ticket;
    __syncthreads();
    if (ticket >= s.total()) break;
    Strip strip;
    if (loader) {
      if (!locate_strip(s, ticket, true, strip)) continue;
    } else if (!begin_strip(s, ticket, true, strip)) {
      continue;
    }
    const int64_t b = strip.b;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const int last_step = cols + kWarp - 1, chunks = (last_step + kWarp - 1) / kWarp;
    const int64_t strip_cells = (b * s.n + strip.row0) * s.m;
    if (loader) {
      // Row r of chunk t0's tile: the strip's row r at columns cols - 1 - t0 - r + c, kept at r * kPad + 31 - c.
      const double* g_strip = a.G + strip_cells;
      double* E_dot_strip = a.E_dot + strip_cells;
      const int rows_here = min(kWarp, rows - strip.row0);
      const auto flush = [&](int c) {
        const double* tile = tiles[c % kSplitSlots];
        const int jj = cols - 1 - c * kWarp + lane;
#pragma unroll 8
        for (int r = 0; r < kWarp; ++r) {
          const int j = jj - r;
          if (r < rows_here && j >= 0 && j < cols) E_dot_strip[static_cast<int64_t>(r) * s.m + j] = tile[r * kPad + kWarp - 1 - lane];
        }
      };
      for (int c = 0; c < chunks; ++c) {
        const int slot = c % kSplitSlots;
        if (c >= kSplitSlots) {
          bar_sync(1 + kSplitSlots + slot);
          flush(c - kSplitSlots);
        }
        const int jj = cols - 1 - c * kWarp + lane;
        double g[kWarp];
#pragma unroll
        for (int r = 0; r < kWarp; ++r) {
          const int j = jj - r;
          g[r] = r < rows_here && j >= 0 && j < cols ? __ldg(g_strip + static_cast<int64_t>(r) * s.m + j) : 0.0;
        }
#pragma unroll
        for (int r = 0; r < kWarp; ++r) tiles[slot][r * kPad + kWarp - 1 - lane] = g[r];
        bar_arrive(1 + slot);
      }
      for (int c = max(0, chunks - kSplitSlots); c < chunks; ++c) {
        bar_sync(1 + kSplitSlots + c % kSplitSlots);
        flush(c);
      }
      continue;
    }
    const bool fed_from_below = strip.row0 + kWarp < rows;
    const bool writes_ring = strip.k > 0 && lane == 0;
    const bool last_lane = lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m * kWords;
    uint64_t* ring_in = a.ring + strip.previous * s.m * kWords;
    const int64_t first_word = state_index(b * s.strips + strip.k, s.m, 0, lane);
    const typename State::Word* st = a.state + first_word;
    const double* r_dot_in = a.r_dot + first_word;
    const auto value = a.values[b];
    const double undefined = a.bad_direction[b] != 0 || !isfinite(value) ? static_cast<double>(NAN) : 0.0;
    const double inv_gamma = a.inv_gamma;
    const bool seeds = i == rows - 1;
    __syncwarp();
    if (seeds)
      seed_area[kWarp - 1 - lane] = make_double2(1.0, r_dot_in[static_cast<int64_t>(cols - 1 + lane) * kWarp] * inv_gamma);
    __syncwarp();
    const double2* extra_in = seeds ? seed_area : last_lane && fed_from_below ? border_area : zero_area;
    double e_right = 0.0, a_right = 0.0, e_diag = 0.0, a_diag = 0.0, e_up = 0.0, a_up = 0.0;
    const auto in_grid_of = [&](int t0) {
      return i < rows ? step_mask(kWarp - 1 - lane - t0, cols + kWarp - 1 - lane - t0) : 0u;
    };
    struct Inputs {
      typename State::Word word[kBorderPiece];
      double r_dot[kBorderPiece];
    };
    const auto load = [&](int t0, int piece, Inputs& p) {
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int q = 0; q < kBorderPiece; ++q) {
        const int step = piece * kBorderPiece + q;
        const int64_t word = static_cast<int64_t>(cols + kWarp - 2 - t0 - step) * kWarp;
        const bool active = (in_grid >> step) & 1u;
        p.word[q] = active ? st[word] : State::empty();
        p.r_dot[q] = active ? r_dot_in[word] : 0.0;
      }
    };
    Inputs now, next;
    load(0, 0, now);
    await_claim(s, strip.id, strip.order);
    for (int c = 0; c < chunks; ++c) {
      const int t0 = c * kWarp, slot = c % kSplitSlots;
      double* tile = tiles[slot];
      const int jb = cols - 1 - t0 - lane;
      const bool reads_border = fed_from_below && jb >= 0;
      uint64_t* border_word = ring_in + static_cast<int64_t>(jb) * kWords;
      border_area[lane] = make_double2(0.0, 0.0);
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w0 = ring_load(border_word), w1 = ring_load(border_word + 1);
        const bool in = w0 != 0 && w1 != 0;
        if (in) border_area[lane] = make_double2(unseal(w0), unseal(w1));
        return in;
      };
      const uint32_t in_grid = in_grid_of(t0);
      bar_sync(1 + slot);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        if (piece + 1 < kPieces) load(t0, piece + 1, next);
        else if (c + 1 < chunks) load(t0 + kWarp, 0, next);
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
        __syncwarp();
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, j = cols + kWarp - 2 - t0 - step - lane;
          const double e_below = __shfl_down_sync(kFullMask, e_up, 1);
          const double a_below = __shfl_down_sync(kFullMask, a_up, 1);
          const double2 x = extra_in[step];
          const double e_in = last_lane ? 0.0 : e_below, a_in = last_lane ? 0.0 : a_below;
          const bool active = (in_grid >> step) & 1u;
          const Weights<State> w(now.word[q]);
          const double g = tile[lane * kPad + step], r_dot = now.r_dot[q];
          const double e = (e_right + x.x) + e_in;
          const double a_cell = (a_right + x.y) + a_in - e * (g * inv_gamma);
          tile[lane * kPad + step] = a_cell - e * ((r_dot - g) * inv_gamma) + undefined;
          e_up = e * w.up + e_diag;
          a_up = a_cell * w.up + a_diag;
          uint64_t* word = ring_out + static_cast<int64_t>(j) * kWords;
          const bool hands_up = writes_ring & active;
          ring_store(word, seal(e_up), hands_up);
          ring_store(word + 1, seal(a_up), hands_up);
          e_diag = e * w.diag;
          a_diag = a_cell * w.diag;
          e_right = e * w.left;
          a_right = a_cell * w.left;
        }
        now = next;
      }
      bar_arrive(1 + kSplitSlots + slot);
#pragma unroll
      for (int q = 0; q < kWords; ++q) ring_store(border_word + q, 0, reads_border);
      if (t0 == 0 && seeds) seed_area[kWarp - 1 - lane] = make_double2(0.0, 0.0);
      __syncwarp();
    }
    __syncwarp();
    if (lane == 0) publish(s.progress + strip.id, kDone);
  }
  finish_launch(s);
}

template <typename T, typename State>
void run(int64_t B, int64_t N, int64_t M, const char* name) {
  Problem p{B, N, M, 1, 1.0};
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> cost(0.0, 8.0);
  std::normal_distribution<double> normal;
  std::vector<T> Dh(B * N * M);
  std::vector<double> Gh(B * N * M);
  for (auto& v : Dh) v = static_cast<T>(cost(rng));
  // SDTW_PARTS_DIM=d: the kernel benchmark's kind of cost instead, squared distances of standard
  // normal series in d features (E is then 0 on most of a long pair).
  if (const char* dim = std::getenv("SDTW_PARTS_DIM")) {
    const int64_t d = std::atoll(dim);
    std::vector<float> x(B * N * d), y(B * M * d);
    for (auto& v : x) v = static_cast<float>(normal(rng));
    for (auto& v : y) v = static_cast<float>(normal(rng));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < M; ++j) {
          float c = 0;
          for (int64_t k = 0; k < d; ++k) {
            const float diff = x[(b * N + i) * d + k] - y[(b * M + j) * d + k];
            c += diff * diff;
          }
          Dh[(b * N + i) * M + j] = static_cast<T>(c);
        }
  }
  for (auto& v : Gh) v = normal(rng);
  T* D; double* G; double* E_dot; double* r_dot; T* values; float* fvalues; int* bad; void* ws; void* fws;
  const detail::WorkspaceLayout w = detail::workspace_layout(p, 16, 32);
  const detail::WorkspaceLayout fw = detail::layout_for<float>(p);
  const std::size_t words = (B * w.strips * M + 31) * 32;
  CHECK(cudaMalloc(&D, Dh.size() * sizeof(T)));
  CHECK(cudaMalloc(&G, Gh.size() * 8));
  CHECK(cudaMalloc(&E_dot, Gh.size() * 8));
  CHECK(cudaMalloc(&r_dot, words * 8));
  CHECK(cudaMalloc(&values, B * sizeof(T)));
  CHECK(cudaMalloc(&fvalues, B * 4));
  CHECK(cudaMalloc(&bad, B * 4));
  CHECK(cudaMemset(bad, 0, B * 4));
  CHECK(cudaMemcpy(D, Dh.data(), Dh.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(G, Gh.data(), Gh.size() * 8, cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&ws, w.total));
  CHECK(cudaMalloc(&fws, fw.total));
  float* Df = nullptr;
  CHECK(cudaMalloc(&Df, Dh.size() * 4));
  std::vector<float> Dfh(Dh.begin(), Dh.end());
  CHECK(cudaMemcpy(Df, Dfh.data(), Dfh.size() * 4, cudaMemcpyHostToDevice));
  using Cost = PrecomputedCost<T>;
  const auto forward = [&] {
    detail::reset_scratch(w, ws, nullptr);
    detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values, ws, nullptr);
  };
  const auto forward32 = [&] {
    detail::reset_scratch(fw, fws, nullptr);
    detail::launch_forward_kernel<float, PrecomputedCost<float>, true, false, false>(p, fw, PrecomputedCost<float>{Df, N, M}, fvalues, fws, nullptr);
  };
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  const auto sweep1 = [&] { detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args.s.total()), 64>>>(args); };
  const auto sweep2 = [&] { detail::hessian_backward_sweep<State><<<detail::grid_for<double, detail::hessian_backward_sweep<State>>(args.s.total()), 64>>>(args); };
  const float t32 = median_ms(forward32);
  const float tf = median_ms(forward);
  forward();
  const float ts1 = median_ms(sweep1);
  const float ts2 = median_ms([&] { sweep1(); sweep2(); }) - ts1;
  const float all = median_ms([&] { forward(); sweep1(); sweep2(); });
  std::printf("%s B %lld N %lld M %lld: first-order float32 forward %.3f ms | product: forward %.3f ms, R_dot sweep %.3f ms, E/A sweep %.3f ms, all three %.3f ms\n",
              name, (long long)B, (long long)N, (long long)M, t32, tf, ts1, ts2, all);
  if constexpr (std::is_same_v<State, detail::FloatWeights>) {
    const int grid = detail::grid_for<double, chain_only_sweep>(args.s.total());
    const float tc = median_ms([&] { chain_only_sweep<<<grid, 64>>>(args); });
    std::printf("%s B %lld N %lld M %lld: the R_dot sweep's chain alone (no loads, no R_dot stores) %.3f ms\n", name,
                (long long)B, (long long)N, (long long)M, tc);
    // The staged sweep's R_dot against hessian_forward_sweep's, word for word, then its time.
    std::vector<double> want((B * w.strips * M + 31) * 32), got(want.size());
    CHECK(cudaMemset(r_dot, 0, want.size() * 8));
    forward();
    sweep1();
    CHECK(cudaMemcpy(want.data(), r_dot, want.size() * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(r_dot, 0, want.size() * 8));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, staged_r_dot_sweep, 64, 0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int staged_grid = static_cast<int>(std::min<int64_t>(args.s.total(), int64_t{blocks} * sms));
    staged_r_dot_sweep<<<staged_grid, 64>>>(args);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got.data(), r_dot, got.size() * 8, cudaMemcpyDeviceToHost));
    int64_t differ = 0;
    for (std::size_t k = 0; k < want.size(); ++k) differ += std::memcmp(&want[k], &got[k], 8) != 0;
    const float tstaged = median_ms([&] { staged_r_dot_sweep<<<staged_grid, 64>>>(args); });
    std::printf("%s B %lld N %lld M %lld: staged R_dot sweep %.3f ms (%d blocks an SM), %lld of %zu words differ from the R_dot sweep's\n",
                name, (long long)B, (long long)N, (long long)M, tstaged, blocks, (long long)differ, want.size());
    // The tiled E / A sweep's E_dot against hessian_backward_sweep's, word for word, then its time.
    const std::size_t cells = static_cast<std::size_t>(B * N * M);
    std::vector<double> e_want(cells), e_got(cells);
    forward();
    sweep1();
    CHECK(cudaMemset(E_dot, 0, cells * 8));
    sweep2();
    CHECK(cudaMemcpy(e_want.data(), E_dot, cells * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(E_dot, 0, cells * 8));
    const int grid_tiled = detail::grid_for<double, tiled_backward_sweep<State>>(args.s.total());
    tiled_backward_sweep<State><<<grid_tiled, 64>>>(args);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(e_got.data(), E_dot, cells * 8, cudaMemcpyDeviceToHost));
    int64_t e_differ = 0;
    double e_worst = 0, e_scale = 0;
    for (std::size_t k = 0; k < cells; ++k) {
      e_differ += std::memcmp(&e_want[k], &e_got[k], 8) != 0;
      e_worst = std::max(e_worst, std::abs(e_got[k] - e_want[k]));
      e_scale = std::max(e_scale, std::abs(e_want[k]));
    }
    const float ttiled = median_ms([&] { tiled_backward_sweep<State><<<grid_tiled, 64>>>(args); });
    const float tall_tiled = median_ms([&] { forward(); sweep1(); tiled_backward_sweep<State><<<grid_tiled, 64>>>(args); });
    CHECK(cudaMemset(E_dot, 0, cells * 8));
    int split_blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&split_blocks, split_backward_sweep<State>, 64, 0));
    const int split_grid = static_cast<int>(std::min<int64_t>(args.s.total(), int64_t{split_blocks} * sms));
    split_backward_sweep<State><<<split_grid, 64>>>(args);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(e_got.data(), E_dot, cells * 8, cudaMemcpyDeviceToHost));
    double s_worst = 0;
    for (std::size_t k = 0; k < cells; ++k) s_worst = std::max(s_worst, std::abs(e_got[k] - e_want[k]));
    const float tsplit = median_ms([&] { split_backward_sweep<State><<<split_grid, 64>>>(args); });
    std::printf("%s B %lld N %lld M %lld: split E/A sweep (chain warp + loader warp) %.3f ms (%d blocks an SM), max E_dot difference / max %.3g\n",
                name, (long long)B, (long long)N, (long long)M, tsplit, split_blocks, s_worst / e_scale);
    std::printf("%s B %lld N %lld M %lld: tiled E/A sweep %.3f ms (all three %.3f ms), %lld of %zu E_dot differ from the E/A sweep's (max difference / max %.3g)\n",
                name, (long long)B, (long long)N, (long long)M, ttiled, tall_tiled, (long long)e_differ, cells, e_worst / e_scale);
  }
  // Whether an R_dot sweep can run beside a forward without slowing it: the forward on ws, on one
  // stream, while the sweep runs on a second workspace's weights (a finished forward's), on another.
  void* ws2;
  double* r_dot2;
  int* bad2;
  CHECK(cudaMalloc(&ws2, w.total));
  CHECK(cudaMalloc(&r_dot2, words * 8));
  CHECK(cudaMalloc(&bad2, B * 4));
  CHECK(cudaMemset(bad2, 0, B * 4));
  T* values2;
  CHECK(cudaMalloc(&values2, B * sizeof(T)));
  detail::reset_scratch(w, ws2, nullptr);
  detail::launch_forward_kernel<T, Cost, true, false, false, false, State>(p, w, Cost{D, N, M}, values2, ws2, nullptr);
  CHECK(cudaDeviceSynchronize());
  auto* base2 = static_cast<char*>(ws2);
  const detail::HessianProductArgs<State> args2{detail::schedule_for(p, w, ws2), 1.0,
                                                reinterpret_cast<const typename State::Word*>(base2 + w.state), values2, G,
                                                r_dot2, E_dot, reinterpret_cast<uint64_t*>(base2 + w.ring), bad2};
  cudaStream_t side;
  cudaEvent_t fork, join;
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const float both = median_ms([&] {
    cudaEventRecord(fork, nullptr);
    cudaStreamWaitEvent(side, fork, 0);
    forward();
    detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args2.s.total()), 64, 0, side>>>(args2);
    cudaEventRecord(join, side);
    cudaStreamWaitEvent(nullptr, join, 0);
  });
  std::printf("%s B %lld N %lld M %lld: forward and an R_dot sweep on two streams %.3f ms (apart %.3f + %.3f)\n", name,
              (long long)B, (long long)N, (long long)M, both, tf, ts1);
  cudaEventDestroy(fork); cudaEventDestroy(join); cudaStreamDestroy(side); cudaFree(ws2); cudaFree(r_dot2); cudaFree(bad2); cudaFree(values2);
  cudaFree(D); cudaFree(G); cudaFree(E_dot); cudaFree(r_dot); cudaFree(values); cudaFree(fvalues); cudaFree(bad); cudaFree(ws); cudaFree(fws); cudaFree(Df);
}

// H G on the device for a float32 cost read as T, with State's weights.
template <typename T, typename State>
std::vector<double> product(const Problem& p, const std::vector<float>& Dh, const std::vector<double>& Gh) {
  const std::vector<T> DT(Dh.begin(), Dh.end());
  T *D, *values;
  double *G, *E_dot, *r_dot;
  int* bad;
  void* ws;
  const detail::WorkspaceLayout w = detail::workspace_layout(p, 16, 32);
  const std::size_t words = (p.batch * w.strips * p.m + 31) * 32;
  CHECK(cudaMalloc(&D, DT.size() * sizeof(T)));
  CHECK(cudaMalloc(&G, Gh.size() * 8));
  CHECK(cudaMalloc(&E_dot, Gh.size() * 8));
  CHECK(cudaMalloc(&r_dot, words * 8));
  CHECK(cudaMalloc(&values, p.batch * sizeof(T)));
  CHECK(cudaMalloc(&bad, p.batch * 4));
  CHECK(cudaMalloc(&ws, w.total));
  CHECK(cudaMemset(bad, 0, p.batch * 4));
  CHECK(cudaMemcpy(D, DT.data(), DT.size() * sizeof(T), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(G, Gh.data(), Gh.size() * 8, cudaMemcpyHostToDevice));
  detail::reset_scratch(w, ws, nullptr);
  detail::launch_forward_kernel<T, PrecomputedCost<T>, true, false, false, false, State>(p, w, PrecomputedCost<T>{D, p.n, p.m}, values, ws, nullptr);
  auto* base = static_cast<char*>(ws);
  const detail::HessianProductArgs<State> args{detail::schedule_for(p, w, ws), 1.0 / p.gamma,
                                               reinterpret_cast<const typename State::Word*>(base + w.state), values, G,
                                               r_dot, E_dot, reinterpret_cast<uint64_t*>(base + w.ring), bad};
  detail::hessian_forward_sweep<State><<<detail::grid_for<double, detail::hessian_forward_sweep<State>>(args.s.total()), 64>>>(args);
  detail::hessian_backward_sweep<State><<<detail::grid_for<double, detail::hessian_backward_sweep<State>>(args.s.total()), 64>>>(args);
  CHECK(cudaDeviceSynchronize());
  std::vector<double> out(Gh.size());
  CHECK(cudaMemcpy(out.data(), E_dot, out.size() * 8, cudaMemcpyDeviceToHost));
  cudaFree(D); cudaFree(G); cudaFree(E_dot); cudaFree(r_dot); cudaFree(values); cudaFree(bad); cudaFree(ws);
  return out;
}

// Costs ||x_i - y_j||^2 of random walks in 8 dimensions (steps N(0, 1/8)), a direction N(0, 1).
void accuracy(int64_t B, int64_t N) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  const int64_t dim = 8;
  std::vector<double> x(B * N * dim), y(B * N * dim);
  for (auto* walk : {&x, &y})
    for (int64_t b = 0; b < B; ++b)
      for (int64_t d = 0; d < dim; ++d) {
        double v = 0;
        for (int64_t i = 0; i < N; ++i) (*walk)[(b * N + i) * dim + d] = v += normal(rng) / std::sqrt(8.0);
      }
  std::vector<float> Dh(B * N * N);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double c = 0;
        for (int64_t d = 0; d < dim; ++d) c += std::pow(x[(b * N + i) * dim + d] - y[(b * N + j) * dim + d], 2);
        Dh[(b * N + i) * N + j] = static_cast<float>(c);
      }
  std::vector<double> Gh(B * N * N);
  for (auto& v : Gh) v = normal(rng);
  for (double gamma : {10.0, 1.0, 0.1, 0.05, 0.01, 0.001}) {
    const Problem p{B, N, N, 1, gamma};
    const std::vector<double> want = product<double, detail::CellState<double>>(p, Dh, Gh);
    const std::vector<double> got = product<float, detail::FloatWeights>(p, Dh, Gh);
    double worst = 0, scale = 0, diff2 = 0, norm2 = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      worst = std::max(worst, std::abs(got[k] - want[k]));
      scale = std::max(scale, std::abs(want[k]));
      diff2 += (got[k] - want[k]) * (got[k] - want[k]);
      norm2 += want[k] * want[k];
    }
    std::printf("accuracy B %lld N %lld gamma %g: float32 weights against float64 weights, max error / max %.3g, relative L2 %.3g (|H G| max %.3g)\n",
                (long long)B, (long long)N, gamma, worst / scale, std::sqrt(diff2 / norm2), scale);
  }
}

int main(int argc, char** argv) {
  const int64_t B = argc > 1 ? std::atoll(argv[1]) : 32, N = argc > 2 ? std::atoll(argv[2]) : 512;
  const bool has_m = argc > 3 && std::atoll(argv[3]) > 0;
  const int64_t M = has_m ? std::atoll(argv[3]) : N;
  if (argc > (has_m ? 4 : 3)) return accuracy(B, N), 0;
  run<float, detail::FloatWeights>(B, N, M, "float32 weights");
  run<double, detail::CellState<double>>(B, N, M, "float64 weights");
}
