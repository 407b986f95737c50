// End to end through the sdtw-bench executable on the CPU: a real sweep killed with SIGKILL and
// resumed, --limit + a torn row, shards merged equal the whole, compare, the metadata, --help,
// config errors, eval.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cli_fixture.hpp"
#include "csv.hpp"
#include "row.hpp"
#include "table_support.hpp"

using namespace sdtw::bench;
using sdtw::bench::test_support::row_keys;

namespace {

const std::string kConfigs = SDTW_BENCH_CONFIGS;
using BenchCli = sdtw::bench::test_support::BenchCliFixture;
using sdtw::bench::test_support::kExe;
namespace fs = std::filesystem;

size_t points_in(BenchCli& c, const std::string& config) {
  EXPECT_EQ(c.bench("--sweep " + config + " --dry-run"), 0) << c.out;
  return static_cast<size_t>(std::count(c.out.begin(), c.out.end(), '\n') - 1);
}

void expect_complete(const Table& t, size_t n) {
  ASSERT_EQ(t.rows.size(), n);
  const auto k = row_keys(t);
  EXPECT_EQ(std::set<std::string>(k.begin(), k.end()).size(), n) << "duplicate rows";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& d = t.at(r, "disposition");
    EXPECT_TRUE(d == "passed" || d == "not_supported") << t.at(r, "impl") << " N=" << t.at(r, "N") << ": " << d << " "
                                                        << t.at(r, "message");
  }
}

}  // namespace

TEST_F(BenchCli, HelpForEverySubcommand) {
  EXPECT_EQ(bench("--help"), 0);
  EXPECT_NE(out.find("--sweep"), std::string::npos);
  for (const char* sub : {"sweep", "check", "profile", "compare", "eval", "merge", "table", "list"}) {
    EXPECT_EQ(bench(std::string(sub) + " --help"), 0) << sub;
    EXPECT_NE(out.find(sub), std::string::npos) << out;
  }
  EXPECT_EQ(bench("list"), 0);
  EXPECT_NE(out.find("reference_cpu"), std::string::npos);
}

