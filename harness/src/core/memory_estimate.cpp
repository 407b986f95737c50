#include "memory_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sdtw::bench {

double estimate_peak_bytes(const Point& p, double cuda_state_bytes, int threads) {
  const double B = static_cast<double>(p.batch), N = static_cast<double>(p.n), M = static_cast<double>(p.m),
               D = static_cast<double>(p.dim);
  const double e = p.dtype == "float64" ? 8 : 4;
  // A divergence solves (x, y), (x, x) and (y, y).
  const double cells = B * (N * M + (p.normalize ? N * N + M * M : 0));
  const double pair_cells = std::max({N * M, p.normalize ? N * N : 0, p.normalize ? M * M : 0});  // largest call
  const double leaves = 2 * B * (N + M) * D * e;  // x, y and their gradients
  const double pairs_at_once = std::max(1.0, std::min(B, static_cast<double>(threads)));
  if (p.impl == "reference_cpu") {
    // One pair per thread: D, R, the 1-based E and the E block it returns, in float64 (Eigen),
    // the gradient rows beside them.
    return leaves + B * (N + M) * D * 16 + pairs_at_once * pair_cells * 4 * 8;
  }
  if (p.impl == "maghoumi") {
    // Costs by broadcasting: the (B, N, M, D) difference kept for the backward, its square, and
    // the gradient through them; D, R, E, the padded backward copy and the cost gradient are
    // (B, N, M) each.
    const double broadcast = B * N * M * D * e * (p.normalize ? 3 : 1);
    return leaves + 3 * broadcast + 5 * cells * e;
  }
  if (p.device == "cpu") {
    // ours_cpu runs the float64 reference on a (B, N, M) cost tensor: D, E kept for the backward,
    // the reference's own E copy, and E scaled in the backward, 8 bytes each.
    const double broadcast = B * N * M * D <= double(1 << 23) ? B * N * M * D * 8 : 0;
    return leaves + cells * 4 * 8 + broadcast;
  }
  const auto checkpointed = [&](double n, double m) {
    const double rows = std::min(n, kCheckpointEstimateRows);
    return B * m * (8 * std::ceil(n / rows - 1) + rows * (e == 8 ? 16 : 4));
  };
  const double fallback = p.impl == "ours_checkpoint"
                              ? checkpointed(N, M) + (p.normalize ? checkpointed(N, N) + checkpointed(M, M) : 0)
                              : cells * (e == 8 ? 16 : 4);
  const double state = cuda_state_bytes >= 0 ? cuda_state_bytes : fallback;
  // Unfused: besides the kernels' state, one cost-sized tensor at a time: D until its forward ends
  // (the loss node keeps D's shape, not D), then E in the backward (one kernel: no cuBLAS workspace).
  const double unfused = p.impl == "ours_unfused" ? B * pair_cells * e : 0;
  return leaves + state + unfused;
}

std::string exceeds_capacity(const Point& p, double estimate_bytes, double capacity_bytes) {
  if (capacity_bytes <= 0 || !(estimate_bytes > capacity_bytes)) return "";
  return "estimated peak " + format_bytes(estimate_bytes) + " > " + format_bytes(capacity_bytes) + " of " +
         (p.device == "cuda" ? "GPU" : "host") + " memory";
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace sdtw::bench
