// End to end on the CPU: profile, eval, compare and merge refuse bad sizes, counts, tolerances and
// files with an error naming the option, the value and the constraint, before any work.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "cli_fixture.hpp"
#include "csv.hpp"

using namespace sdtw::bench;

namespace {

using BenchCli = sdtw::bench::test_support::BenchCliFixture;
namespace fs = std::filesystem;

// A refusal: a nonzero exit status that is not a signal's, every expected fragment in the output,
// no C++ backtrace and no number longer than 30 digits (a range printed up to DBL_MAX).
void expect_refused(int rc, const std::string& out, const std::vector<std::string>& fragments) {
  EXPECT_TRUE(rc > 0 && rc < 128) << rc << ": " << out;
  for (const auto& f : fragments) EXPECT_NE(out.find(f), std::string::npos) << "missing '" << f << "' in: " << out;
  EXPECT_EQ(out.find("frame #"), std::string::npos) << out;
  EXPECT_FALSE(std::regex_search(out, std::regex("[0-9]{30}"))) << out;
}

}  // namespace

TEST_F(BenchCli, ProfileRefusesBadSizesAndCounts) {
  const std::string base = "profile --impl reference_cpu -N 4 -D 1 ";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"-B 0", {"--batch", "must be an integer >= 1", "0"}},
      {"-B -5", {"--batch", "must be an integer >= 1", "-5"}},
      {"-M -3", {"-M", "must be an integer >= 1", "-3"}},
      {"-N 0", {"-N", "must be an integer >= 1", "0"}},
      {"-D 0", {"--dim", "must be an integer >= 1"}},
      {"--reps 0", {"--reps", "must be an integer >= 1", "0"}},
      {"--reps -1", {"--reps", "must be an integer >= 1"}},
      {"--warmup -1", {"--warmup", "must be an integer >= 0", "-1"}},
      {"--seed -1", {"--seed", "must be an integer >= 0", "-1"}},
      {"-B 99999999999999999999", {"--batch", "fits in 64 bits"}},
      {"-B x", {"--batch", "must be an integer >= 1", "'x'"}},
      {"--impl bogus", {"--impl", "bogus", "reference_cpu", "ours_cpu", "maghoumi"}},
      {"--bandwidth nan", {"--bandwidth", "must be a number"}},
      {"--device cuda", {"--device cuda", "CUDA"}},
  };
  // With no GPU visible, as in CI: where one is, --device cuda is refused for reference_cpu instead.
  for (const auto& [args, fragments] : cases) {
    SCOPED_TRACE(args);
    expect_refused(bench(base + args, "CUDA_VISIBLE_DEVICES="), out, fragments);
    EXPECT_EQ(out.find("rep 1:"), std::string::npos) << out;
  }
  // A point far larger than the machine: refused with the sweep's estimate, nothing allocated.
  expect_refused(bench("profile --impl ours_cpu --device cpu -B 300000000 -N 1000 -D 1"), out,
                 {"B=300000000 N=1000 M=1000", "estimated peak", "iB > ", "of host memory", "reduce -B, -N, -M or -D"});
  // -M defaults to N; a fraction of a band is floored, 1e30 is no band (as in sdtw_torch).
  ASSERT_EQ(bench(base + "-B 1 --reps 1 --warmup 0"), 0) << out;
  EXPECT_NE(out.find("N=4 M=4"), std::string::npos) << out;
  EXPECT_NE(out.find("rep 1:"), std::string::npos) << out;
  ASSERT_EQ(bench(base + "-B 1 --reps 1 --warmup 0 --bandwidth 1e30"), 0) << out;
  EXPECT_EQ(out.find("band"), std::string::npos) << out;
}

TEST_F(BenchCli, EvalNamesImplDeviceAndOutputFolder) {
  std::ofstream(p("x.csv")) << "0\n3\n1\n4\n";
  std::ofstream(p("y.csv")) << "1\n0\n4\n";
  const std::string xy = "eval " + p("x.csv") + " " + p("y.csv");
  expect_refused(bench(xy + " --impl bogus"), out, {"--impl", "bogus", "reference_cpu", "ours_cpu"});
  expect_refused(bench(xy + " --device cuda", "CUDA_VISIBLE_DEVICES="), out, {"--device cuda"});
  EXPECT_TRUE(out.find("built without CUDA") != std::string::npos || out.find("no CUDA device") != std::string::npos)
      << out;
  EXPECT_EQ(out.find("runs on the CPU only"), std::string::npos) << out;
  expect_refused(bench(xy + " --grad --grad-x-out " + p("missing/g.csv")), out,
                 {"--grad-x-out", "folder " + p("missing") + " does not exist"});
  expect_refused(bench(xy + " --grad-y-out " + p("g.csv")), out, {"--grad-y-out", "--grad"});
  fs::create_directories(p("folder"));
  expect_refused(bench(xy + " --grad --grad-x-out " + p("folder")), out,
                 {"--grad-x-out", "must name a regular file", p("folder")});
  // A band wider than any series is no band, as in the Python API; NaN is refused.
  ASSERT_EQ(bench(xy + " --impl reference_cpu"), 0) << out;
  const std::string none = out;
  ASSERT_EQ(bench(xy + " --impl reference_cpu --bandwidth 1e30"), 0) << out;
  EXPECT_EQ(out, none);
  ASSERT_EQ(bench(xy + " --impl reference_cpu --bandwidth inf"), 0) << out;
  EXPECT_EQ(out, none);
  expect_refused(bench(xy + " --bandwidth nan"), out, {"--bandwidth", "must be a number", "nan"});
}

