#pragma once
// The loss's memory mode: the full state (4.25 bytes per DP cell, the fastest backward) or the
// checkpointed one (sdtw/kernels/checkpoint.hpp: kept rows of R and one band's state, one more
// forward of work). "auto" takes the full state when it fits in kMemoryShare of the device's free
// memory, else the checkpointed mode with the tallest band that fits there. The CPU keeps its own
// path whatever the mode (the argument is still validated).
#include <ATen/ATen.h>
#include <c10/util/string_view.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace sdtw::ops::detail {

// The share of the device's free memory that "auto" (and "checkpoint"'s band) may plan to fill:
// the rest is left for the caller's activations and the allocator's rounding.
constexpr double kMemoryShare = 0.9;

// "auto", "full" or "checkpoint"; another value is a ValueError naming it.
std::string canonical_memory(c10::string_view memory);

struct MemoryPlan {
  bool checkpoint = false;
  int64_t band_rows = 0;  // rows per band of the checkpointed mode
};

// What the plan needs to know of one problem: its sizes (for the error), the full state's bytes,
// and the checkpointed workspace's bytes for a band of rows (< 0: the mode is not available).
struct MemoryNeeds {
  int64_t batch = 1, n = 1, m = 1;
  int64_t full_bytes = 0;
  std::function<int64_t(int64_t band_rows)> checkpoint_bytes;
};

// Bands the checkpointed mode considers: 128 rows times a power of two, up to the first >= n.
// Returns the tallest whose bytes fit in budget, or 0.
int64_t tallest_band(const MemoryNeeds& needs, double budget);
// The least bytes any of those bands needs (-1: none is available) and that band.
std::pair<int64_t, int64_t> least_checkpoint(const MemoryNeeds& needs);

// The plan for memory (canonical_memory's values) with free_bytes free on the device. "full" is
// taken as asked; "checkpoint" and "auto" raise an error naming the sizes and each mode's bytes
// when nothing fits in kMemoryShare of free_bytes.
MemoryPlan plan_memory(const std::string& memory, const MemoryNeeds& needs, int64_t free_bytes);

// Bytes of the checkpointed workspace (sdtw::kernels::checkpoint_workspace_bytes) for bands of
// band_rows rows; -1 without CUDA or for a problem the kernels reject.
int64_t cuda_checkpoint_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth, bool is_double,
                              int64_t band_rows);
// Bytes a new allocation on the device can take: the driver's free memory plus what torch's caching
// allocator holds unused; -1 without CUDA.
int64_t cuda_free_bytes(const at::Device& device);

// soft-DTW of x and y (the fused squared-Euclidean cost) or of a cost tensor D, differentiable, in
// the memory mode `memory` (canonical_memory's values; the CPU's path for CPU tensors).
at::Tensor soft_dtw_sqeuclidean_memory(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                       const c10::optional<at::Tensor>& x_lengths,
                                       const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
                                       double itakura_max_slope, const std::string& memory);
at::Tensor soft_dtw_cost_memory(const at::Tensor& D, double gamma, int64_t bandwidth,
                                const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                                int64_t sakoe_chiba_radius, double itakura_max_slope, const std::string& memory);

}  // namespace sdtw::ops::detail
