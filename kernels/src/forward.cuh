#pragma once
// Forward recursion R(i,j) = cost(i,j) + softmin_gamma(R(i-1,j-1), R(i-1,j), R(i,j-1)), one strip
// of 32 rows per warp. R is carried in float64 so that the differences fed to exp stay exact
// (docs/DESIGN.md §3.2); exp and log run in the compute type; each cell saves its normalised
// predecessor weights for the backward. A strip's cost is first staged in its state words (in 32 x
// 32 tiles by tile warps where the device has room for them, else by the strip's warp); the strip's
// warp then walks it in chunks of 32 steps: the chunk's costs are fetched first, so neither the
// cost's arithmetic nor a load latency sits on the chain, and its border values are awaited 8
// columns at a time, before the steps that read them.
// The values-only forward (no state) computes each chunk's costs right before its steps instead.
// kHardMin (gamma = 0, exact DTW) takes the plain min and saves a one-hot weight: the first
// smallest predecessor in the order diagonal, up, left, as the reference's hard DTW breaks ties,
// so the backward's E is that path's 0/1 indicator. It is a separate instantiation, so the
// gamma > 0 kernels are compiled exactly as without it.
#include <cfloat>
#include <climits>
#include <cmath>

#include "schedule.cuh"
#include "sdtw/kernels/costs.cuh"
#include "state.cuh"
#include "workspace.hpp"

