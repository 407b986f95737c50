#pragma once
// Layout of the caller's workspace: the saved state (kept from forward to backward; none for the
// values-only forward) first, then the scratch (tickets, per-strip counters, the forward's cost-tile
// claims) and the ring of strip borders, all zeroed before every forward. Every launch leaves the
// tickets, counters and ring zero; the tile claims stay set until the next forward's memset, which
// a forward therefore cannot skip (no warp would stage a claimed tile, and its strip would wait).
#include <cstddef>
#include <cstdint>

#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels::detail {

// Cost tiles (32 x 32) of a strip of m columns: the forward's tile claims and its chunks.
constexpr int64_t tiles_per_strip(int64_t m) { return (m + 31) / 32; }

struct WorkspaceLayout {
  int64_t strips = 0;      // per pair
  int64_t ring_slots = 0;  // border slots per pair
  std::size_t state = 0;   // offsets in bytes
  std::size_t ticket = 0;
  std::size_t progress = 0;  // per strip (batch * strips each): progress, then cost tiles staged
  std::size_t tile_claims = 0;  // per cost tile of the saved state (batch * strips * ceil(m / 32)); none without state
  std::size_t ring = 0;
  std::size_t total = 0;
};

// Every region of a workspace starts 256-byte aligned: bytes rounded up to that.
constexpr std::size_t kRegionAlign = 256;
constexpr std::size_t aligned_bytes(std::size_t bytes) {
  return (bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign;
}

// state_word: bytes per cell of saved state; ring_column: bytes per column of a border slot;
// max_ring_slots caps the slots per pair (fewer strips in flight, less memory: checkpointing).
WorkspaceLayout workspace_layout(const Problem& p, std::size_t state_word, std::size_t ring_column,
                                 int64_t max_ring_slots = INT64_MAX);

// Throws std::invalid_argument naming the parameter that breaks its constraint.
void validate(const Problem& p);

}  // namespace sdtw::kernels::detail
