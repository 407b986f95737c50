// The checkpointed forward and backward (sdtw/kernels/checkpoint.hpp): host code only, built from
// the full-state kernels and their launch helpers.
//
// Workspace: the kept rows of R (float64, batch x (bands - 1) x m), two buffers of the products a
// band hands to the band above (batch x m border words each, used in turn), the value slots that a
// band's recomputation writes, the float64 sum of the bands' shares of grad_y (batch x m x dim),
// then one region used first by the forward's scratch and ring and then by each band's state,
// scratch and ring in turn. The forward's ring takes as many slots as fit in the band's room, so
// that it never sets the peak.
#include <algorithm>

#include "gradient_launch.cuh"
#include "launch.cuh"
#include "sdtw/kernels/checkpoint.hpp"
#include "sdtw/kernels/costs.cuh"

namespace sdtw::kernels {
namespace {

using detail::CellState;
using detail::check;
using detail::kMaxGridZ;
using detail::launch_backward;
using detail::launch_forward_kernel;
using detail::layout_for;
using detail::pairs_of;
using detail::reject_pair_indices;
using detail::require;
using detail::reset_scratch;
using detail::schedule_for;
using detail::with_feature_tile;
using detail::WorkspaceLayout;

struct CheckpointLayout {
  int64_t band_strips = 0, bands = 0;
  WorkspaceLayout forward, band;  // both at `shared`, never alive at once
  std::size_t keep = 0, handoff[2] = {0, 0}, band_values = 0, grad_y_sum = 0, shared = 0, total = 0;
  std::size_t handoff_bytes = 0;
};

template <typename T>
CheckpointLayout checkpoint_layout(const Problem& p, int64_t band_rows) {
  detail::validate(p);
  reject_pair_indices(p);
  if (band_rows < kCheckpointRowQuantum || band_rows % kCheckpointRowQuantum != 0)
    detail::fail("band_rows must be a positive multiple of ", kCheckpointRowQuantum, " (got ", band_rows, ")");
  if (p.constraint.kind == ConstraintKind::sakoe_chiba || p.constraint.kind == ConstraintKind::itakura)
    detail::fail("the checkpointed mode takes a band (bandwidth) or no constraint, not ",
                 constraint_name(p.constraint.kind));
  using C = typename CellState<T>::Compute;
  CheckpointLayout c;
  const int64_t strips = (p.n + detail::kWarp - 1) / detail::kWarp;
  c.band_strips = std::min(band_rows / detail::kWarp, strips);
  c.bands = (strips + c.band_strips - 1) / c.band_strips;
  // The band's layout does not depend on the band, the lengths or the bandwidth (which a band of
  // rows alone could fail to validate).
  Problem band = p;
  band.n = c.band_strips * detail::kWarp;
  band.bandwidth = -1;
  band.constraint = {};
  band.x_len = band.y_len = nullptr;
  c.band = layout_for<T>(band);
  const std::size_t row_bytes = static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.m) * sizeof(uint64_t);
  const auto slots = static_cast<int64_t>(c.band.total / row_bytes);
  c.forward = detail::workspace_layout(p, 0, sizeof(uint64_t), std::max<int64_t>(1, slots));
  c.handoff_bytes = detail::aligned_bytes(row_bytes * detail::BorderWords<C>::kWords);
  c.keep = 0;
  c.handoff[0] = detail::aligned_bytes(static_cast<std::size_t>(c.bands - 1) * row_bytes);
  c.handoff[1] = c.handoff[0] + c.handoff_bytes;
  c.band_values = c.handoff[1] + c.handoff_bytes;
  c.grad_y_sum = c.band_values + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * sizeof(T));
  c.shared = c.grad_y_sum + detail::aligned_bytes(static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(p.m) *
                                                  static_cast<std::size_t>(std::max<int64_t>(p.dim, 0)) * sizeof(double));
  c.total = c.shared + std::max(c.forward.total, c.band.total);
  return c;
}

template <typename T, typename Cost>
void checkpoint_forward(const Problem& p, int64_t band_rows, const Cost& cost, T* values, void* workspace,
                        cudaStream_t stream) {
  require(values, "values");
  require(workspace, "workspace");
  const CheckpointLayout c = checkpoint_layout<T>(p, band_rows);
  auto* base = static_cast<char*>(workspace);
  void* shared = base + c.shared;
  const detail::RowCheckpoint rows{reinterpret_cast<double*>(base + c.keep), nullptr, c.band_strips, (c.bands - 1) * p.m};
  reset_scratch(c.forward, shared, stream);
  if (p.gamma == 0.0)
    launch_forward_kernel<T, Cost, false, true, false, true>(p, c.forward, cost, values, shared, stream, 0, rows);
  else
    launch_forward_kernel<T, Cost, false, false, false, true>(p, c.forward, cost, values, shared, stream, 0, rows);
}

