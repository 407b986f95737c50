#pragma once
// The two sweeps of the Hessian-vector product H G in cost space (Mensch & Blondel 2018), over the
// weights that the forward saved, on the first order's strips, tickets and ring:
//  - forward: R_dot(c) = G(c) + sum_k w_k(c) R_dot(p_k), the directional derivative of R;
//  - backward: E and A together, A(c) = sum_s w_c(s) A(s) - E(c) G(c) / gamma with
//    A(end) = (R_dot(end) - G(end)) / gamma, then E_dot(c) = A(c) - E(c) (R_dot(c) - G(c)) / gamma.
// A is E_dot plus E times the mean of the predecessors' R_dot over gamma: substituted into the
// reference's E_dot recursion, its per-successor term becomes one more backward recurrence on the
// same weights, so neither sweep needs R, exp or log. Both run in float64 whatever the weights'
// type. A predecessor off the band or unreachable has weight exactly 0, so whatever finite R_dot
// such a cell holds never reaches a live one (its G, summed along the row, overflows only where
// |G| is near the largest double over m).
// Each 8 steps' inputs (weights and, backward, R_dot) are loaded while the 8 before them run (across
// chunks too), and G a chunk ahead by the strip's loader warp, so no load sits on the chain; R_dot
// lives in the workspace in the state's layout, so the backward reads it as one coalesced row a step.
// The R_dot sweep runs beside the forward (a programmatic dependent launch) and reads a chunk's
// weights once the forward has counted it written, so that most of its time hides under the forward's.
#include "forward.cuh"
#include "strip_tiles.cuh"

