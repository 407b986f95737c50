#pragma once
// The host side of a launch on the strips: the workspace's layout, the schedule over it, the scratch
// reset, the persistent grid's size, the forward's and the backward's launches. Every entry point's
// file uses them (the cost tensor's, the squared Euclidean's, the named costs', the checkpointed
// mode's and the second order's).
#include <algorithm>
#include <atomic>

#include "backward.cuh"
#include "errors.hpp"
#include "forward.cuh"
#include "workspace.hpp"

namespace sdtw::kernels::detail {

// save_state = false: the values-only layout, with no saved state.
template <typename T>
WorkspaceLayout layout_for(const Problem& p, bool save_state = true) {
  using C = typename CellState<T>::Compute;
  // A ring column holds the forward's sealed R (one word) or the backward's border words.
  constexpr std::size_t ring_column = sizeof(uint64_t) * std::max(1, BorderWords<C>::kWords);
  return workspace_layout(p, save_state ? sizeof(typename CellState<T>::Word) : 0, ring_column);
}

inline Schedule schedule_for(const Problem& p, const WorkspaceLayout& w, void* workspace, int64_t strip0 = 0) {
  auto* base = static_cast<char*>(workspace);
  const Constraint c = effective_constraint(p.bandwidth, p.constraint, p.n, p.m, p.x_len || p.y_len);
  return {p.batch, p.n, p.m, w.strips, w.ring_slots, p.x_len, p.y_len,
          c.kind == ConstraintKind::band ? c.radius : -1,
          reinterpret_cast<unsigned long long*>(base + w.ticket), reinterpret_cast<int*>(base + w.progress),
          reinterpret_cast<int*>(base + w.progress) + p.batch * w.strips,
          reinterpret_cast<unsigned*>(base + w.tile_claims),
          p.x_index, p.y_index, c, strip0};
}

// Resets the tickets, the per-strip counters, the cost-tile claims and the ring of borders before
// a forward, whose workspace is new: one memset node, so graph replays start clean. Every launch
// leaves all but the tile claims zero when it ends (finish_launch; consumers zero the border words
// they read), so the backward, which claims no cost tile, needs none. A forward always needs it.
inline void reset_scratch(const WorkspaceLayout& w, void* workspace, cudaStream_t stream) {
  auto* base = static_cast<char*>(workspace);
  check(cudaMemsetAsync(base + w.ticket, 0, w.total - w.ticket, stream), "cudaMemsetAsync(scratch)");
}

// A positive number about the current device (query(device)), queried once per device and kept:
// the queries cost more host time than a small launch. Key: one kept number per key type.
template <typename Key, typename Query>
int kept_per_device(Query&& query) {
  constexpr int kDevices = 64;
  static std::atomic<int> per_device[kDevices] = {};
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  int value = device < kDevices ? per_device[device].load(std::memory_order_relaxed) : 0;
  if (value == 0) {
    value = query(device);
    if (device < kDevices) per_device[device].store(value, std::memory_order_relaxed);
  }
  return value;
}

template <auto kernel, int kThreads>
struct ResidentKey {};

// Blocks of `kernel` (kThreads each) that the device holds at once.
template <auto kernel, int kThreads>
int resident_blocks() {
  return kept_per_device<ResidentKey<kernel, kThreads>>([](int device) {
    int sms = 0, per_sm = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0), "cudaOccupancy");
    return sms * (per_sm > 0 ? per_sm : 1);
  });
}

// Persistent grid: enough resident blocks to fill the device, never more than the tickets need.
template <typename T, auto kernel>
int grid_for(int64_t tickets) {
  constexpr int kThreads = warps_per_block<T>() * kWarp;
  const int resident = resident_blocks<kernel, kThreads>();
  const int64_t warps_per_block = kThreads / kWarp;
  const int64_t wanted = (tickets + warps_per_block - 1) / warps_per_block;
  return static_cast<int>(wanted < resident ? wanted : resident);
}

// strip0 and rows (kRows): a checkpointed forward's band of strips and its kept rows of R;
// chunks_done, costs: where each strip counts its chunks written, where its costs wait (ForwardArgs).
// State: how the forward saves a cell's weights (the second order's own, or CellState<T>).
template <typename T, typename Cost, bool kSaveState, bool kHardMin, bool kShaped, bool kRows = false,
          typename State = CellState<T>>
