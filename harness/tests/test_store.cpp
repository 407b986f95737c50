// Result files and the sweep loop with a fake runner: rows are written as points finish, a
// killed sweep resumes without duplicates, shards merged equal the whole sweep, and the CSV and
// JSON follow the schema.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "config.hpp"
#include "merge.hpp"
#include "store.hpp"
#include "sweep.hpp"
#include "table_support.hpp"

using namespace sdtw::bench;
using sdtw::bench::test_support::row_keys;
namespace fs = std::filesystem;

namespace {

struct Killed {};

const char* kSweep = R"(name: fake
grids:
  - impl: [reference_cpu, ours_cpu]
    B: [1, 2]
    N: [8, 16, 32]
    D: 2
    gamma: [1, 0.5]
)";

Result fake_result(const Point& p) {
  Result r;
  r.point = p;
  r.sweep = "fake";
  r.disposition = p.n == 32 && p.impl == "ours_cpu" ? disposition::failed : disposition::passed;
  r.time_ms_median = 1.0 + static_cast<double>(p.index);
  r.time_ms_p10 = 0.5;
  r.time_ms_p90 = 2.0 + static_cast<double>(p.index);
  r.reps = 3;
  r.warmup = 1;
  r.seed = 12345678901234567890ULL;  // above 2^63: kept exact as text
  r.value_err = 1e-9;
  r.grad_err = 2e-9;
  r.value_tol = 1e-5;
  r.grad_tol = 1e-4;
  r.verified = std::to_string(p.batch) + "/" + std::to_string(p.batch);
  r.message = r.disposition == disposition::failed ? "gradient rel-L2 error 0.1 > 0.0001, \"quoted\"\nsecond line" : "";
  return r;
}

class BenchStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sdtw_bench_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string path(const std::string& f) const { return (dir / f).string(); }
  fs::path dir;
};

}  // namespace

TEST_F(BenchStore, RowsAreWrittenAsPointsFinish) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  ResultsStore store(path("fake.csv"), {{"gpu", nullptr}}, false);
  size_t calls = 0;
  run_sweep(cfg.points, store, [&](const Point& p) {
    // Every earlier point is already on disk when the next one starts.
    EXPECT_EQ(read_csv(path("fake.csv")).rows.size(), calls);
    ++calls;
    return fake_result(p);
  }, nullptr);
  EXPECT_EQ(calls, cfg.points.size());
  EXPECT_EQ(read_csv(path("fake.csv")).rows.size(), cfg.points.size());
}

TEST_F(BenchStore, ResumeAfterKillHasNoDuplicatesAndEveryRow) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  const size_t total = cfg.points.size();
  const size_t k = 7;
  {
    ResultsStore store(path("fake.csv"), {{"run", 1}}, false);
    size_t n = 0;
    // The process "dies" while running point k: k rows are on disk.
    EXPECT_THROW(run_sweep(cfg.points, store, [&](const Point& p) {
      if (n++ == k) throw Killed{};
      return fake_result(p);
    }, nullptr), Killed);
  }
  // The kill also cut a row in half while it was being written.
  {
    std::ofstream out(path("fake.csv"), std::ios::app);
    out << "7,fake,grid1,ours_cpu,cpu,float32,2,8";
  }
  ASSERT_EQ(read_csv(path("fake.csv"), true).rows.size(), k);
  std::set<std::string> rerun;
  {
    ResultsStore store(path("fake.csv"), {{"run", 2}}, false);
    EXPECT_EQ(store.resumed_rows(), k);
    const auto sum = run_sweep(cfg.points, store, [&](const Point& p) {
      rerun.insert(point_key(p));
      return fake_result(p);
    }, nullptr);
    EXPECT_EQ(sum.skipped, k);
    EXPECT_EQ(sum.ran, total - k);
  }
  EXPECT_EQ(rerun.size(), total - k);
  for (size_t i = 0; i < k; ++i) EXPECT_EQ(rerun.count(point_key(cfg.points[i])), 0u);
  const Table t = read_csv(path("fake.csv"));  // strict: no partial line left
  ASSERT_EQ(t.rows.size(), total);
  const auto keys = row_keys(t);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), total);
  for (size_t i = 0; i < total; ++i) EXPECT_EQ(keys[i], point_key(cfg.points[i]));
  // The JSON holds every row and both runs' metadata.
  const auto j = nlohmann::json::parse(read_file(path("fake.json")));
  EXPECT_EQ(j["rows"].size(), total);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["run"], 1);
  EXPECT_EQ(j["runs"][1]["resumed_rows"], k);
  // A third run has nothing to do.
  ResultsStore again(path("fake.csv"), {}, false);
  const auto sum = run_sweep(cfg.points, again, [&](const Point& p) -> Result {
    ADD_FAILURE() << "reran " << describe(p);
    return fake_result(p);
  }, nullptr);
  EXPECT_EQ(sum.skipped, total);
}

