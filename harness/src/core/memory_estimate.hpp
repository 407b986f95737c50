#pragma once
// Predicted peak memory of one point, so a point that cannot fit is recorded as out_of_memory
// before anything is allocated, and --dry-run can show what each point will need.
#include <cstdint>
#include <string>

#include "point.hpp"

namespace sdtw::bench {

// Bytes at the peak of one timed step on the point's device (host memory for CPU points): the
// leaf inputs and their gradients plus what the implementation keeps per DP cell.
// `cuda_state_bytes`: the kernels' workspace for the problem (kernels::workspace_bytes, or for
// ours_checkpoint kernels::checkpoint_workspace_bytes at the band sdtw_torch picks) when known,
// else < 0 (then 4 bytes per cell for float32, 16 for float64, as the kernels store; for
// ours_checkpoint float64 rows every kCheckpointEstimateRows rows and a band of as many rows' state).
// `threads`: CPU threads working on pairs at once (the reference keeps one pair per thread).
double estimate_peak_bytes(const Point& p, double cuda_state_bytes, int threads);
constexpr double kCheckpointEstimateRows = 2048;

// Why the point cannot run: "estimated peak 3.0 TiB > 23.4 GiB of host memory" (GPU memory for
// CUDA points); empty when it fits or the capacity is unknown (<= 0).
std::string exceeds_capacity(const Point& p, double estimate_bytes, double capacity_bytes);

// "512 B", "3.2 MiB", "29.1 TiB".
std::string format_bytes(double bytes);

}  // namespace sdtw::bench
