#include "workspace.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "errors.hpp"

namespace sdtw::kernels::detail {
namespace {

constexpr int64_t kRows = 32;

}  // namespace

void validate(const Problem& p) {
  if (p.batch < 1) fail("batch must be >= 1 (got ", p.batch, ")");
  if (p.n < 1) fail("n (length of x) must be >= 1 (got ", p.n, ")");
  if (p.m < 1) fail("m (length of y) must be >= 1 (got ", p.m, ")");
  if (p.dim < 1) fail("dim must be >= 1 (got ", p.dim, ")");
  if (!(p.gamma >= 0.0) || !std::isfinite(p.gamma)) fail("gamma must be finite and >= 0 (got ", p.gamma, ")");
  if (p.n > std::numeric_limits<int>::max() - 64) fail("n must be < 2^31 - 64 (got ", p.n, ")");
  if (p.m > std::numeric_limits<int>::max() - 64) fail("m must be < 2^31 - 64 (got ", p.m, ")");
  if (p.bandwidth >= 0 && !p.x_len && !p.y_len && std::llabs(p.n - p.m) > p.bandwidth)
    fail("bandwidth ", p.bandwidth, " leaves no alignment path for n = ", p.n, ", m = ", p.m,
         ": it needs bandwidth >= |n - m|");
  effective_constraint(p.bandwidth, p.constraint, p.n, p.m, p.x_len || p.y_len);
}

WorkspaceLayout workspace_layout(const Problem& p, std::size_t state_word, std::size_t ring_column,
                                 int64_t max_ring_slots) {
  validate(p);
  WorkspaceLayout w;
  w.strips = (p.n + kRows - 1) / kRows;
  const int64_t total_strips = p.batch * w.strips;
  // A reader finishes about m + 32 steps after it starts and strips of a pair start at least 32
  // steps apart, so m / 32 + 2 slots per pair keep writers from waiting in a full pipeline. The
  // last strip in either direction's order feeds no other, so strips - 1 slots hold every border.
  w.ring_slots = std::max<int64_t>(1, std::min({w.strips - 1, (p.m + kRows - 1) / kRows + 2, max_ring_slots}));
  // Strips overlap by 31 steps (state_index in forward.cuh): the last one alone needs them.
  const std::size_t state_bytes =
      (static_cast<std::size_t>(total_strips) * static_cast<std::size_t>(p.m) + kRows - 1) * kRows * state_word;
  w.state = 0;
  w.ticket = aligned_bytes(state_bytes);
  w.progress = w.ticket + kRegionAlign;
  w.tile_claims = w.progress + aligned_bytes(2 * static_cast<std::size_t>(total_strips) * sizeof(int));
  const std::size_t tiles = state_word ? static_cast<std::size_t>(total_strips) * static_cast<std::size_t>(tiles_per_strip(p.m)) : 0;
  w.ring = w.tile_claims + aligned_bytes(tiles * sizeof(unsigned));
  w.total = w.ring + aligned_bytes(static_cast<std::size_t>(p.batch * w.ring_slots) * static_cast<std::size_t>(p.m) *
                                   ring_column);
  return w;
}

}  // namespace sdtw::kernels::detail