TEST_F(BenchStore, LimitStopsAndResumes) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  for (int round = 0; round < 10; ++round) {
    ResultsStore store(path("f.csv"), {}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 5);
  }
  const auto t = read_csv(path("f.csv"));
  EXPECT_EQ(t.rows.size(), cfg.points.size());
  const auto keys = row_keys(t);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), cfg.points.size());
}

TEST_F(BenchStore, FreshStartsOverAndSchemaMismatchIsAnError) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore store(path("f.csv"), {}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 3);
  }
  {
    ResultsStore store(path("f.csv"), {}, true);
    EXPECT_EQ(store.size(), 0u);
  }
  {
    std::ofstream out(path("other.csv"));
    out << "a,b\n1,2\n";
  }
  try {
    ResultsStore store(path("other.csv"), {}, false);
    ADD_FAILURE() << "a CSV of another schema was resumed";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path("other.csv") + ": not a results CSV of this sdtw-bench: no column 'tool'"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("pass --fresh"), std::string::npos) << what;
  }
  // Read as an input (merge): the same finding, without advice about a sweep's option.
  std::ofstream(path("empty.csv")) << "";
  try {
    (void)read_results_checked(path("empty.csv"));
    ADD_FAILURE() << "an empty file was read as results";
  } catch (const SchemaMismatch& e) {
    EXPECT_EQ(std::string(e.what()), path("empty.csv") + ": not a results CSV of this sdtw-bench: the file is empty");
  }
}

// A write that fails part way (here the file-size limit, as a full disk would) names the file
// asked for and the system's reason, and leaves no temporary behind; so does a missing folder.
TEST_F(BenchStore, FailedWriteNamesTheReasonAndLeavesNoTemporary) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 16;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string what;
  try {
    write_file_atomic(path("s.json"), std::string(100000, 'x'));
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(what, "cannot write " + path("s.json") + ": " + std::strerror(EFBIG));
  for (const auto& f : fs::directory_iterator(dir)) ADD_FAILURE() << "left behind: " << f.path();
  try {
    write_file_atomic(path("missing/s.json"), "x");
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot create " + path("missing/s.json") + ": " + std::strerror(ENOENT));
  }
}

TEST_F(BenchStore, ShardsMergedEqualTheWhole) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore whole(path("whole.csv"), {}, false);
    run_sweep(cfg.points, whole, fake_result, nullptr);
  }
  std::vector<std::string> shards;
  size_t covered = 0;
  for (int k = 3; k >= 1; --k) {  // any order of shard files
    const auto pts = select_shard(cfg.points, {k, 3});
    covered += pts.size();
    const std::string f = path("s" + std::to_string(k) + ".csv");
    ResultsStore s(f, {{"shard", k}}, false);
    run_sweep(pts, s, fake_result, nullptr);
    shards.push_back(f);
  }
  EXPECT_EQ(covered, cfg.points.size());
  shards.push_back(shards.front());  // a file named twice adds nothing, neither rows nor runs
  EXPECT_EQ(merge_files(shards, path("merged/all.csv")).rows.size(), cfg.points.size());
  const auto merged = read_csv(path("merged/all.csv"));
  const auto whole = read_csv(path("whole.csv"));
  EXPECT_EQ(merged.header, whole.header);
  EXPECT_EQ(merged.rows, whole.rows);  // the fake runner is deterministic: identical rows
  const auto j = nlohmann::json::parse(read_file(path("merged/all.json")));
  EXPECT_EQ(j["rows"].size(), cfg.points.size());
  EXPECT_EQ(j["runs"].size(), 3u);
}

