// The peak estimates of --dry-run and the out-of-memory refusal for the CUDA memory modes, from
// the formula alone (the kernels' workspace unknown, as on a machine without CUDA).
#include <gtest/gtest.h>

#include <algorithm>

#include "memory_estimate.hpp"
#include "point.hpp"

namespace sdtw::bench {
namespace {

Point million_steps(const std::string& impl) {
  Point p;
  p.impl = impl;
  p.device = "cuda";
  p.n = p.m = int64_t{1} << 20;
  p.dim = 8;
  return p;
}

TEST(MemoryEstimate, CheckpointAtAMillionStepsFitsWhereTheFullStateCannot) {
  const double leaves = 2.0 * (2 << 20) * 8 * 4;  // x, y and their gradients
  // Kept rows every 2048 rows (511 of them, float64) and one band of 2048 rows at 4 bytes a cell.
  const double checkpoint = (511.0 * 8 + 2048.0 * 4) * (1 << 20);
  EXPECT_DOUBLE_EQ(estimate_peak_bytes(million_steps("ours_checkpoint"), -1, 1), leaves + checkpoint);
  EXPECT_LT(leaves + checkpoint, 16e9);
  EXPECT_DOUBLE_EQ(estimate_peak_bytes(million_steps("ours_fused"), -1, 1), leaves + 4.0 * (1.0 * (1 << 20) * (1 << 20)));
  EXPECT_EQ(exceeds_capacity(million_steps("ours_checkpoint"), leaves + checkpoint, 80e9), "");
  EXPECT_EQ(exceeds_capacity(million_steps("ours_fused"), 4.4e12, 80e9), "estimated peak 4.0 TiB > 74.5 GiB of GPU memory");
}

TEST(MemoryEstimate, TheLibrarysWorkspaceWinsOverTheFormula) {
  Point p = million_steps("ours_checkpoint");
  p.n = p.m = 1000;
  const double leaves = 2.0 * 2000 * 8 * 4;
  EXPECT_DOUBLE_EQ(estimate_peak_bytes(p, 12345, 1), leaves + 12345);
  // A band taller than n is n rows: no kept row, the whole state.
  EXPECT_DOUBLE_EQ(estimate_peak_bytes(p, -1, 1), leaves + 1000.0 * 1000 * 4);
}

TEST(MemoryEstimate, CheckpointIsACudaImplementationOfItsOwnMode) {
  const auto& known = known_implementations();
  EXPECT_NE(std::find(known.begin(), known.end(), "ours_checkpoint"), known.end());
  EXPECT_EQ(api_and_mode("ours_checkpoint").mode, "checkpoint");
  EXPECT_EQ(default_device("ours_checkpoint"), "cuda");
}

}  // namespace
}  // namespace sdtw::bench