// Bands from the bottom up: recompute the band's state from the kept row above it, run the backward
// on it (E into dense_E, or into the state when dense_E is null), then after_band(strip0, state).
template <typename T, typename Cost, typename AfterBand>
void checkpoint_backward(const Problem& p, int64_t band_rows, const Cost& cost, const T* dvalues,
                         int64_t dvalues_stride, T* dense_E, void* workspace, cudaStream_t stream, AfterBand&& after_band) {
  require(dvalues, "dvalues");
  require(workspace, "workspace");
  const CheckpointLayout c = checkpoint_layout<T>(p, band_rows);
  auto* base = static_cast<char*>(workspace);
  void* shared = base + c.shared;
  auto* state = reinterpret_cast<typename CellState<T>::Word*>(static_cast<char*>(shared) + c.band.state);
  const auto handoff = [&](int64_t q) { return reinterpret_cast<uint64_t*>(base + c.handoff[q % 2]); };
  // A reader zeroes the words it takes, but a replay must not find a word of an earlier run.
  check(cudaMemsetAsync(base + c.handoff[0], 0, 2 * c.handoff_bytes, stream), "cudaMemsetAsync(handoff)");
  for (int64_t q = c.bands - 1; q >= 0; --q) {
    const int64_t strip0 = q * c.band_strips;
    const double* top = q > 0 ? reinterpret_cast<const double*>(base + c.keep) + (q - 1) * p.m : nullptr;
    const detail::RowCheckpoint rows{nullptr, top, 0, (c.bands - 1) * p.m};
    T* band_values = reinterpret_cast<T*>(base + c.band_values);
    reset_scratch(c.band, shared, stream);
    if (p.gamma == 0.0)
      launch_forward_kernel<T, Cost, true, true, false, true>(p, c.band, cost, band_values, shared, stream, strip0, rows);
    else
      launch_forward_kernel<T, Cost, true, false, false, true>(p, c.band, cost, band_values, shared, stream, strip0, rows);
    const detail::BackwardArgs<T> args{schedule_for(p, c.band, shared, strip0),
                                       dvalues,
                                       dvalues_stride,
                                       state,
                                       dense_E,
                                       reinterpret_cast<uint64_t*>(static_cast<char*>(shared) + c.band.ring),
                                       q + 1 < c.bands ? handoff(q + 1) : nullptr,
                                       q > 0 ? handoff(q) : nullptr};
    launch_backward<T, true>(args, stream);
    after_band(c, q, strip0, state);
  }
}

// The fused gradient of one band: its rows of grad_x, and its share of grad_y (written by the
// bottom band, the first, and added to by the others).
template <typename T, int kFeatures>
void launch_band_jacobian(const Problem& p, const CheckpointLayout& c, int64_t q, int64_t strip0,
                          const typename CellState<T>::Word* state, const T* x, const T* y, T* grad_x, T* grad_y,
                          double* grad_y_sum, cudaStream_t stream) {
  const int64_t row0 = strip0 * detail::kWarp, row_end = std::min(p.n, row0 + c.band_strips * detail::kWarp);
  detail::JacobianArgs<T, T> gx{p.batch, p.n, p.m, p.dim, c.band_strips, p.x_len, p.y_len, state, x, y, grad_x};
  detail::JacobianArgs<T, T> gy{p.batch, p.n, p.m, p.dim, c.band_strips, p.x_len, p.y_len, state, y, x, grad_y};
  gx.row0 = gy.row0 = row0;
  gx.row_end = gy.row_end = row_end;
  gy.accumulate = q + 1 < c.bands;
  gy.grad_sum = grad_y_sum;
  const detail::GradientTiles<T, kFeatures> tiles(row_end - row0, p.m, p.dim);
  for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, p.batch - first);
    const dim3 grid(static_cast<unsigned>(tiles.x_blocks + tiles.y_blocks), static_cast<unsigned>(tiles.features),
                    static_cast<unsigned>(count));
    detail::jacobian_kernel<T, kFeatures, false, T, true><<<grid, detail::kJacThreads, 0, stream>>>(
        pairs_of(gx, first, count, p.n, p.m), pairs_of(gy, first, count, p.m, p.n), static_cast<int>(tiles.x_blocks));
    check(cudaGetLastError(), "gradient launch");
  }
}

}  // namespace