TEST_F(BenchStore, CsvAndJsonSchema) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore store(path("f.csv"), {{"gpu", "none"}, {"config_hash", "fnv1a64:0"}}, false);
    run_sweep(cfg.points, store, fake_result, nullptr);
  }
  const auto t = read_csv(path("f.csv"));
  EXPECT_EQ(t.header, result_columns());
  // The schema's common columns (docs/DESIGN.md §5; sdtw_results.COLUMNS, which a pytest compares with the
  // executable's header), then the sweep's own.
  const std::vector<std::string> expected = {
      "tool",         "grid",        "impl",      "api",      "mode",      "device",         "dtype",
      "B",            "N",           "M",         "D",        "gamma",     "bandwidth",      "normalize",
      "disposition",  "message",     "reps",      "warmup",   "time_ms_median", "time_ms_p10", "time_ms_p90",
      "step_peak_mb", "abs_peak_mb", "value_err", "grad_err", "value_tol", "grad_tol",       "verified",
      "seed",         "wall_s",      "gpu",       "point",    "sweep"};
  EXPECT_EQ(t.header, expected);
  for (const auto& c : key_columns()) EXPECT_GE(t.column(c), 0) << c;
  // The message with a comma, quotes and a newline survives as one field on one line.
  bool saw_failed = false;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.at(r, "disposition") == "failed") {
      saw_failed = true;
      EXPECT_EQ(t.at(r, "message"), "gradient rel-L2 error 0.1 > 0.0001, \"quoted\" second line");
    }
    EXPECT_EQ(t.at(r, "step_peak_mb"), "");  // CPU rows: no allocator counters
    EXPECT_EQ(t.at(r, "abs_peak_mb"), "");
    EXPECT_EQ(t.at(r, "tool"), "sweep");
    EXPECT_EQ(t.at(r, "mode"), "");  // reference_cpu and ours_cpu have no fused/unfused mode
    EXPECT_EQ(t.at(r, "seed"), "12345678901234567890");
  }
  EXPECT_TRUE(saw_failed);
  const auto j = nlohmann::json::parse(read_file(path("f.json")));
  EXPECT_EQ(j["schema"], "sdtw-results/1");
  EXPECT_EQ(j["tool"], "sweep");
  EXPECT_EQ(j["columns"].get<std::vector<std::string>>(), expected);
  EXPECT_EQ(j["metadata"]["gpu"], "none");
  ASSERT_EQ(j["rows"].size(), cfg.points.size());
  const auto& row = j["rows"][1];
  EXPECT_TRUE(row["B"].is_number_integer());
  EXPECT_TRUE(row["gamma"].is_number());
  EXPECT_TRUE(row["time_ms_median"].is_number());
  EXPECT_TRUE(row["bandwidth"].is_null());
  EXPECT_TRUE(row["normalize"].is_boolean());
  EXPECT_TRUE(row["abs_peak_mb"].is_null());
  EXPECT_EQ(row["seed"], "12345678901234567890");
  EXPECT_EQ(row["warmup"], 1);
  EXPECT_EQ(row["disposition"], "passed");
  for (const auto& c : expected) EXPECT_TRUE(row.contains(c)) << c;
}

TEST(BenchSweep, ParseShard) {
  EXPECT_EQ(parse_shard("2/4").k, 2);
  EXPECT_EQ(parse_shard("2/4").n, 4);
  EXPECT_THROW(parse_shard("0/4"), std::invalid_argument);
  EXPECT_THROW(parse_shard("5/4"), std::invalid_argument);
  EXPECT_THROW(parse_shard("2"), std::invalid_argument);
  EXPECT_THROW(parse_shard("a/b"), std::invalid_argument);
  try {
    parse_shard("2147483648/2147483649");
    ADD_FAILURE() << "a shard past int accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("at most 2147483647, got '2147483648/2147483649'"), std::string::npos)
        << e.what();
  }
}

