#pragma once
// Checkpointed soft-DTW: the gradient in memory O(B (n / S) m + B S m) instead of the full state's
// 4.25 bytes per DP cell (docs/DESIGN.md §3.4.1). The rows are cut into bands of S rows. The forward
// (values only, no state) keeps R of each band's last row in float64. The backward, band by band
// from the bottom, recomputes the band's state from the kept row above it with the full-state
// forward's per-cell arithmetic, then runs the full-state backward on it, seeded with the products
// E(s) w(s <- c) that the band below handed up. Values and E equal the full-state kernels' bit for
// bit; the fused gradient sums the bands' shares of grad_y in float64, so it agrees to rounding.
//
// Same conventions as soft_dtw.hpp: raw device pointers, one stream, a caller-provided workspace
// (kept alive and untouched from the forward to the backward), no allocation and no host sync, so
// both calls are capturable in a CUDA graph. The backward needs the forward's inputs again (it
// recomputes R). Pair indices (x_index, y_index) are not supported.
#include <cstddef>
#include <cstdint>

#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels {

// Band heights are multiples of this many rows (the strips' 32 and the gradient's row blocks).
constexpr int64_t kCheckpointRowQuantum = 128;

// Bytes of workspace for bands of band_rows rows (a positive multiple of kCheckpointRowQuantum;
// throws std::invalid_argument otherwise). T = float or double.
template <typename T>
std::size_t checkpoint_workspace_bytes(const Problem& problem, int64_t band_rows);

// The tallest band, kCheckpointRowQuantum times a power of two and no taller than n needs, whose
// workspace fits in budget bytes; 0 when none does. Taller bands mean fewer, better-filled launches.
template <typename T>
int64_t checkpoint_band_rows(const Problem& problem, std::size_t budget);

template <typename T>
void cost_checkpoint_forward(const Problem& problem, int64_t band_rows, const T* D, T* values, void* workspace,
                             cudaStream_t stream);
template <typename T>
void cost_checkpoint_backward(const Problem& problem, int64_t band_rows, const T* D, const T* dvalues, T* E,
                              void* workspace, cudaStream_t stream, int64_t dvalues_stride = 1);

template <typename T>
void sqeuclidean_checkpoint_forward(const Problem& problem, int64_t band_rows, const T* x, const T* y, T* values,
                                    void* workspace, cudaStream_t stream);
template <typename T>
void sqeuclidean_checkpoint_backward(const Problem& problem, int64_t band_rows, const T* x, const T* y,
                                     const T* dvalues, T* grad_x, T* grad_y, void* workspace, cudaStream_t stream,
                                     int64_t dvalues_stride = 1);

}  // namespace sdtw::kernels