namespace sdtw::kernels::detail {

// Checkpointing rows of R (all null otherwise). keep: the forward stores R of the last row of
// every band of `every` strips that feeds one below, band q of pair b at keep + b * stride + q * m.
// top: R of the row above the launch's first strip, pair b at top + b * stride, read where the ring
// would be, so that a band's recomputation starts from the kept row.
struct RowCheckpoint {
  double* keep = nullptr;
  const double* top = nullptr;
  int64_t every = 0, stride = 0;
};

// State: how a cell's weights are saved (CellState<T>, or the second order's FloatWeights).
template <typename T, typename State = CellState<T>>
struct ForwardArgs {
  Schedule s;
  int chain_blocks;                    // blocks [0, chain_blocks) run strips; the others stage cost tiles only
  double gamma;
  T* values;                           // batch
  typename State::Word* state;  // batch * strips * m + 31 steps of 32 words (state_index); null: values only
  uint64_t* ring;                      // batch x ring_slots x m: the last row of R of a strip, sealed
  RowCheckpoint rows = {};
  int* chunks_done = nullptr;  // per strip: its chunks whose state is written, for a sweep that trails it; null: none
  T* costs = nullptr;          // State::kCostsApart: where the costs wait for the chain (state_index layout)
};

// The state of a strip is laid out by warp step (step = j + lane) so that one step of a warp
// reads or writes 32 consecutive words. Strips start m steps apart, so a strip's last 31 steps
// overlap the next strip's first 31: lane l uses steps [l, m + l) of its strip, and the next
// strip's lane l leaves steps [m, m + l) of this one unused. Only cells inside the grid are
// stored; the word of a step off the grid may be another strip's cell.
__host__ __device__ inline int64_t state_index(int64_t strip, int64_t m, int64_t step, int lane) {
  return (strip * m + step) * kWarp + lane;
}

// Base-2 exp and log with denormals flushed: one MUFU instruction each, no range fix-ups on the
// dependent chain. A weight below 2^-126 is 0 in the saved state anyway, and the softmin sum lies
// in [1, 3], so the reciprocal has no slow path either.
__device__ inline float fast_exp2(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ inline double fast_exp2(double v) { return exp2(v); }
__device__ inline float fast_log2(float v) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ inline double fast_log2(double v) { return log2(v); }
__device__ inline float fast_rcp(float v) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ inline double fast_rcp(double v) { return 1.0 / v; }

// Bits [lo, hi) of a 32-bit mask, lo and hi clamped to [0, 32].
__device__ inline uint32_t step_mask(int lo, int hi) {
  lo = max(0, min(lo, kWarp));
  hi = max(lo, min(hi, kWarp));
  return static_cast<uint32_t>(((1ull << hi) - 1ull) ^ ((1ull << lo) - 1ull));
}

// exp(-v/gamma) = 2^(v * exp2_scale), the scale kept finite and normal in C: a gamma small
// enough to overflow it (or large enough to flush it to 0) turns a tie (v = 0) or an infinite
// predecessor (v = inf) into 0 * inf = NaN; clamped, they still weigh 1 and 0.
template <typename C>
__device__ inline C softmin_exp2_scale(double gamma) {
  constexpr double kScaleLo = sizeof(C) == 4 ? FLT_MIN : DBL_MIN, kScaleHi = sizeof(C) == 4 ? FLT_MAX : DBL_MAX;
  return static_cast<C>(-fmin(fmax(1.4426950408889634 / gamma, kScaleLo), kScaleHi));
}
// gamma * log(s) = log2_scale * log2(s)
__device__ inline double softmin_log2_scale(double gamma) { return gamma * 0.6931471805599453; }

template <typename T>
__host__ __device__ constexpr int warps_per_block() {
  return sizeof(T) == 4 ? 4 : 2;  // keeps the cost tiles under 48 KB of static shared memory
}

// The cost tile of a warp is a ring of 64 columns per row: staging writes 32 columns at
// (chunk parity) * 32 and reads back up to 31 columns of the chunk before, both bank-conflict free.
constexpr int kTileColumns = 2 * kWarp;

// The lane's state word of warp step 0 of the strip (a.state is not null).
template <typename T, typename State>
__device__ inline typename State::Word* strip_state(const ForwardArgs<T, State>& a, const Strip& strip) {
  return a.state + state_index(strip.b * a.s.strips + strip.k, a.s.m, 0, threadIdx.x & 31);
}

// Where a strip's costs wait for its chain, by warp step: in its state words (hold, held), or, for a
// State with kCostsApart, in a.costs at the same index.
template <typename T, typename State>
struct CostStage {
  typename State::Word* words;  // this lane's word of step 0
  T* costs;                     // this lane's cost of step 0 (kCostsApart)
  __device__ void put(int64_t step, T cost) const {
    if constexpr (State::kCostsApart) costs[step * kWarp] = cost;
    else words[step * kWarp] = State::hold(cost);
  }
  __device__ T get(int64_t step) const {
    if constexpr (State::kCostsApart) return costs[step * kWarp];
    else return State::held(words[step * kWarp]);
  }
};

template <typename T, typename State>
__device__ inline CostStage<T, State> strip_stage(const ForwardArgs<T, State>& a, const Strip& strip) {
  const int64_t first = state_index(strip.b * a.s.strips + strip.k, a.s.m, 0, threadIdx.x & 31);
  return {a.state + first, State::kCostsApart ? a.costs + first : nullptr};
}

// Where the strips' warps leave half the device or more, tile warps (the blocks past the strips')
// stage the strips' cost: 32 x 32 tiles, one per chunk, into the strips' state words, taken in the
// strips' order by a ticket, while a strip's warp claims what is left of its own tiles. So a
// strip's chain starts once its own tiles are in, not after its warp alone has staged the whole
// strip, and no warp waits on a tile that a warp which is not running holds. Elsewhere each strip's
// warp stages its own strip (stage_costs). A strip has tiles_per_strip(m) tiles (workspace.hpp).
//
// Writes cost(row0 + lane, j) for the tile's columns j in [first, first + 32) into the strip's
// state word of warp step j + lane, where the strip's chunks read it (st: the lane's word of step
// 0). Columns come from the policy and turn into warp steps through the warp's shared tile, so each
// store is a part of one warp step's 128 bytes.
template <typename State, typename T, typename Cost>
__device__ void stage_tile(const Cost& cost, typename Cost::Scratch& scratch, T (&tile)[kWarp][kTileColumns],
                           int64_t b, int row0, int rows, int cols, int first, const CostStage<T, State>& st) {
  const int lane = threadIdx.x & 31;
  if (first >= cols) return;
  T column[kWarp];
  cost.column(b, row0, rows, first + lane < cols ? first + lane : cols - 1, scratch, column);
#pragma unroll
  for (int r = 0; r < kWarp; ++r) tile[r][lane] = column[r];
  __syncwarp();
  // Step first + s holds column first + s - lane of this lane's row.
#pragma unroll 7
  for (int s = 0; s < 2 * kWarp - 1; ++s) {
    const int q = s - lane;
    if (q >= 0 && q < kWarp && first + q < cols)
      st.put(first + s, tile[lane][q & (kWarp - 1)]);
  }
}

// Without tile warps: writes cost(row0 + lane, j) into the strip's state word of warp step j + lane,
// for every column j of the grid. The cost's loads and arithmetic then run before the chain (while
// the strips below would only wait), never between two dependent steps. Columns come from the policy
// 32 at a time and turn into warp steps through the warp's tile ring, so the stores are whole warp
// steps.
template <typename State, typename T, typename Cost>
__device__ void stage_costs(const Cost& cost, typename Cost::Scratch& scratch, T (&tile)[kWarp][kTileColumns],
                            int64_t b, int row0, int rows, int cols, const CostStage<T, State>& st) {
  const int lane = threadIdx.x & 31, last_step = cols + kWarp - 1;
  for (int t0 = 0; t0 < last_step; t0 += kWarp) {
    const int parity = (t0 / kWarp) & 1;
    if (t0 < cols) {
      T column[kWarp];
      cost.column(b, row0, rows, t0 + lane < cols ? t0 + lane : cols - 1, scratch, column);
#pragma unroll
      for (int r = 0; r < kWarp; ++r) tile[r][parity * kWarp + lane] = column[r];
    }
    __syncwarp();
#pragma unroll 8
    for (int step = 0; step < kWarp; ++step) {
      const int t = t0 + step, j = t - lane;
      if (j >= 0 && j < cols)
        st.put(t, tile[lane][(parity * kWarp + step - lane) & (kTileColumns - 1)]);
    }
    __syncwarp();
  }
}

// Stages tile `chunk` of the strip unless another warp has claimed it; a tile's count in
// s.staged is released after its stores, so a strip that has counted its tiles reads them.
template <typename T, typename Cost, typename State>
__device__ void stage_if_unclaimed(const Cost& cost, typename Cost::Scratch& scratch, T (&tile)[kWarp][kTileColumns],
                                   const ForwardArgs<T, State>& a, const Strip& of, int64_t chunks, int chunk) {
  const Schedule& s = a.s;
  const int lane = threadIdx.x & 31;
  unsigned taken = 1;
  if (lane == 0) taken = atomicExch(s.tile_claims + of.id * chunks + chunk, 1u);
  if (__shfl_sync(kFullMask, taken, 0)) return;
  stage_tile<State>(cost, scratch, tile, of.b, of.row0, of.rows, of.cols, chunk * kWarp, strip_stage(a, of));
  __syncwarp();  // every lane's stores (and reads of the tile) before lane 0's release
  if (lane == 0) {
    cuda::atomic_ref<int, cuda::thread_scope_device> staged(s.staged[of.id]);
    staged.fetch_add(1, cuda::memory_order_release);
  }
}

// kSaveState = false: values alone (a.state is null). Each chunk's costs then go straight to the
// tile before its steps, as there is no strip-sized place to stage them in, and there are no tile
// tickets.
// kShaped: a constraint whose rows depend on each pair's lengths (Sakoe-Chiba, Itakura) through
// column_range; otherwise the band |i - j| <= bandwidth, or none.
// kRows: reads and writes the checkpointed rows of a.rows, a separate instantiation so that the
// full-state kernels compile as without it.
template <typename T, typename Cost, bool kSaveState = true, bool kHardMin = false, bool kShaped = false,
          bool kRows = false, typename State = CellState<T>>
__global__ void __launch_bounds__(warps_per_block<T>() * kWarp, 4) forward_kernel(Cost cost, ForwardArgs<T, State> a) {
  using C = typename State::Compute;
  constexpr int kWarps = warps_per_block<T>();
  __shared__ T tiles_of_block[kWarps][kWarp][kTileColumns];  // [warp][row][column mod 64]
  __shared__ typename Cost::Scratch scratch[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / kWarp;
  const double inf = INFINITY;
  [[maybe_unused]] const C exp2_scale = softmin_exp2_scale<C>(a.gamma);
  [[maybe_unused]] const double log2_scale = softmin_log2_scale(a.gamma);
  const Schedule& s = a.s;
  const int64_t band = s.bandwidth < 0 ? INT_MAX : s.bandwidth;
  T* my_tile = tiles_of_block[warp][lane];
  allow_dependent_launch();

  const int64_t chunks = tiles_per_strip(s.m);
  if constexpr (kSaveState)
    if (blockIdx.x >= a.chain_blocks) {
      for (int64_t ticket = take_ticket(tile_ticket(s)); ticket < s.total() * chunks; ticket = take_ticket(tile_ticket(s))) {
        Strip of;
        if (locate_strip(s, ticket / chunks, false, of, kRows ? s.strip0 : 0))
          stage_if_unclaimed(cost, scratch[warp], tiles_of_block[warp], a, of, chunks, static_cast<int>(ticket % chunks));
      }
      finish_launch(s);
      return;
    }
  for (int64_t ticket = take_ticket(s.ticket); ticket < s.total(); ticket = take_ticket(s.ticket)) {
    Strip strip;
    if (!begin_strip(s, ticket, false, strip, kRows ? s.strip0 : 0)) continue;
    const int64_t b = strip.b, k = strip.k;
    const int rows = strip.rows, cols = strip.cols, row0 = strip.row0, i = row0 + lane;
    int* my_progress = s.progress + strip.id;
    const bool row_ok = i < rows;
    // The last strip of a launch feeds none: in a band's recomputation the band below has its own.
    const bool feeds_below = row0 + kWarp < rows && (!kRows || strip.k < s.strips - 1);
    const bool writes_ring = feeds_below && lane == kWarp - 1;
    const bool keeps_row = kRows && writes_ring && a.rows.keep && (k + 1) % a.rows.every == 0;
    double* keep_out = keeps_row ? a.rows.keep + b * a.rows.stride + ((k + 1) / a.rows.every - 1) * s.m : nullptr;
    uint64_t* ring_out = a.ring + strip.slot * s.m;
    uint64_t* ring_in = a.ring + strip.previous * s.m;
    auto* st = kSaveState ? strip_state(a, strip) : nullptr;
    CostStage<T, State> stage{};
    if constexpr (kSaveState) stage = strip_stage(a, strip);
    const int last_step = cols + kWarp - 1;  // warp steps of the strip: 0 .. last_step - 1
    // Columns this lane computes (inside the grid) and keeps finite (inside the band too).
    const int j_end = row_ok ? cols : 0;
    int band_lo, band_hi;
    if constexpr (kShaped) {
      const ColumnRange range = column_range(s.constraint, i, rows, cols);
      band_lo = range.lo;
      band_hi = min(j_end, range.hi);
    } else {
      band_lo = static_cast<int>(max(static_cast<int64_t>(0), i - band));
      band_hi = static_cast<int>(min(static_cast<int64_t>(j_end), i + band + 1));
    }
    const int value_column = i == rows - 1 ? cols - 1 : -1;

    double left = inf;                 // R(i, j-1)
    double diag = i == 0 ? 0.0 : inf;  // R(i-1, j-1); R(-1,-1) = 0 starts every path
    double out = inf;                  // what this lane produced at the previous step
    if constexpr (kSaveState) {
      if (a.chain_blocks < static_cast<int>(gridDim.x)) {
        for (int chunk = 0; chunk < chunks; ++chunk) stage_if_unclaimed(cost, scratch[warp], tiles_of_block[warp], a, strip, chunks, chunk);
        await_count(s.staged + strip.id, static_cast<int>(chunks));
      } else {
        stage_costs<State>(cost, scratch[warp], tiles_of_block[warp], b, row0, rows, cols, stage);
      }
    }
    await_claim(s, strip.id, strip.order);
    for (int t0 = 0; t0 < last_step; t0 += kWarp) {
      const int parity = (t0 / kWarp) & 1;
      auto* chunk_state = st + static_cast<int64_t>(t0) * kWarp;
      if constexpr (kSaveState) {
        // The chunk's costs go from its state words (this lane's own) to where its steps read them:
        // shared memory, since 32 more registers live across the chain would spill. A step off the
        // grid reads a word that is not its cell's: it only ever reaches the discarded side of a select.
        T chunk_cost[kWarp];
#pragma unroll
        for (int step = 0; step < kWarp; ++step)
          chunk_cost[step] = t0 + step < last_step ? stage.get(t0 + step) : T(0);
#pragma unroll
        for (int step = 0; step < kWarp; ++step) my_tile[(parity * kWarp + step - lane) & (kTileColumns - 1)] = chunk_cost[step];
      } else if (t0 < cols) {
        // Columns t0 .. t0 + 31 into this half of the tile ring; the steps read the other half's
        // columns, written by the chunk before. A cell off the grid reads a stale cost, which
        // only ever reaches the discarded side of a select.
        T column[kWarp];
        cost.column(b, row0, rows, t0 + lane < cols ? t0 + lane : cols - 1, scratch[warp], column);
#pragma unroll
        for (int r = 0; r < kWarp; ++r) tiles_of_block[warp][r][parity * kWarp + lane] = column[r];
      }
      // R(row0 - 1, t0 + lane), from the strip above: lanes whose word is in are set in
      // border_ready, the others are awaited 8 at a time before the steps that read them.
      double border = inf;
      const bool reads_border = k > 0 && t0 + lane < cols;
      if (kRows && k == 0 && a.rows.top && t0 + lane < cols) border = a.rows.top[b * a.rows.stride + t0 + lane];
      uint32_t border_ready = __ballot_sync(kFullMask, !reads_border);
      const auto take_border = [&] {
        const uint64_t w = ring_load(ring_in + t0 + lane);
        if (w != 0) border = unseal(w);
        return w != 0;
      };
      __syncwarp();
      // Step s of the chunk is column t0 + s - lane: which steps are in the grid and in the band.
      const uint32_t in_grid = step_mask(lane - t0, j_end - t0 + lane);
      const uint32_t in_band = step_mask(band_lo - t0 + lane, band_hi - t0 + lane);
      const int value_step = value_column < 0 ? -1 : value_column - t0 + lane;
      // Each 8 steps are one basic block (selects and predicated stores; the only branch, uniform,
      // is await_border's), so the compiler can overlap a step's side work with the next step's
      // dependent chain.
#pragma unroll
      for (int step = 0; step < kWarp; ++step) {
        if (step % kBorderPiece == 0) border_ready = await_border(border_ready, step, take_border);
        const int t = t0 + step, j = t - lane;
        double up = __shfl_up_sync(kFullMask, out, 1);  // R(i-1, j) from the row above
        const double border_j = __shfl_sync(kFullMask, border, step);
        up = lane == 0 ? border_j : up;
        const double rmin = fmin(diag, fmin(up, left));
        const bool banded = (in_band >> step) & 1u;
        const bool live = banded && rmin < inf;
        const T c = my_tile[(parity * kWarp + step - lane) & (kTileColumns - 1)];
        double r_live;
        typename State::Word w_live;
        if constexpr (kHardMin) {
          // fmin drops a NaN predecessor, so NaN is carried on by hand, as the softmin's exp carries
          // it; a -inf cost is NaN too, as the CPU operator's (a path of value -inf has no gradient).
          const bool takes_diag = diag <= up && diag <= left, takes_up = !takes_diag && up <= left;
          const bool nan_in = isnan(diag + up + left) || !(c > -inf);
          r_live = nan_in ? static_cast<double>(NAN) : static_cast<double>(c) + rmin;  // no finite predecessor: +inf
          w_live = State::encode(C(takes_diag), C(takes_up), C(!takes_diag && !takes_up), C(1));
        } else {
          const C ed = fast_exp2(static_cast<C>(diag - rmin) * exp2_scale);
          const C eu = fast_exp2(static_cast<C>(up - rmin) * exp2_scale);
          const C el = fast_exp2(static_cast<C>(left - rmin) * exp2_scale);
          const C sum = ed + eu + el;
          r_live = (static_cast<double>(c) + rmin) - log2_scale * static_cast<double>(fast_log2(sum));
          w_live = State::encode(ed, eu, el, fast_rcp(sum));
        }
        // A cell of the band with no finite predecessor is the reference's c + softmin = c + their
        // sum (fmin dropped any NaN among them): +inf, or NaN for a NaN predecessor, a NaN cost or a
        // -inf cost, so that a NaN reaches the end even where it has one predecessor alone. The
        // hard min's r_live is that already.
        double r;
        if constexpr (kHardMin)
          r = banded ? r_live : inf;
        else
          r = live ? r_live : banded ? static_cast<double>(c) + (diag + up + left) : inf;
        // Every cell of the grid is written, the ones outside the band with empty(). A value that
        // is not finite in T (no finite path, NaN, overflow) has no gradient: its end cell is
        // marked so that the backward gives the whole pair NaN.
        const bool end_overflows = step == value_step && !isfinite(static_cast<T>(r));
        const typename State::Word w = end_overflows ? State::poison() : live ? w_live : State::empty();
        if constexpr (kSaveState)
          if ((in_grid >> step) & 1u) chunk_state[step * kWarp] = w;
        ring_store(ring_out + j, seal(r), writes_ring && ((in_grid >> step) & 1u));
        if (keeps_row && ((in_grid >> step) & 1u)) keep_out[j] = r;
        if (step == value_step) a.values[b] = static_cast<T>(r);
        left = r;
        diag = up;
        out = r;
      }
      ring_store(ring_in + t0 + lane, 0, reads_border);  // read: the slot's next writer finds it zero
      __syncwarp();
      if (a.chunks_done != nullptr && lane == 0) publish(a.chunks_done + strip.id, t0 / kWarp + 1);
    }
    if (lane == kWarp - 1) publish(my_progress, kDone);
  }
  finish_launch(s);
}

}  // namespace sdtw::kernels::detail
