// Recomputes every fixture of golden/ from its stored inputs and compares with its stored outputs.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "golden_format.hpp"
#include "test_support.hpp"

namespace sdtw::test {
namespace {

std::vector<std::string> golden_files() {
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(SDTW_GOLDEN_DIR)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(SDTW_GOLDEN_DIR))
    if (entry.path().extension() == ".txt") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

GoldenCase load(const std::string& stem) {
  std::ifstream in(std::filesystem::path(SDTW_GOLDEN_DIR) / (stem + ".txt"));
  if (!in) throw std::runtime_error("cannot open golden file " + stem);
  return read_golden(in);
}

TEST(Golden, FixturesArePresent) { EXPECT_GE(golden_files().size(), 10u) << "in " << SDTW_GOLDEN_DIR; }

class GoldenCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenCaseTest, RecomputesToStoredOutputs) {
  const GoldenCase stored = load(GetParam());
  EXPECT_EQ(stored.name, GetParam());
  GoldenCase now = stored;
  compute_outputs(now);
  // The same build reproduces the files bit for bit; 1e-12 leaves room for another libm or compiler
  // (the generator scales the inputs of small-gamma cases so that E is well conditioned).
  constexpr double tol = 1e-12;
  EXPECT_TRUE(close(now.value, stored.value, tol));
  EXPECT_TRUE(close(now.E, stored.E, tol));
  EXPECT_TRUE(close(now.grad_x, stored.grad_x, tol));
  EXPECT_TRUE(close(now.grad_y, stored.grad_y, tol));
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenCaseTest, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace_if(name.begin(), name.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenCaseTest);

}  // namespace
}  // namespace sdtw::test