void launch_forward_kernel(const Problem& p, const WorkspaceLayout& w, const Cost& cost, T* values, void* workspace,
                           cudaStream_t stream, int64_t strip0 = 0, const RowCheckpoint& rows = {},
                           int* chunks_done = nullptr, T* costs = nullptr) {
  auto* base = static_cast<char*>(workspace);
  constexpr auto kernel = forward_kernel<T, Cost, kSaveState, kHardMin, kShaped, kRows, State>;
  constexpr int kWarps = warps_per_block<T>();
  // One warp per strip as far as the device holds them (a scheduler each where it can), and tile
  // warps for the cost where the strips leave half the device or more: where they hold more,
  // staging ahead of them measured slower than each strip staging its own (docs/DESIGN.md §4.3).
  const int chain_blocks = grid_for<T, kernel>(p.batch * w.strips);
  const int resident = resident_blocks<kernel, kWarps * kWarp>();
  const int64_t tile_blocks = kSaveState && 2 * chain_blocks <= resident
                                  ? std::min<int64_t>((p.batch * w.strips * tiles_per_strip(p.m) + kWarps - 1) / kWarps,
                                                      resident - chain_blocks)
                                  : 0;
  const int grid = chain_blocks + static_cast<int>(tile_blocks);
  ForwardArgs<T, State> args{schedule_for(p, w, workspace, strip0), chain_blocks, p.gamma, values,
                              kSaveState ? reinterpret_cast<typename State::Word*>(base + w.state) : nullptr,
                              reinterpret_cast<uint64_t*>(base + w.ring), rows, chunks_done, costs};
  kernel<<<grid, kWarps * kWarp, 0, stream>>>(cost, args);
  check(cudaGetLastError(), "forward launch");
}

// gamma = 0 (exact DTW) runs the hard-min instantiation; the backward reads the saved weights
// whichever wrote them. w: the workspace's layout, which a caller may size for more than the
// forward needs (a wider ring, for sweeps that follow it on the same state).
template <typename T, typename Cost, bool kSaveState = true>
void launch_forward(const Problem& p, const WorkspaceLayout& w, const Cost& cost, T* values, void* workspace,
                    cudaStream_t stream) {
  require(values, "values");
  require(workspace, "workspace");
  reset_scratch(w, workspace, stream);
  // Sakoe-Chiba and Itakura run their own instantiations, so that the unconstrained and banded
  // kernels keep their registers.
  const bool shaped = p.constraint.kind == ConstraintKind::sakoe_chiba || p.constraint.kind == ConstraintKind::itakura;
  if (p.gamma == 0.0 && shaped)
    launch_forward_kernel<T, Cost, kSaveState, true, true>(p, w, cost, values, workspace, stream);
  else if (p.gamma == 0.0)
    launch_forward_kernel<T, Cost, kSaveState, true, false>(p, w, cost, values, workspace, stream);
  else if (shaped)
    launch_forward_kernel<T, Cost, kSaveState, false, true>(p, w, cost, values, workspace, stream);
  else
    launch_forward_kernel<T, Cost, kSaveState, false, false>(p, w, cost, values, workspace, stream);
}

template <typename T, typename Cost, bool kSaveState = true>
void launch_forward(const Problem& p, const Cost& cost, T* values, void* workspace, cudaStream_t stream) {
  launch_forward<T, Cost, kSaveState>(p, layout_for<T>(p, kSaveState), cost, values, workspace, stream);
}

inline void reject_pair_indices(const Problem& p) {
  if (p.x_index || p.y_index)
    reject("pair indices (x_index, y_index) are for sqeuclidean_values only");
}

template <typename T>
BackwardArgs<T> backward_args(const Problem& p, const WorkspaceLayout& w, const T* dvalues,
                                      int64_t dvalues_stride, T* dense_E, void* workspace) {
  reject_pair_indices(p);
  require(dvalues, "dvalues");
  require(workspace, "workspace");
  auto* base = static_cast<char*>(workspace);
  return {schedule_for(p, w, workspace), dvalues, dvalues_stride,
          reinterpret_cast<typename CellState<T>::Word*>(base + w.state), dense_E, reinterpret_cast<uint64_t*>(base + w.ring)};
}

template <typename T, bool kBands = false>
void launch_backward(const BackwardArgs<T>& args, cudaStream_t stream) {
  constexpr auto dense = backward_kernel<T, true, kBands>, in_state = backward_kernel<T, false, kBands>;
  const int64_t strips = args.s.total();
  const int grid = args.dense_E ? grid_for<T, dense>(strips) : grid_for<T, in_state>(strips);
  (args.dense_E ? dense : in_state)<<<grid, warps_per_block<T>() * kWarp, 0, stream>>>(args);
  check(cudaGetLastError(), "backward launch");
}

}  // namespace sdtw::kernels::detail