namespace sdtw::kernels::detail {

template <typename State>
struct HessianProductArgs {
  Schedule s;
  double inv_gamma;
  const typename State::Word* state;           // the forward's weights (state_index layout)
  const typename State::Compute* values;       // batch: the forward's values
  const double* G;                             // batch x n x m
  double* r_dot;                               // R_dot, in the state's layout
  double* E_dot;                               // batch x n x m
  uint64_t* ring;                              // the forward sweep's sealed R_dot (one word a column), the backward's two
  int* bad_direction;                          // batch: set where G has a non-finite entry inside the lengths
  int* chunks_done = nullptr;                  // per strip: the forward's chunks written, which the R_dot sweep trails; null: all
};

constexpr int kBackwardBorderWords = 2;  // the top row's shares of E and A in the row above
constexpr int kPieces = kWarp / kBorderPiece;

template <typename State>
struct Weights {
  double diag, up, left;
  __device__ explicit Weights(typename State::Word w) {
    typename State::Compute d, u, l;
    State::decode(w, d, u, l);
    diag = d;
    up = u;
    left = l;
  }
};

// FloatWeights' left weight is taken in float64 from the two floats, so that its only error is theirs.
template <>
struct Weights<FloatWeights> {
  double diag, up, left;
  __device__ explicit Weights(FloatPair w)
      : diag(w.diag), up(fabs(static_cast<double>(w.up))), left(signbit(w.up) ? 0.0 : fmax(0.0, 1.0 - diag - up)) {}
};

// One piece's inputs: the cells' words (State::empty() off the grid) and, backward, R_dot (G comes
// through the strip's tiles).
template <typename State, bool kBackward>
struct Piece {
  typename State::Word word[kBorderPiece];
  double r_dot[kBackward ? kBorderPiece : 1];
};

// R_dot strip by strip, top-down, lane l on row row0 + l at column t - l, as forward_kernel; a
// strip a block, its chain warp and its tiles' loader (strip_tiles.cuh). The bounds' one block per
// multiprocessor lets ptxas keep both pieces in registers (without it, it capped FloatWeights'
// instantiation at 128 and spilled).
template <typename State>
__global__ void __launch_bounds__(kStripBlock, 1) hessian_forward_sweep(HessianProductArgs<State> a) {
  const int lane = threadIdx.x & 31;
  const bool loader = threadIdx.x >= kWarp;
  __shared__ Tile tiles[kTileSlots];
  __shared__ long long shared_ticket;
  const Schedule& s = a.s;
  for (int64_t ticket = block_ticket(s, loader, shared_ticket); ticket < s.total();
       ticket = block_ticket(s, loader, shared_ticket)) {
    Strip strip;
    if (loader) {
      if (locate_strip(s, ticket, false, strip))
        load_strip_tiles<false>(tiles, a.G + (strip.b * s.n + strip.row0) * s.m, nullptr, s.m,
                                min(kWarp, strip.rows - strip.row0), strip.cols);
      continue;
    }
    if (!begin_strip(s, ticket, false, strip)) continue;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const bool writes_ring = strip.row0 + kWarp < rows && lane == kWarp - 1;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    const int64_t first_word = state_index(strip.b * s.strips + strip.k, s.m, 0, lane);
    const typename State::Word* st = a.state + first_word;
    double* r_dot_out = a.r_dot + first_word;
    const int last_step = cols + kWarp - 1, j_end = i < rows ? cols : 0;
    double left = 0.0, diag = 0.0, out = 0.0;  // R_dot is 0 on the borders
    bool bad = false;
    // Step s of chunk t0 is column t0 + s - lane; which steps are in the grid.
    const auto in_grid_of = [&](int t0) { return step_mask(lane - t0, j_end - t0 + lane); };
    const auto load = [&](int t0, int piece, Piece<State, false>& p) {
      const uint32_t in_grid = in_grid_of(t0);
#pragma unroll
      for (int q = 0; q < kBorderPiece; ++q) {
        const int step = piece * kBorderPiece + q, t = t0 + step;
        const bool active = (in_grid >> step) & 1u;
        p.word[q] = active ? st[static_cast<int64_t>(t) * kWarp] : State::empty();
      }
    };
    // A chunk's weights are read once the forward has written them; a chunk of the forward takes
    // microseconds, so the poll sleeps 512 ns between loads.
    const auto await_forward = [&](int chunks) {
      if (a.chunks_done != nullptr) await_count(a.chunks_done + strip.id, chunks, 512);
    };
    Piece<State, false> now, next;
    await_forward(1);
    load(0, 0, now);
    await_claim(s, strip.id, strip.order);
    for (int c = 0, t0 = 0; t0 < last_step; ++c, t0 += kWarp) {
      double border = 0.0;
      const bool reads_border = strip.k > 0 && t0 + lane < cols;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      const uint32_t in_grid = in_grid_of(t0);
      const double* tile = tiles[c % kTileSlots] + lane * kTilePad;
      await_tile(c);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        // The next piece's loads, the next chunk's first one after the last piece, run under this one.
        if (piece + 1 < kPieces) {
          load(t0, piece + 1, next);
        } else if (t0 + kWarp < last_step) {
          await_forward(c + 2);
          load(t0 + kWarp, 0, next);
        }
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, t = t0 + step, j = t - lane;
          const bool active = (in_grid >> step) & 1u;
          double up = __shfl_up_sync(kFullMask, out, 1);
          const double border_j = __shfl_sync(kFullMask, border, step);
          up = lane == 0 ? border_j : up;
          const Weights<State> w(now.word[q]);
          const double g = tile[step];
          const double r_dot = active ? g + w.diag * diag + w.up * up + w.left * left : 0.0;
          bad |= active && !isfinite(g);
          if (active) r_dot_out[static_cast<int64_t>(t) * kWarp] = r_dot;
          ring_store(ring_out + j, seal(r_dot), writes_ring && active);
          left = r_dot;
          diag = up;
          out = r_dot;
        }
        now = next;
      }
      release_tile(c);
      ring_store(ring_in + t0 + lane, 0, reads_border);  // read: the slot's next writer finds it zero
      __syncwarp();
    }
    if (__any_sync(kFullMask, bad) && lane == 0) a.bad_direction[strip.b] = 1;
    if (lane == kWarp - 1) publish(s.progress + strip.id, kDone);
  }
  await_primary_launch();  // so that what follows this sweep in the stream follows the forward too
  finish_launch(s);
}

