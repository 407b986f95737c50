// `--gpus` without GPUs: the engine behind it (one worker process per GPU, each given its
// CUDA_VISIBLE_DEVICES and a shard, then merged) run with real sdtw-bench workers on CPU points.
// The merged file equals a plain sweep, rows name their worker's GPU, a dead worker's points run
// on resume, and the leftovers of a killed run are merged, not re-run.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "cli_fixture.hpp"
#include "config.hpp"
#include "csv.hpp"
#include "parallel_sweep.hpp"
#include "row.hpp"
#include "store.hpp"
#include "table_support.hpp"

using namespace sdtw::bench;
using sdtw::bench::test_support::row_keys;

namespace {

using BenchParallel = sdtw::bench::test_support::BenchCliFixture;
using sdtw::bench::test_support::kExe;
namespace fs = std::filesystem;
const std::string kCi = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";

ParallelSweep ci_sweep(const std::string& out_dir, const std::string& exe, std::vector<std::string> gpus) {
  const SweepConfig cfg = load_config(kCi);
  ParallelSweep s;
  s.exe = exe;
  s.worker_args = {"sweep", kCi, "--no-table"};
  s.gpus = std::move(gpus);
  s.name = cfg.name;
  s.csv = out_dir + "/ci.csv";
  s.points = cfg.points;
  return s;
}

}  // namespace

TEST_F(BenchParallel, WorkersMergeToTheRowsOfOneSweep) {
  ASSERT_EQ(bench("--sweep " + kCi + " --out " + p("whole") + " --no-table"), 0) << out;
  const Table whole = read_csv(p("whole/ci.csv"));
  const std::vector<std::string> gpus = {"3", "1", "2"};
  const ParallelOutcome o = run_parallel_sweep(ci_sweep(p("par"), kExe, gpus));
  ASSERT_EQ(o.workers.size(), 3u);
  for (const auto& w : o.workers) EXPECT_EQ(w.status, 0) << read_file(w.log);
  EXPECT_EQ(o.merged.rows.size(), whole.rows.size());
  const Table merged = read_csv(p("par/ci.csv"));
  EXPECT_EQ(row_keys(merged), row_keys(whole));
  for (size_t r = 0; r < merged.rows.size(); ++r) {
    EXPECT_EQ(merged.at(r, "disposition"), whole.at(r, "disposition"));
    EXPECT_EQ(merged.at(r, "value_err"), whole.at(r, "value_err"));  // same inputs, same numbers
    EXPECT_EQ(merged.at(r, "gpu"), gpus[std::stoul(merged.at(r, "point")) % 3]);
  }
  const auto j = nlohmann::json::parse(read_file(p("par/ci.json")));
  EXPECT_EQ(j["rows"].size(), whole.rows.size());
  ASSERT_EQ(j["runs"].size(), 3u);  // one per worker, each with its shard
  std::set<std::string> shards;
  for (const auto& r : j["runs"]) shards.insert(r["shard"].get<std::string>());
  EXPECT_EQ(shards, (std::set<std::string>{"1/3", "2/3", "3/3"}));
  EXPECT_FALSE(fs::exists(p("par/ci.workers")));  // merged, then removed
}

// One GPU: the worker's shard 1/1 writes the sweep's own file name, which is what gets merged.
TEST_F(BenchParallel, OneWorkerGivesTheRowsOfOneSweep) {
  ASSERT_EQ(bench("--sweep " + kCi + " --out " + p("whole") + " --no-table"), 0) << out;
  const Table whole = read_csv(p("whole/ci.csv"));
  const ParallelOutcome o = run_parallel_sweep(ci_sweep(p("one"), kExe, {"0"}));
  ASSERT_EQ(o.workers.size(), 1u);
  EXPECT_EQ(o.workers[0].status, 0) << read_file(o.workers[0].log);
  EXPECT_EQ(o.merged.rows.size(), whole.rows.size());
  EXPECT_EQ(row_keys(read_csv(p("one/ci.csv"))), row_keys(whole));
  EXPECT_FALSE(fs::exists(p("one/ci.workers")));
}

TEST_F(BenchParallel, DeadWorkerPointsRunOnResume) {
  // Worker on GPU 1 runs one point and dies as if killed.
  const std::string wrapper = p("dying-worker.sh");
  std::ofstream(wrapper) << "#!/bin/sh\nif [ \"$CUDA_VISIBLE_DEVICES\" = 1 ]; then \"" << kExe
                         << "\" \"$@\" --limit 1; exit 137; fi\nexec \"" << kExe << "\" \"$@\"\n";
  ::chmod(wrapper.c_str(), 0755);
  const size_t total = load_config(kCi).points.size();
  const ParallelOutcome first = run_parallel_sweep(ci_sweep(p("par"), wrapper, {"0", "1"}));
  ASSERT_EQ(first.workers.size(), 2u);
  EXPECT_EQ(first.workers[0].status, 0);
  EXPECT_EQ(first.workers[1].status, 137);
  EXPECT_TRUE(fs::exists(first.workers[1].log));  // kept for diagnosis
  const size_t shard2 = total / 2;                 // odd indices
  EXPECT_EQ(first.merged.rows.size(), total - shard2 + 1);
  const Table partial = read_csv(p("par/ci.csv"));
  // Resume: only the dead worker's remaining points run; the rows already merged stay as they are.
  const ParallelOutcome second = run_parallel_sweep(ci_sweep(p("par"), kExe, {"0", "1"}));
  for (const auto& w : second.workers) EXPECT_EQ(w.status, 0) << read_file(w.log);
  const Table done = read_csv(p("par/ci.csv"));
  ASSERT_EQ(done.rows.size(), total);
  const auto k = row_keys(done);
  EXPECT_EQ(std::set<std::string>(k.begin(), k.end()).size(), total);
  size_t unchanged = 0;
  for (const auto& row : partial.rows)
    for (const auto& d : done.rows) unchanged += row == d;
  EXPECT_EQ(unchanged, partial.rows.size());
  const auto j = nlohmann::json::parse(read_file(p("par/ci.json")));
  EXPECT_EQ(j["runs"].size(), 4u);  // two workers, twice
}

TEST_F(BenchParallel, LeftoversOfAKilledRunAreMergedNotRerun) {
  // A worker's file left behind by a run killed before its merge.
  ASSERT_EQ(bench("sweep " + kCi + " --out " + p("par/ci.workers") + " --shard 1/2 --limit 2 --no-table"), 0) << out;
  const Table left = read_csv(p("par/ci.workers/ci.shard-1-of-2.csv"));
  ASSERT_EQ(left.rows.size(), 2u);
  const ParallelOutcome o = run_parallel_sweep(ci_sweep(p("par"), kExe, {"0", "1", "2"}));
  for (const auto& w : o.workers) EXPECT_EQ(w.status, 0) << read_file(w.log);
  const Table done = read_csv(p("par/ci.csv"));
  EXPECT_EQ(done.rows.size(), load_config(kCi).points.size());
  for (const auto& row : left.rows) EXPECT_NE(std::find(done.rows.begin(), done.rows.end(), row), done.rows.end());
}

TEST(BenchParallelArgs, GpuList) {
  EXPECT_EQ(parse_gpu_list("0,1,3"), (std::vector<std::string>{"0", "1", "3"}));
  for (const char* bad : {"", "0,", "a", "0,0", "-1", "1,,2"}) EXPECT_THROW(parse_gpu_list(bad), std::invalid_argument) << bad;
}
