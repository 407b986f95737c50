#pragma once
// Backward recursion E(c) = sum over the successors s of c of E(s) * w(s <- c), with the weights
// saved by the forward: it needs neither R nor the cost. Strips run bottom-up, lanes right to
// left (lane 31 leads). A lane hands each successor's share to its predecessors as products,
// so a cell's state can be overwritten with E as soon as the lane has read it. As in the forward,
// a chunk's 32 state words are loaded before its 32 dependent steps, its border values 8 at a time.
#include "forward.cuh"

namespace sdtw::kernels::detail {

template <typename T>
struct BackwardArgs {
  Schedule s;
  const T* dvalues;                      // batch: upstream gradient of each value, dvalues_stride apart
  int64_t dvalues_stride;
  typename CellState<T>::Word* state;    // as written by the forward; receives E when dense_E is null
  T* dense_E;                            // batch x n x m, or null
  uint64_t* ring;  // batch x ring_slots x m x BorderWords<Compute>::kWords: (E*w_up, E*w_diag) of a strip's first row, sealed
  // Checkpointing, one band of strips a launch (null otherwise): the border words, as in the ring
  // (batch x m x kWords), that the band below handed up to the launch's last strip, and those its
  // first strip hands up to the band above.
  uint64_t* below = nullptr;
  uint64_t* above = nullptr;
};

// A backward border column, (E*w_up, E*w_diag): float seals both in one word, double in two (each
// written once, so the column is in once both are non-zero).
template <typename C>
struct BorderWords;
template <>
struct BorderWords<float> {
  static constexpr int kWords = 1;
  __device__ static void store(uint64_t* w, float up, float diag, bool when) { ring_store(w, seal(up, diag), when); }
  __device__ static bool take(const uint64_t* w, float& up, float& diag) {
    const uint64_t v = ring_load(w);
    if (v != 0) unseal(v, up, diag);
    return v != 0;
  }
  __device__ static void clear(uint64_t* w, bool when) { ring_store(w, 0, when); }
};
template <>
struct BorderWords<double> {
  static constexpr int kWords = 2;
  __device__ static void store(uint64_t* w, double up, double diag, bool when) {
    ring_store(w, seal(up), when);
    ring_store(w + 1, seal(diag), when);
  }
  __device__ static bool take(const uint64_t* w, double& up, double& diag) {
    const uint64_t u = ring_load(w), d = ring_load(w + 1);
    const bool in = u != 0 && d != 0;
    if (in) {
      up = unseal(u);
      diag = unseal(d);
    }
    return in;
  }
  __device__ static void clear(uint64_t* w, bool when) {
    ring_store(w, 0, when);
    ring_store(w + 1, 0, when);
  }
};

// Stores E of the strip's columns [first, first + 32), which are complete once a chunk is done (its
// last lane, lane 0, has passed them), from the warp's ring of E (e_ring: 64 columns per row, a
// column's cells at column mod 64) into the dense tensor, a row of the strip at a time: 128 bytes
// a store instead of a warp step's 32 rows.
template <typename T>
__device__ void store_dense_E(T* E_strip, int64_t m, const T (*e_ring)[kTileColumns], int strip_rows, int cols, int first) {
  __syncwarp();
  const int j = first + static_cast<int>(threadIdx.x & 31);
  if (j >= 0 && j < cols) {
#pragma unroll 8
    for (int r = 0; r < strip_rows; ++r) E_strip[r * m + j] = e_ring[r][j & (kTileColumns - 1)];
  }
  __syncwarp();  // the ring's next chunk overwrites what was just read
}

// The strips of the backward, one ticket at a time, until the tickets run out. kDenseE: E goes
// to the caller's batch x n x m tensor (unfused mode) through the warp's ring e_ring instead of
// over the state.
template <typename T, bool kDenseE, bool kBands = false>
__device__ void backward_strips(const BackwardArgs<T>& a, T (*e_ring)[kTileColumns]) {
  using State = CellState<T>;
  using C = typename State::Compute;
  using Border = BorderWords<C>;
  const int lane = threadIdx.x & 31;
  const Schedule& s = a.s;

  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, true, strip, kBands ? s.strip0 : 0)) continue;
    const int64_t b = strip.b, k = strip.k, state_strip = b * s.strips + k;
    const int rows = strip.rows, cols = strip.cols, row0 = strip.row0, i = row0 + lane;
    int* my_progress = s.progress + strip.id;
    const bool row_ok = i < rows;
    // kBands: the launch's last strip reads a.below, its first writes a.above (null: none).
    const bool last_of_launch = kBands && k == s.strips - 1;
    const bool fed_from_below = row0 + kWarp < rows && (!last_of_launch || a.below);
    const bool writes_ring = (k > 0 || (kBands && a.above)) && lane == 0;
    uint64_t* ring_out = !kBands || k > 0 ? a.ring + strip.slot * s.m * Border::kWords : a.above + b * s.m * Border::kWords;
    uint64_t* ring_in = last_of_launch ? a.below + b * s.m * Border::kWords : a.ring + strip.previous * s.m * Border::kWords;
    auto* st = a.state + state_index(state_strip, s.m, 0, lane);
    T* E_strip = kDenseE ? a.dense_E + (b * s.n + row0) * s.m : nullptr;
    const int strip_rows = min(kWarp, rows - row0);
    const C dvalue = static_cast<C>(a.dvalues[b * a.dvalues_stride]);
    const int last_step = cols + kWarp - 1;

    C from_right = 0;       // E(i, j+1) * w_left(i, j+1)
    C diag_below_prev = 0;  // E(i+1, j+1) * w_diag(i+1, j+1)
    C out_up = 0, out_diag = 0;
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      // Lane 31 takes column cols-1-t at step t; lane l of the chunk holds that column's border,
      // awaited 8 lanes at a time before the steps that read it (as in the forward).
      C border_up = 0, border_diag = 0;
      const int jb = cols - 1 - t0 - lane;
      const bool reads_border = fed_from_below && jb >= 0;
      uint64_t* border_word = ring_in + static_cast<int64_t>(jb) * Border::kWords;
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] { return Border::take(border_word, border_up, border_diag); };
      // At step t every lane reads warp step cols + 30 - t: one coalesced row of the state. Off
      // the grid that word is not the cell's (the forward stores only the grid's cells), so an
      // inactive cell takes empty() instead.
      auto* chunk_state = st + static_cast<int64_t>(cols + kWarp - 2 - t0) * kWarp;
      typename State::Word words[kWarp];