TEST_F(BenchCli, ConfigErrorNamesLineAndKey) {
  std::ofstream(p("bad.yaml")) << "grids:\n  - impl: reference_cpu\n    B: 1\n    N: 8\n    D: 1\n    gama: 2\n";
  EXPECT_EQ(bench("--sweep " + p("bad.yaml") + " --out " + p("o")), 2);
  EXPECT_NE(out.find("bad.yaml:6: key 'gama'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(p("o/bad.csv")));
}

TEST_F(BenchCli, LimitThenTornRowThenResume) {
  const std::string cfg = kConfigs + "/ci.yaml";
  const size_t n = points_in(*this, cfg);
  ASSERT_GT(n, 4u);
  ASSERT_EQ(bench("--sweep " + cfg + " --out " + p("r") + " --limit 3 --no-table"), 0) << out;
  ASSERT_EQ(read_csv(p("r/ci.csv")).rows.size(), 3u);
  std::ofstream(p("r/ci.csv"), std::ios::app) << "3,ci,tiny,maghoumi,cpu,float32,2,";  // torn by a kill
  ASSERT_EQ(bench("sweep " + cfg + " --out " + p("r")), 0) << out;
  EXPECT_NE(out.find("3 rows already"), std::string::npos) << out;
  expect_complete(read_csv(p("r/ci.csv")), n);
  // Metadata of both runs.
  const auto j = nlohmann::json::parse(read_file(p("r/ci.json")));
  EXPECT_EQ(j["rows"].size(), n);
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const char* k : {"gpu", "driver", "cuda_runtime", "torch", "compiler", "git_commit", "git_dirty", "date",
                        "config", "config_hash", "settings", "method"})
    EXPECT_TRUE(j["metadata"].contains(k)) << k;
  EXPECT_EQ(j["metadata"]["config"].get<std::string>(), read_file(cfg));
  EXPECT_EQ(j["metadata"]["config_hash"].get<std::string>().rfind("fnv1a64:", 0), 0u);
  // The summary table was printed last.
  EXPECT_NE(out.find("median ms"), std::string::npos) << out;
}

TEST_F(BenchCli, CommitFromTheEnvironmentWinsOverGit) {
  const std::string cfg = kConfigs + "/ci.yaml";
  ::setenv("SDTW_GIT_COMMIT", "0123456789abcdef", 1);
  ::setenv("SDTW_GIT_DIRTY", "false", 1);
  const int rc = bench("--sweep " + cfg + " --out " + p("r") + " --limit 1 --no-table");
  ::unsetenv("SDTW_GIT_COMMIT");
  ::unsetenv("SDTW_GIT_DIRTY");
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(read_file(p("r/ci.json")));
  EXPECT_EQ(j["metadata"]["git_commit"].get<std::string>(), "0123456789abcdef");
  EXPECT_EQ(j["metadata"]["git_dirty"].get<std::string>(), "false");
}

// warmup_min_ms keeps a point's untimed steps going for that long (the GPU's wake-up is not timed),
// and is recorded with the other settings.
TEST_F(BenchCli, WarmupLastsAtLeastWarmupMinMs) {
  const auto sweep_seconds = [&](int min_ms) {
    std::ofstream(p("w.yaml")) << "name: w\nsettings:\n  warmup: 0\n  warmup_min_ms: " << min_ms
                               << "\n  reps: 1\n  verify: false\ngrids:\n  - impl: ours_cpu\n    device: cpu\n"
                                  "    B: 1\n    N: 8\n    D: 1\n";
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(bench("--sweep " + p("w.yaml") + " --out " + p("w" + std::to_string(min_ms)) + " --no-table"), 0) << out;
    const auto j = nlohmann::json::parse(read_file(p("w" + std::to_string(min_ms) + "/w.json")));
    EXPECT_EQ(j["metadata"]["settings"]["warmup_min_ms"].get<int>(), min_ms);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double plain = sweep_seconds(0), floored = sweep_seconds(2000);
  EXPECT_GE(floored - plain, 1.5) << "without the floor " << plain << " s, with a 2 s floor " << floored << " s";
}

TEST_F(BenchCli, SigkillMidSweepThenResume) {
  // Enough work that the kill lands mid-sweep: 24 float64-reference points of ~10 ms each.
  std::ofstream(p("kill.yaml")) << "name: kill\nsettings:\n  reps: 2\ngrids:\n  - impl: reference_cpu\n"
                                   "    B: 4\n    N: {from: 100, to: 123, step: 1}\n    D: 4\n";
  const size_t n = 24;
  const pid_t pid = start({"--sweep", p("kill.yaml"), "--out", p("r"), "--no-table"}, p("child.txt"));
  ASSERT_GE(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  size_t rows = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      rows = read_csv(p("r/kill.csv"), true).rows.size();
    } catch (const std::exception&) {
      rows = 0;
    }
    if (rows >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const size_t before = read_csv(p("r/kill.csv"), true).rows.size();
  ASSERT_GE(before, 3u);
  ASSERT_EQ(bench("--sweep " + p("kill.yaml") + " --out " + p("r") + " --no-table"), 0) << out;
  expect_complete(read_csv(p("r/kill.csv")), n);
  if (before < n) {
    EXPECT_NE(out.find(std::to_string(before) + " rows already"), std::string::npos) << out;
  }
}

TEST_F(BenchCli, ShardsMergeToTheWholeAndCompare) {
  const std::string cfg = kConfigs + "/ci.yaml";
  const size_t n = points_in(*this, cfg);
  ASSERT_EQ(bench("--sweep " + cfg + " --out " + p("whole") + " --no-table"), 0) << out;
  ASSERT_EQ(bench("--sweep " + cfg + " --out " + p("s") + " --shard 2/2 --no-table"), 0) << out;
  ASSERT_EQ(bench("sweep " + cfg + " --out " + p("s") + " --shard 1/2 --no-table"), 0) << out;
  ASSERT_TRUE(fs::exists(p("s/ci.shard-1-of-2.csv")));
  ASSERT_EQ(bench("merge " + p("s/ci.shard-2-of-2.csv") + " " + p("s/ci.shard-1-of-2.csv") + " -o " + p("m/ci.csv")), 0)
      << out;
  const Table whole = read_csv(p("whole/ci.csv")), merged = read_csv(p("m/ci.csv"));
  expect_complete(merged, n);
  EXPECT_EQ(row_keys(merged), row_keys(whole));
  for (size_t r = 0; r < n; ++r) {
    EXPECT_EQ(merged.at(r, "point"), whole.at(r, "point"));
    EXPECT_EQ(merged.at(r, "disposition"), whole.at(r, "disposition"));
    EXPECT_EQ(merged.at(r, "value_err"), whole.at(r, "value_err"));  // same seeds, same inputs
  }
  ASSERT_EQ(bench("compare " + p("whole/ci.json") + " " + p("m/ci.json")), 0) << out;
  EXPECT_NE(out.find("time:"), std::string::npos) << out;
  ASSERT_EQ(bench("table " + p("m/ci.json")), 0) << out;
  EXPECT_NE(out.find("reference_cpu"), std::string::npos) << out;
}

TEST_F(BenchCli, EvalKnownValue) {
  std::ofstream(p("x.csv")) << "0\n1\n";
  std::ofstream(p("y.csv")) << "0\n";
  // One path: D = [0, 1], sdtw = 1 exactly for any gamma.
  ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl reference_cpu --gamma 0.5 --grad"), 0) << out;
  EXPECT_NE(out.find("sdtw = 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("d sdtw / d x (2 x 1)"), std::string::npos) << out;
  ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv")), 0) << out;
  EXPECT_NE(out.find("sdtw = 1\n"), std::string::npos) << out;
}
