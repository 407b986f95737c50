#pragma once
// Backward recursion E(c) = sum over the successors s of c of E(s) * w(s <- c), with the weights
// saved by the forward: it needs neither R nor the cost. Strips run bottom-up, lanes right to
// left (lane 31 leads). A lane hands each successor's share to its predecessors as products,
// so a cell's state can be overwritten with E as soon as the lane has read it. As in the forward,
// a chunk's 32 state words and border values are loaded before its 32 dependent steps.
#include "forward.cuh"

namespace sdtw::kernels::detail {

template <typename T>
struct BackwardArgs {
  Schedule s;
  const T* dvalues;                      // batch: upstream gradient of each value
  typename CellState<T>::Word* state;    // as written by the forward; receives E when dense_E is null
  T* dense_E;                            // batch x n x m, or null
  typename CellState<T>::Compute* ring;  // batch x ring_slots x m x 2: (E*w_up, E*w_diag) of a strip's first row
};

template <typename T>
__global__ void __launch_bounds__(warps_per_block<T>() * kWarp) backward_kernel(BackwardArgs<T> a) {
  using State = CellState<T>;
  using C = typename State::Compute;
  const int lane = threadIdx.x & 31;
  const Schedule& s = a.s;

  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, true, strip)) continue;
    const int64_t b = strip.b, k = strip.k, state_strip = b * s.strips + k;
    const int rows = strip.rows, cols = strip.cols, row0 = strip.row0, i = row0 + lane;
    int* my_progress = s.progress + ticket;
    const bool row_ok = i < rows;
    const bool fed_from_below = row0 + kWarp < rows;
    C* ring_out = a.ring + strip.slot * s.m * 2;
    const C* ring_in = a.ring + strip.previous * s.m * 2;
    int* below_progress = s.progress + ticket - 1;
    auto* st = a.state + state_index(state_strip, s.m, 0, lane);
    T* E_row = a.dense_E ? a.dense_E + (b * s.n + (row_ok ? i : row0)) * s.m : nullptr;
    const C dvalue = static_cast<C>(a.dvalues[b]);

    C from_right = 0;       // E(i, j+1) * w_left(i, j+1)
    C diag_below_prev = 0;  // E(i+1, j+1) * w_diag(i+1, j+1)
    C out_up = 0, out_diag = 0;
    int known_below = 0;
    for (int t0 = 0; t0 < cols + kWarp - 1; t0 += kWarp) {
      // Lane 31 takes column cols-1-t at step t; lane l of the chunk holds that column's border.
      C border_up = 0, border_diag = 0;
      if (fed_from_below && t0 < cols) {
        if (lane == kWarp - 1)
          known_below = wait_for(below_progress, min(t0 + kWarp, cols), known_below);
        __syncwarp();
        const int jb = cols - 1 - t0 - lane;
        if (jb >= 0) {
          border_up = __ldcg(ring_in + 2 * jb);
          border_diag = __ldcg(ring_in + 2 * jb + 1);
        }
      }
      // At step t every lane reads warp step cols + 30 - t: one coalesced row of the state.
      auto* chunk_state = st + static_cast<int64_t>(cols + kWarp - 2 - t0) * kWarp;
      typename State::Word words[kWarp];
#pragma unroll
      for (int step = 0; step < kWarp; ++step) {
        const int fs = cols + kWarp - 2 - (t0 + step), j = fs - lane;
        words[step] = (row_ok && j >= 0 && j < cols) ? chunk_state[-step * kWarp] : State::empty();
      }
#pragma unroll
      for (int step = 0; step < kWarp; ++step) {
        const int fs = cols + kWarp - 2 - (t0 + step), j = fs - lane;
        C up_below = __shfl_down_sync(kFullMask, out_up, 1);      // E(i+1, j) * w_up(i+1, j)
        C diag_below = __shfl_down_sync(kFullMask, out_diag, 1);  // E(i+1, j) * w_diag(i+1, j)
        const C border_up_j = __shfl_sync(kFullMask, border_up, step);
        const C border_diag_j = __shfl_sync(kFullMask, border_diag, step);
        if (lane == kWarp - 1) {
          up_below = border_up_j;
          diag_below = border_diag_j;
        }
        const bool active = row_ok && j >= 0 && j < cols;
        C n_up = 0, n_diag = 0, n_left = 0;
        if (active) {
          const C e = (i == rows - 1 && j == cols - 1) ? dvalue : from_right + up_below + diag_below_prev;
          C w_diag, w_up, w_left;
          State::decode(words[step], w_diag, w_up, w_left);
          n_up = e * w_up;
          n_diag = e * w_diag;
          n_left = e * w_left;
          if (E_row)
            E_row[j] = static_cast<T>(e);
          else
            chunk_state[-step * kWarp] = State::from_alignment(e);
          if (lane == 0 && k > 0) {
            __stcg(ring_out + 2 * j, n_up);
            __stcg(ring_out + 2 * j + 1, n_diag);
          }
        }
        from_right = n_left;
        diag_below_prev = diag_below;
        out_up = n_up;
        out_diag = n_diag;
        if (lane == 0 && k > 0 && active && (cols - j) % kPublishEvery == 0)
          publish(my_progress, cols - j);
      }
    }
    if (lane == 0) publish(my_progress, kDone);
  }
}

}  // namespace sdtw::kernels::detail