#pragma unroll
      for (int step = 0; step < kWarp; ++step)
        words[step] = t0 + step < last_step ? chunk_state[-step * kWarp] : State::empty();
      // As in the forward, each 8 steps are one basic block: selects and predicated stores.
#pragma unroll
      for (int step = 0; step < kWarp; ++step) {
        if (step % kBorderPiece == 0) border_ready = await_border(border_ready, step, take_border);
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
        // A cell off the grid lands in a ring slot that its column's cell overwrites before it is stored.
        if constexpr (kDenseE)
          e_ring[lane][j & (kTileColumns - 1)] = static_cast<T>(e);
        else if (active)
          chunk_state[-step * kWarp] = State::hold(e);
        Border::store(ring_out + static_cast<int64_t>(j) * Border::kWords, n_up, n_diag, writes_ring & active);
        from_right = e * w_left;
        diag_below_prev = diag_below;
        out_up = n_up;
        out_diag = n_diag;
      }
      Border::clear(border_word, reads_border);  // read: the slot's next writer finds it zero
      if constexpr (kDenseE) store_dense_E(E_strip, s.m, e_ring, strip_rows, cols, cols - 1 - t0);
    }
    __syncwarp();  // every lane's E before lane 0's release: the gradient may read it in this launch
    if (lane == 0) publish(my_progress, kDone);
  }
}

template <typename T, bool kDenseE, bool kBands = false>
__global__ void __launch_bounds__(warps_per_block<T>() * kWarp) backward_kernel(BackwardArgs<T> a) {
  if constexpr (kDenseE) {
    __shared__ T e_rings[warps_per_block<T>()][kWarp][kTileColumns];
    backward_strips<T, true, kBands>(a, e_rings[threadIdx.x / kWarp]);
  } else {
    backward_strips<T, false, kBands>(a, nullptr);
  }
  finish_launch(a.s);
}

}  // namespace sdtw::kernels::detail