// A resumed file with a non-number in a numeric column, an unknown
// implementation and a duplicated key: the bad rows are set aside (with the reason) and their
// points run again; the valid rows are kept once.
TEST_F(BenchStore, ResumeSetsAsideBadAndDuplicatedRows) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore store(path("f.csv"), {}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 4);
  }
  Table t = read_csv(path("f.csv"));
  ASSERT_EQ(t.rows.size(), 4u);
  const auto good = t.rows;
  t.rows[1][static_cast<size_t>(t.column("time_ms_median"))] = "notanumber";
  t.rows[2][static_cast<size_t>(t.column("N"))] = "0";
  t.rows.push_back(good[0]);  // a duplicate of line 2
  auto bogus = good[3];
  bogus[static_cast<size_t>(t.column("impl"))] = "bogus";
  t.rows.push_back(bogus);
  write_csv(path("f.csv"), t);

  ResultsStore store(path("f.csv"), {}, false);
  ASSERT_EQ(store.repairs().size(), 4u);
  EXPECT_NE(store.repairs()[0].find("line 3: column 'time_ms_median' is 'notanumber', expected a number"),
            std::string::npos)
      << store.repairs()[0];
  EXPECT_NE(store.repairs()[1].find("line 4: column 'N' is '0', expected an integer >= 1"), std::string::npos);
  EXPECT_NE(store.repairs()[2].find("line 6: the same point as line 2"), std::string::npos) << store.repairs()[2];
  EXPECT_NE(store.repairs()[3].find("column 'impl' is 'bogus'"), std::string::npos) << store.repairs()[3];
  EXPECT_EQ(store.resumed_rows(), 2u);
  EXPECT_FALSE(store.has(row_key(Table{t.header, {good[1]}}, 0)));  // runs again
  EXPECT_TRUE(store.has(row_key(Table{t.header, {good[0]}}, 0)));
  EXPECT_EQ(read_csv(path("f.csv")).rows, (std::vector<std::vector<std::string>>{good[0], good[3]}));
  const Table rejected = read_csv(path("f.rejected.csv"));
  ASSERT_EQ(rejected.rows.size(), 4u);  // nothing lost
  EXPECT_EQ(rejected.header.back(), "rejected_because");
  // Resuming once more finds nothing to repair.
  run_sweep(cfg.points, store, fake_result, nullptr);
  const Table done = read_csv(path("f.csv"));
  EXPECT_EQ(done.rows.size(), cfg.points.size());
  const auto done_keys = row_keys(done);
  EXPECT_EQ(std::set<std::string>(done_keys.begin(), done_keys.end()).size(), cfg.points.size());
}

// A truncated JSON is rebuilt from the CSV, and the earlier runs' metadata
// survives (from the runs log).
TEST_F(BenchStore, TruncatedJsonKeepsEarlierRuns) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  for (int run = 1; run <= 2; ++run) {
    ResultsStore store(path("f.csv"), {{"run", run}}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 3);
  }
  const std::string full = read_file(path("f.json"));
  write_file_atomic(path("f.json"), full.substr(0, full.size() / 2));
  {
    ResultsStore store(path("f.csv"), {{"run", 3}}, false);
    run_sweep(cfg.points, store, fake_result, nullptr);
  }
  const auto j = nlohmann::json::parse(read_file(path("f.json")));
  ASSERT_EQ(j["runs"].size(), 3u);
  for (int run = 1; run <= 3; ++run) EXPECT_EQ(j["runs"][run - 1]["run"], run);
  EXPECT_EQ(j["runs"][2]["resumed_rows"], 6);
  EXPECT_EQ(j["rows"].size(), cfg.points.size());
  // Files from before the log: the runs come from the JSON, and the log starts from them.
  fs::remove(path("f.runs.jsonl"));
  { ResultsStore store(path("f.csv"), {{"run", 4}}, false); }
  EXPECT_EQ(load_runs(path("f.csv")).size(), 4u);
  // A log line torn by a kill is skipped, the others kept.
  std::ofstream(path("f.runs.jsonl"), std::ios::app) << "{\"run\": 5, \"da";
  EXPECT_EQ(load_runs(path("f.csv")).size(), 4u);
}

