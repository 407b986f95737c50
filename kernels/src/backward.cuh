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
  const T* dvalues;                      // batch: upstream gradient of each value, dvalues_stride apart
  int64_t dvalues_stride;
  typename CellState<T>::Word* state;    // as written by the forward; receives E when dense_E is null
  T* dense_E;                            // batch x n x m, or null
  typename CellState<T>::Compute* ring;  // batch x ring_slots x m x 2: (E*w_up, E*w_diag) of a strip's first row
};

// The strips of the backward, one ticket at a time, until the tickets run out. kDenseE: E goes
// to the caller's batch x n x m tensor (unfused mode) instead of over the state.
template <typename T, bool kDenseE>
__device__ void backward_strips(const BackwardArgs<T>& a) {
  using State = CellState<T>;
  using C = typename State::Compute;
  const int lane = threadIdx.x & 31;
  const Schedule& s = a.s;

  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, true, strip)) continue;
    const int64_t b = strip.b, k = strip.k, state_strip = b * s.strips + k;
    const int rows = strip.rows, cols = strip.cols, row0 = strip.row0, i = row0 + lane;
    int* my_progress = s.progress + strip.id;
    const bool row_ok = i < rows;
    const bool fed_from_below = row0 + kWarp < rows;
    const bool writes_ring = k > 0 && lane == 0;
    C* ring_out = a.ring + strip.slot * s.m * 2;
    const C* ring_in = a.ring + strip.previous * s.m * 2;
    int* below_progress = s.progress + strip.id - 1;
    auto* st = a.state + state_index(state_strip, s.m, 0, lane);
    T* E_row = kDenseE ? a.dense_E + (b * s.n + (row_ok ? i : row0)) * s.m : nullptr;
    const C dvalue = static_cast<C>(a.dvalues[b * a.dvalues_stride]);
    const int last_step = cols + kWarp - 1;

    C from_right = 0;       // E(i, j+1) * w_left(i, j+1)
    C diag_below_prev = 0;  // E(i+1, j+1) * w_diag(i+1, j+1)
    C out_up = 0, out_diag = 0;
    int known_below = 0;
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
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
      // At step t every lane reads warp step cols + 30 - t: one coalesced row of the state. Off
      // the grid that word is not the cell's (the forward stores only the grid's cells), so an
      // inactive cell takes empty() instead.
      auto* chunk_state = st + static_cast<int64_t>(cols + kWarp - 2 - t0) * kWarp;
      typename State::Word words[kWarp];
#pragma unroll
      for (int step = 0; step < kWarp; ++step)
        words[step] = t0 + step < last_step ? chunk_state[-step * kWarp] : State::empty();
      // As in the forward, the 32 steps are one basic block: selects and predicated stores.
#pragma unroll
      for (int step = 0; step < kWarp; ++step) {
        const int j = cols + kWarp - 2 - (t0 + step) - lane;
        C up_below = __shfl_down_sync(kFullMask, out_up, 1);      // E(i+1, j) * w_up(i+1, j)
        C diag_below = __shfl_down_sync(kFullMask, out_diag, 1);  // E(i+1, j) * w_diag(i+1, j)
        const C border_up_j = __shfl_sync(kFullMask, border_up, step);
        const C border_diag_j = __shfl_sync(kFullMask, border_diag, step);
        up_below = lane == kWarp - 1 ? border_up_j : up_below;
        diag_below = lane == kWarp - 1 ? border_diag_j : diag_below;
        const bool active = row_ok & (j >= 0) & (j < cols);
        const bool last_cell = (i == rows - 1) & (j == cols - 1);
        const C e_end = State::is_poison(words[step]) ? C(NAN) : dvalue;
        const C e_sum = last_cell ? e_end : from_right + up_below + diag_below_prev;
        const C e = active ? e_sum : C(0);
        C w_diag, w_up, w_left;
        State::decode(State::kEveryWordFinite || active ? words[step] : State::empty(), w_diag, w_up, w_left);
        const C n_up = e * w_up, n_diag = e * w_diag;
        if (active) {
          if constexpr (kDenseE)
            E_row[j] = static_cast<T>(e);
          else
            chunk_state[-step * kWarp] = State::hold(e);
        }
        if (writes_ring & active) {
          ring_out[2 * j] = n_up;
          ring_out[2 * j + 1] = n_diag;
        }
        from_right = e * w_left;
        diag_below_prev = diag_below;
        out_up = n_up;
        out_diag = n_diag;
        // Lane 0 finishes column cols - t0 at step 30: the border of the previous chunk is complete.
        if (step == kWarp - 2 && writes_ring && t0 > 0 && t0 <= cols) publish(my_progress, t0);
      }
    }
    __syncwarp();  // every lane's E before lane 0's release: the gradient may read it in this launch
    if (lane == 0) publish(my_progress, kDone);
  }
}

template <typename T, bool kDenseE>
__global__ void __launch_bounds__(warps_per_block<T>() * kWarp) backward_kernel(BackwardArgs<T> a) {
  backward_strips<T, kDenseE>(a);
  finish_launch(a.s);
}

}  // namespace sdtw::kernels::detail
