// The memory-mode choice (pytorch/src/memory.cpp) on made-up sizes: no GPU needed.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include "../src/memory.hpp"

namespace sdtw::ops::detail {
namespace {

// A checkpointed workspace shaped like the kernels' (kept float64 rows every S rows, a band of S
// rows at 4 bytes a cell), for a batch of 1 at n = m = 2^20: 12.88 GB at S = 1024 and 2048, 19.3 GB
// at 512 and 4096, 69.2 GB at 16384; the full state 4.4 TB.
MemoryNeeds million_steps() {
  MemoryNeeds needs;
  needs.n = needs.m = int64_t{1} << 20;
  needs.full_bytes = (int64_t{1} << 40) * 4;
  needs.checkpoint_bytes = [](int64_t rows) {
    const int64_t m = int64_t{1} << 20, kept = ((int64_t{1} << 20) / rows - 1) * m * 8;
    return kept + rows * m * 4;
  };
  return needs;
}

std::string message_of(const std::string& memory, const MemoryNeeds& needs, int64_t free_bytes) {
  try {
    plan_memory(memory, needs, free_bytes);
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  }
  return "no error";
}

TEST(MemoryMode, NamesAreCheckedAndKept) {
  for (const char* name : {"auto", "full", "checkpoint"}) EXPECT_EQ(canonical_memory(name), name);
  try {
    canonical_memory("low");
    FAIL() << "no error";
  } catch (const c10::ValueError& e) {
    EXPECT_NE(std::string(e.what_without_backtrace()).find("memory must be 'auto', 'full' or 'checkpoint' (got 'low')"),
              std::string::npos);
  }
}

TEST(MemoryMode, AutoTakesTheFullStateWhenItFits) {
  MemoryNeeds needs = million_steps();
  needs.full_bytes = 1000;
  EXPECT_FALSE(plan_memory("auto", needs, 1112).checkpoint);  // 90 % of 1112 is 1000.8
  EXPECT_NE(message_of("auto", needs, 1110).find("fits in neither mode"), std::string::npos);  // 999
}

TEST(MemoryMode, AutoTakesTheTallestBandThatFits) {
  const MemoryNeeds needs = million_steps();
  const MemoryPlan plan = plan_memory("auto", needs, 80'000'000'000);  // 72 GB: bands up to 16384 rows fit
  EXPECT_TRUE(plan.checkpoint);
  EXPECT_EQ(plan.band_rows, 16384);
  EXPECT_EQ(plan_memory("auto", needs, 16'000'000'000).band_rows, 2048);  // 14.4 GB: 1024 and 2048 fit
  EXPECT_EQ(tallest_band(needs, 12.8e9), 0);
}

TEST(MemoryMode, FullAndCheckpointAreTakenAsAsked) {
  MemoryNeeds needs = million_steps();
  EXPECT_FALSE(plan_memory("full", needs, 1).checkpoint);
  needs.full_bytes = 10;
  const MemoryPlan plan = plan_memory("checkpoint", needs, 80'000'000'000);
  EXPECT_TRUE(plan.checkpoint);
  EXPECT_EQ(plan.band_rows, 16384);
}

TEST(MemoryMode, NeitherFittingNamesTheSizesAndBothModes) {
  const MemoryNeeds needs = million_steps();
  const std::string msg = message_of("auto", needs, 10'000'000'000);
  EXPECT_NE(msg.find("N = 1048576, M = 1048576"), std::string::npos) << msg;
  EXPECT_NE(msg.find("full state needs 4398.05 GB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("checkpointed mode at least 12.88 GB (bands of 1024 rows)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("against 9.00 GB"), std::string::npos) << msg;
  EXPECT_NE(message_of("checkpoint", needs, 10'000'000'000).find("memory='checkpoint'"), std::string::npos);
}

TEST(MemoryMode, ACheckpointThatIsNotAvailableSaysSo) {
  MemoryNeeds needs = million_steps();
  needs.checkpoint_bytes = [](int64_t) { return int64_t{-1}; };
  EXPECT_NE(message_of("auto", needs, 1000).find("(not available)"), std::string::npos);
}

}  // namespace
}  // namespace sdtw::ops::detail
