#pragma once
// The measurement method of docs/DESIGN.md §5 (the seed paper's): each step makes fresh leaf
// copies of x and y on the device (requires_grad), runs sum(sdtw(x, y)).backward(); `s.warmup`
// untimed steps, and more until they have taken `s.warmup_min_ms` (a point right after an idle
// spell or at process start otherwise times clock ramp-up and lazy module loading), then `s.reps`
// timed steps, each timed on its own with CUDA events on the current
// stream (GPU) or std::chrono::steady_clock (CPU). Only forward + sum + backward are inside the
// timed region; the copies are made before it. Memory, from the caching allocator's allocated bytes
// (the leaf inputs, their gradients and every workspace count; the host-side originals do not), in
// MiB, none on the CPU: the step's peak is the peak of a timed step (copies included) minus what was
// allocated just before it, the largest over the timed steps; the absolute peak is the peak since
// the point started (warm-up included), what was allocated before a step counted too.
#include <ATen/ATen.h>

#include <optional>
#include <vector>

#include "core/config.hpp"
#include "core/point.hpp"
#include "torch/implementation.hpp"

namespace sdtw::bench {

struct Measurement {
  std::vector<double> times_ms;
  double median_ms = 0, p10_ms = 0, p90_ms = 0;  // nearest rank
  int warmup_steps = 0;
  std::optional<double> step_peak_mib, abs_peak_mib;
  at::Tensor values, grad_x, grad_y;  // from the last timed step, on the CPU
};

Measurement measure(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host,
                    const Settings& s);

// Synchronizes and releases cached device memory and the cuBLAS workspaces between points, so that
// one point's cache does not look like the next one's out-of-memory and the next point's peak
// starts from what a fresh process holds (nothing of an earlier implementation's).
void release_device_memory(const Point& p);

}  // namespace sdtw::bench