// E, A and E_dot strip by strip, bottom-up, lanes right to left, as backward_strips. Each lane hands
// the lane above its row's whole share of that lane's next cell, E(i+1, j) w_up(i+1, j) +
// E(i+1, j+1) w_diag(i+1, j+1) (and A's), so no cell's word is read twice; lane 0 hands the same up
// the ring. Lane 31 adds the strip below's share, and the end cell's lane its seed (E = 1, A =
// R_dot / gamma), from shared memory, so no step selects on the end cell or on cells outside the
// grid: those hold zero weights and stay 0. G outside the pair reads as 0.
template <typename State>
__global__ void __launch_bounds__(kStripBlock) hessian_backward_sweep(HessianProductArgs<State> a) {
  const int lane = threadIdx.x & 31;
  const bool loader = threadIdx.x >= kWarp;
  // Zeros, the strip below's shares and the seed, 32 (E, A) pairs each, 16 bytes apart so that the
  // three never share a bank.
  __shared__ double2 extra[3 * kWarp + 2];
  __shared__ Tile tiles[kTileSlots];
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
  for (int64_t ticket = block_ticket(s, loader, shared_ticket); ticket < s.total();
       ticket = block_ticket(s, loader, shared_ticket)) {
    Strip strip;
    if (loader) {
      if (locate_strip(s, ticket, true, strip)) {
        const int64_t first_cell = (strip.b * s.n + strip.row0) * s.m;
        load_strip_tiles<true>(tiles, a.G + first_cell, a.E_dot + first_cell, s.m, min(kWarp, strip.rows - strip.row0),
                               strip.cols);
      }
      continue;
    }
    if (!begin_strip(s, ticket, true, strip)) continue;
    const int64_t b = strip.b;
    const int rows = strip.rows, cols = strip.cols, i = strip.row0 + lane;
    const int last_step = cols + kWarp - 1, chunks = (last_step + kWarp - 1) / kWarp;
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
    // The end cell (rows - 1, cols - 1) is step 31 - lane of the first chunk, in the last row's lane.
    const bool seeds = i == rows - 1;
    __syncwarp();
    if (seeds)
      seed_area[kWarp - 1 - lane] = make_double2(1.0, r_dot_in[static_cast<int64_t>(cols - 1 + lane) * kWarp] * inv_gamma);
    __syncwarp();
    const double2* extra_in = seeds ? seed_area : last_lane && fed_from_below ? border_area : zero_area;

    double e_right = 0.0, a_right = 0.0;  // E(i, j+1) w_left(i, j+1), and A's
    double e_diag = 0.0, a_diag = 0.0;    // E(i, j+1) w_diag(i, j+1), and A's
    double e_up = 0.0, a_up = 0.0;        // the shares handed to the lane above
    // Step s of chunk t0 is column cols + 30 - t0 - s - lane, and the forward's warp step cols + 30 - t0 - s.
    const auto in_grid_of = [&](int t0) {
      return i < rows ? step_mask(kWarp - 1 - lane - t0, cols + kWarp - 1 - lane - t0) : 0u;
    };
    const auto load = [&](int t0, int piece, Piece<State, true>& p) {
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
    Piece<State, true> now, next;
    load(0, 0, now);
    await_claim(s, strip.id, strip.order);
    for (int c = 0; c < chunks; ++c) {
      const int t0 = c * kWarp;
      double* tile = tiles[c % kTileSlots] + lane * kTilePad;
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
      await_tile(c);
#pragma unroll
      for (int piece = 0; piece < kPieces; ++piece) {
        if (piece + 1 < kPieces) load(t0, piece + 1, next);
        else if (c + 1 < chunks) load(t0 + kWarp, 0, next);
        border_ready = await_border(border_ready, piece * kBorderPiece, take_border);
        __syncwarp();  // the piece's border shares, stored by their lanes, for lane 31
#pragma unroll
        for (int q = 0; q < kBorderPiece; ++q) {
          const int step = piece * kBorderPiece + q, j = cols + kWarp - 2 - t0 - step - lane;
          // Every lane shuffles (a full-mask shuffle is illegal in a diverged warp); the last lane drops it.
          const double e_below = __shfl_down_sync(kFullMask, e_up, 1);
          const double a_below = __shfl_down_sync(kFullMask, a_up, 1);
          const double2 x = extra_in[step];
          const double e_in = last_lane ? 0.0 : e_below, a_in = last_lane ? 0.0 : a_below;
          const bool active = (in_grid >> step) & 1u;
          const Weights<State> w(now.word[q]);
          const double g = tile[step], r_dot = now.r_dot[q];
          const double e = (e_right + x.x) + e_in;
          const double a_cell = (a_right + x.y) + a_in - e * (g * inv_gamma);
          tile[step] = a_cell - e * ((r_dot - g) * inv_gamma) + undefined;  // E_dot, out by the loader
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
      release_tile(c);
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

}  // namespace sdtw::kernels::detail
