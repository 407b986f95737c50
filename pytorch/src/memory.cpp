#include "memory.hpp"

#include <c10/util/Exception.h>

#include <cstdio>

namespace sdtw::ops::detail {
namespace {

constexpr int64_t kFirstBand = 128;  // sdtw::kernels::kCheckpointRowQuantum

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GB", bytes / 1e9);
  return text;
}

}  // namespace

std::pair<int64_t, int64_t> least_checkpoint(const MemoryNeeds& needs) {
  int64_t best_bytes = -1, best_rows = 0;
  for (int64_t rows = kFirstBand;; rows *= 2) {
    const int64_t bytes = needs.checkpoint_bytes(rows);
    if (bytes >= 0 && (best_bytes < 0 || bytes < best_bytes)) {
      best_bytes = bytes;
      best_rows = rows;
    }
    if (rows >= needs.n) return {best_bytes, best_rows};
  }
}

std::string canonical_memory(c10::string_view memory) {
  const std::string text(memory.data(), memory.size());
  TORCH_CHECK_VALUE(text == "auto" || text == "full" || text == "checkpoint",
                    "memory must be 'auto', 'full' or 'checkpoint' (got '", text, "')");
  return text;
}

int64_t tallest_band(const MemoryNeeds& needs, double budget) {
  int64_t best = 0;
  for (int64_t rows = kFirstBand;; rows *= 2) {
    const int64_t bytes = needs.checkpoint_bytes(rows);
    if (bytes >= 0 && static_cast<double>(bytes) <= budget) best = rows;
    if (rows >= needs.n) return best;
  }
}

MemoryPlan plan_memory(const std::string& memory, const MemoryNeeds& needs, int64_t free_bytes) {
  if (memory == "full") return {false, 0};
  const double budget = kMemoryShare * static_cast<double>(free_bytes);
  if (memory == "auto" && static_cast<double>(needs.full_bytes) <= budget) return {false, 0};
  const int64_t rows = tallest_band(needs, budget);
  if (rows > 0) return {true, rows};
  const auto [least, least_rows] = least_checkpoint(needs);
  TORCH_CHECK(false, "sdtw: memory='", memory, "': batch ", needs.batch, ", N = ", needs.n, ", M = ", needs.m,
              " fits in neither mode: the full state needs ", gigabytes(static_cast<double>(needs.full_bytes)),
              ", the checkpointed mode at least ",
              least < 0 ? std::string("(not available)") : gigabytes(static_cast<double>(least)) + " (bands of " +
                                                                std::to_string(least_rows) + " rows)",
              ", against ", gigabytes(budget), " (", kMemoryShare * 100, " % of the ",
              gigabytes(static_cast<double>(free_bytes)), " free on the device)");
}

}  // namespace sdtw::ops::detail