// A second writer of the same file is refused, naming the holder; the lock
// goes with the holder's death.
TEST_F(BenchStore, SecondWriterIsRefusedNamingTheHolder) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ResultsStore store(path("f.csv"), {}, false);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  try {
    ResultsStore second(path("f.csv"), {}, false);
    ADD_FAILURE() << "a second writer was let in";
  } catch (const LockHeld& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pid " + std::to_string(child) + " on host "), std::string::npos) << what;
    EXPECT_NE(what.find(", started 20"), std::string::npos) << what;
    EXPECT_NE(what.find(path("f.csv")), std::string::npos) << what;
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NO_THROW(ResultsStore(path("f.csv"), {}, false));
  ::close(ready[0]);
  ::close(ready[1]);
}

// A file of another layout (an older sdtw-bench's) is not resumed into: the error says what to do.
TEST_F(BenchStore, FileOfAnotherLayoutIsRefused) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore store(path("f.csv"), {}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 2);
  }
  Table t = read_csv(path("f.csv"));
  t.header.pop_back();
  for (auto& r : t.rows) r.pop_back();
  write_csv(path("f.csv"), t);
  try {
    ResultsStore store(path("f.csv"), {}, false);
    FAIL() << "resumed into a file of another layout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("different column schema; move it away or pass --fresh"), std::string::npos)
        << e.what();
  }
  ResultsStore fresh(path("f.csv"), {}, true);
  EXPECT_EQ(read_csv(path("f.csv")).header, result_columns());
}

// merge reads its inputs and never rewrites them (a sweep may still be writing one); their bad
// rows are set aside beside the output, which merge has locked.
TEST_F(BenchStore, MergeLeavesInputsAsTheyAreAndSetsBadRowsAsideBesideTheOutput) {
  const auto cfg = parse_config(kSweep, "fake.yaml");
  {
    ResultsStore store(path("in.csv"), {}, false);
    run_sweep(cfg.points, store, fake_result, nullptr, 3);
  }
  Table t = read_csv(path("in.csv"));
  t.rows.push_back(t.rows[0]);  // a duplicate
  write_csv(path("in.csv"), t);
  const std::string before = read_file(path("in.csv")) + "torn,partial";  // and a torn last line
  std::ofstream(path("in.csv"), std::ios::trunc) << before;
  std::vector<std::string> repairs;
  EXPECT_EQ(merge_files({path("in.csv")}, path("out/all.csv"), &repairs).rows.size(), 3u);
  EXPECT_EQ(read_file(path("in.csv")), before);
  EXPECT_FALSE(fs::exists(path("in.rejected.csv")));
  ASSERT_EQ(repairs.size(), 1u);
  EXPECT_NE(repairs[0].find("the same point as line 2"), std::string::npos) << repairs[0];
  EXPECT_EQ(read_csv(path("out/all.rejected.csv")).rows.size(), 1u);
  EXPECT_EQ(read_csv(path("out/all.csv")).rows.size(), 3u);
  // Merging the unchanged input again must not set the same bad row aside twice, rewrite the
  // set-aside file or report the row again.
  const auto set_aside_at = fs::last_write_time(path("out/all.rejected.csv"));
  repairs.clear();
  EXPECT_EQ(merge_files({path("in.csv")}, path("out/all.csv"), &repairs).rows.size(), 3u);
  EXPECT_TRUE(repairs.empty()) << repairs.front();
  EXPECT_EQ(fs::last_write_time(path("out/all.rejected.csv")), set_aside_at);
  EXPECT_EQ(read_file(path("in.csv")), before);
  EXPECT_EQ(read_csv(path("out/all.rejected.csv")).rows.size(), 1u);
  EXPECT_EQ(read_csv(path("out/all.csv")).rows.size(), 3u);
}