template <typename T>
std::size_t checkpoint_workspace_bytes(const Problem& problem, int64_t band_rows) {
  return checkpoint_layout<T>(problem, band_rows).total;
}

template <typename T>
int64_t checkpoint_band_rows(const Problem& problem, std::size_t budget) {
  const int64_t needed = (problem.n + kCheckpointRowQuantum - 1) / kCheckpointRowQuantum * kCheckpointRowQuantum;
  int64_t best = 0;
  for (int64_t rows = kCheckpointRowQuantum;; rows *= 2) {
    if (checkpoint_workspace_bytes<T>(problem, rows) <= budget) best = rows;
    if (rows >= needed) return best;
  }
}

template <typename T>
void cost_checkpoint_forward(const Problem& p, int64_t band_rows, const T* D, T* values, void* workspace,
                             cudaStream_t stream) {
  require(D, "D");
  checkpoint_forward(p, band_rows, PrecomputedCost<T>{D, p.n, p.m}, values, workspace, stream);
}

template <typename T>
void cost_checkpoint_backward(const Problem& p, int64_t band_rows, const T* D, const T* dvalues, T* E, void* workspace,
                              cudaStream_t stream, int64_t dvalues_stride) {
  require(D, "D");
  require(E, "E");
  // Cells past a pair's lengths belong to no strip: no band writes them.
  if (p.x_len || p.y_len)
    check(cudaMemsetAsync(E, 0, sizeof(T) * p.batch * p.n * p.m, stream), "cudaMemsetAsync(E)");
  checkpoint_backward(p, band_rows, PrecomputedCost<T>{D, p.n, p.m}, dvalues, dvalues_stride, E, workspace, stream,
                      [](const CheckpointLayout&, int64_t, int64_t, const typename CellState<T>::Word*) {});
}

template <typename T>
void sqeuclidean_checkpoint_forward(const Problem& p, int64_t band_rows, const T* x, const T* y, T* values,
                                    void* workspace, cudaStream_t stream) {
  require(x, "x");
  require(y, "y");
  checkpoint_forward(p, band_rows, SqEuclideanCost<T, 8, T>{x, y, p.n, p.m, p.dim}, values, workspace, stream);
}

template <typename T>
void sqeuclidean_checkpoint_backward(const Problem& p, int64_t band_rows, const T* x, const T* y, const T* dvalues,
                                     T* grad_x, T* grad_y, void* workspace, cudaStream_t stream,
                                     int64_t dvalues_stride) {
  require(x, "x");
  require(y, "y");
  require(grad_x, "grad_x");
  require(grad_y, "grad_y");
  checkpoint_backward(p, band_rows, SqEuclideanCost<T, 8, T>{x, y, p.n, p.m, p.dim}, dvalues, dvalues_stride,
                      static_cast<T*>(nullptr), workspace, stream,
                      [&](const CheckpointLayout& c, int64_t q, int64_t strip0, const typename CellState<T>::Word* state) {
                        with_feature_tile<T>(p.dim, [&](auto features) {
                          auto* grad_y_sum = reinterpret_cast<double*>(static_cast<char*>(workspace) + c.grad_y_sum);
                          launch_band_jacobian<T, decltype(features)::value>(p, c, q, strip0, state, x, y, grad_x,
                                                                             grad_y, grad_y_sum, stream);
                        });
                      });
}

#define SDTW_INSTANTIATE_CHECKPOINT(T)                                                                               \
  template std::size_t checkpoint_workspace_bytes<T>(const Problem&, int64_t);                                       \
  template int64_t checkpoint_band_rows<T>(const Problem&, std::size_t);                                             \
  template void cost_checkpoint_forward<T>(const Problem&, int64_t, const T*, T*, void*, cudaStream_t);              \
  template void cost_checkpoint_backward<T>(const Problem&, int64_t, const T*, const T*, T*, void*, cudaStream_t,    \
                                            int64_t);                                                                \
  template void sqeuclidean_checkpoint_forward<T>(const Problem&, int64_t, const T*, const T*, T*, void*,            \
                                                  cudaStream_t);                                                     \
  template void sqeuclidean_checkpoint_backward<T>(const Problem&, int64_t, const T*, const T*, const T*, T*, T*,    \
                                                   void*, cudaStream_t, int64_t);
SDTW_INSTANTIATE_CHECKPOINT(float)
SDTW_INSTANTIATE_CHECKPOINT(double)
#undef SDTW_INSTANTIATE_CHECKPOINT

}  // namespace sdtw::kernels