TEST_F(BenchCli, EvalRefusesBadLibraryOptionsByName) {
  std::ofstream(p("x.csv")) << "0\n3\n1\n4\n";
  std::ofstream(p("y.csv")) << "1\n0\n4\n";
  const std::string xy = "eval " + p("x.csv") + " " + p("y.csv");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--dist cityblock", {"--dist", "cityblock", "sqeuclidean", "euclidean", "cosine", "l1", "negative_dot"}},
      {"--global-constraint band", {"--global-constraint", "band", "sakoe_chiba", "itakura"}},
      {"--sakoe-chiba-radius -1", {"--sakoe-chiba-radius", "must be an integer >= 0", "-1"}},
      {"--sakoe-chiba-radius 1.5", {"--sakoe-chiba-radius", "must be an integer >= 0", "'1.5'"}},
      {"--itakura-max-slope 0", {"--itakura-max-slope", "must be a finite number > 0", "0"}},
      {"--itakura-max-slope inf", {"--itakura-max-slope", "must be a finite number > 0", "inf"}},
      {"--warp nan", {"--warp", "must be a finite number", "nan"}},
      {"--warp x", {"--warp", "must be a finite number", "'x'"}},
      // Combinations are the library's to refuse; its message names both keywords.
      {"--global-constraint itakura --sakoe-chiba-radius 1", {"sakoe_chiba_radius", "itakura"}},
  };
  for (const auto& [args, fragments] : cases) {
    SCOPED_TRACE(args);
    expect_refused(bench(xy + " " + args), out, fragments);
    EXPECT_EQ(out.find("sdtw = "), std::string::npos) << out;
  }
  // The implementations outside the library name the option, its value and themselves.
  for (const char* impl : {"reference_cpu", "maghoumi"})
    for (const char* option : {"--dist l1", "--global-constraint itakura", "--sakoe-chiba-radius 0",
                               "--itakura-max-slope 3", "--warp 0.5", "--subsequence"}) {
      SCOPED_TRACE(std::string(impl) + " " + option);
      expect_refused(bench(xy + " --impl " + impl + " " + option), out,
                     {"--impl " + std::string(impl), impl + std::string(" does not take ") + option, "ours_cpu"});
    }
}

TEST_F(BenchCli, CompareRefusesBadTolerancesAndFilesWithoutRows) {
  const std::string cfg = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";
  ASSERT_EQ(bench("--sweep " + cfg + " --out " + p("r") + " --limit 2 --no-table"), 0) << out;
  const std::string a = p("r/ci.csv");
  for (const char* bad : {"-1", "nan", "inf", "x"}) {
    expect_refused(bench("compare " + a + " " + a + " --mem-tol " + bad), out, {"--mem-tol", "finite number >= 0", bad});
    expect_refused(bench("compare " + a + " " + a + " --margin " + bad), out, {"--margin", "finite number >= 0", bad});
  }
  std::ofstream(p("empty.csv")) << "";
  expect_refused(bench("compare " + a + " " + p("empty.csv") + " --fail-on-slower"), out,
                 {p("empty.csv"), "not an sdtw-bench results file", "empty"});
  // The header alone: a file of the right kind with no rows fails the gate too.
  std::ofstream(p("header.csv")) << read_file(a).substr(0, read_file(a).find('\n') + 1);
  expect_refused(bench("compare " + a + " " + p("header.csv") + " --fail-on-slower"), out,
                 {p("header.csv") + ": no result rows to compare"});
  std::ofstream(p("broken.json")) << "{\"columns\": [\"impl\"], \"rows\": [";
  expect_refused(bench("table " + p("broken.json")), out, {p("broken.json") + ": not an sdtw-bench results file"});
  std::ofstream(p("other.csv")) << "a,b\n1,2\n";
  expect_refused(bench("compare " + a + " " + p("other.csv")), out, {p("other.csv") + ": not an sdtw-bench results file"});
  ASSERT_EQ(bench("compare " + a + " " + a + " --fail-on-slower"), 0) << out;
}

TEST_F(BenchCli, MergeRefusesItsInputAsOutput) {
  const std::string cfg = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";
  ASSERT_EQ(bench("--sweep " + cfg + " --out " + p("r") + " --limit 2 --no-table"), 0) << out;
  const std::string a = p("r/ci.csv"), before = read_file(a);
  fs::copy_file(a, p("b.csv"));
  expect_refused(bench("merge " + p("b.csv") + " " + a + " -o " + p("r/../r/ci.csv")), out,
                 {"is input 2", "merge never rewrites its inputs"});
  EXPECT_EQ(read_file(a), before);
  std::ofstream(p("empty.csv")) << "";
  expect_refused(bench("merge " + p("empty.csv") + " -o " + p("out.csv")), out, {p("empty.csv"), "the file is empty"});
  EXPECT_EQ(out.find("--fresh"), std::string::npos) << out;
}

TEST_F(BenchCli, LimitAndShardOutOfRangeAreNamed) {
  const std::string cfg = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";
  expect_refused(bench("sweep " + cfg + " --out " + p("r") + " --limit -1"), out, {"--limit", "must be an integer >= 0"});
  expect_refused(bench("sweep " + cfg + " --out " + p("r") + " --shard 2147483648/2147483649"), out,
                 {"--shard", "at most 2147483647", "2147483648/2147483649"});
  std::ofstream(p("file")) << "";
  expect_refused(bench("sweep " + cfg + " --out " + p("file") + " --limit 1"), out,
                 {"--out " + p("file") + ": exists and is not a folder"});
  expect_refused(bench("merge " + p("file") + " -o " + p("file/m.csv")), out,
                 {"cannot create folder " + p("file") + " for " + p("file/m.csv")});
  EXPECT_FALSE(fs::exists(p("r/ci.csv")));
}
