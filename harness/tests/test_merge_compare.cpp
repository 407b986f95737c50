// compare on known inputs (faster / slower / same from the p10..p90 spreads, memory ratios) and
// merge ordering and de-duplication, of a sweep's rows and of another tool's.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "compare.hpp"
#include "merge.hpp"
#include "row.hpp"

using namespace sdtw::bench;

namespace {

Result row(const std::string& impl, int64_t n, double med, double lo, double hi, std::optional<double> mb,
           int64_t index = 0, const std::string& disp = "passed") {
  Result r;
  r.point.impl = impl;
  r.point.device = "cuda";
  r.point.batch = 32;
  r.point.n = n;
  r.point.m = n;
  r.point.dim = 64;
  r.point.index = index;
  r.sweep = "t";
  r.disposition = disp;
  if (disp == "passed") {
    r.time_ms_median = med;
    r.time_ms_p10 = lo;
    r.time_ms_p90 = hi;
    r.abs_peak_mb = mb;
  }
  return r;
}

Table table(const std::vector<Result>& rs) {
  Table t;
  t.header = result_columns();
  for (const auto& r : rs) t.rows.push_back(result_fields(r));
  return t;
}

}  // namespace

TEST(BenchCompare, ParseNumberTakesWholeFieldsOnly) {
  EXPECT_EQ(parse_number("1.5"), 1.5);
  EXPECT_EQ(parse_number("-2e3"), -2000.0);
  EXPECT_EQ(parse_number("1e-310"), 1e-310);  // subnormal, as format_double may write it
  for (const char* s : {"", " ", " 7", "1 ", "n/a", "1.5x", "1 2", "1e999"}) EXPECT_FALSE(parse_number(s)) << s;
}

TEST(BenchCompare, VerdictsFromSpreads) {
  const Table a = table({row("ours_fused", 128, 10, 9, 11, 100), row("ours_fused", 512, 10, 9, 11, 100),
                         row("ours_fused", 1024, 10, 9, 11, 100), row("ours_fused", 2048, 10, 9, 11, 100),
                         row("maghoumi", 128, 5, 4, 6, 50), row("maghoumi", 4096, 0, 0, 0, std::nullopt, 0, "not_supported")});
  const Table b = table({row("ours_fused", 128, 5, 4.5, 5.5, 30),     // faster, less memory
                         row("ours_fused", 512, 10.5, 8.8, 12, 101),  // spreads overlap: same; +1% memory: same
                         row("ours_fused", 1024, 20, 19, 21, 150),    // slower, more memory
                         row("ours_fused", 2048, 11.5, 11.2, 12, 100),  // 11.2 > 11: slower (no margin)
                         row("maghoumi", 4096, 0, 0, 0, std::nullopt, 0, "not_supported"),
                         row("ours_unfused", 128, 1, 1, 1, 1)});
  const auto rep = compare_tables(a, b);
  ASSERT_EQ(rep.entries.size(), 5u);
  EXPECT_EQ(rep.entries[0].time_verdict, "faster");
  EXPECT_NEAR(*rep.entries[0].time_ratio, 0.5, 1e-12);
  EXPECT_EQ(rep.entries[0].mem_verdict, "less");
  EXPECT_NEAR(*rep.entries[0].mem_ratio, 0.3, 1e-12);
  EXPECT_EQ(rep.entries[1].time_verdict, "same");
  EXPECT_EQ(rep.entries[1].mem_verdict, "same");
  EXPECT_EQ(rep.entries[2].time_verdict, "slower");
  EXPECT_EQ(rep.entries[2].mem_verdict, "more");
  EXPECT_EQ(rep.entries[3].time_verdict, "slower");
  EXPECT_EQ(rep.entries[4].time_verdict, "n/a");
  EXPECT_EQ(rep.faster, 1u);
  EXPECT_EQ(rep.slower, 2u);
  EXPECT_EQ(rep.same, 1u);
  ASSERT_EQ(rep.only_a.size(), 1u);  // maghoumi N=128
  ASSERT_EQ(rep.only_b.size(), 1u);  // ours_unfused N=128
  EXPECT_NE(rep.only_b[0].find("ours_unfused"), std::string::npos);
  // A margin of 5% turns the marginal case into "same".
  EXPECT_EQ(compare_tables(a, b, 0.02, 0.05).entries[3].time_verdict, "same");
  const auto text = format_report(rep, "a.json", "b.json");
  EXPECT_NE(text.find("1 faster, 2 slower, 1 same"), std::string::npos) << text;
}

TEST(BenchCompare, FileAgainstItselfIsAllSame) {
  const Table a = table({row("ours_fused", 128, 10, 9, 11, 100), row("ours_unfused", 128, 3, 2, 4, 10)});
  const auto rep = compare_tables(a, a);
  EXPECT_EQ(rep.same, 2u);
  EXPECT_EQ(rep.faster + rep.slower + rep.more_memory + rep.less_memory, 0u);
}

TEST(BenchMerge, OrderedByPointDedupFirstWins) {
  const Table s1 = table({row("a_impl", 8, 1, 1, 1, 1, 0), row("a_impl", 32, 1, 1, 1, 1, 2)});
  const Table s2 = table({row("a_impl", 16, 2, 2, 2, 2, 1), row("a_impl", 8, 9, 9, 9, 9, 0)});
  const Table m = merge_tables({s2, s1});
  ASSERT_EQ(m.rows.size(), 3u);
  EXPECT_EQ(m.at(0, "N"), "8");
  EXPECT_EQ(m.at(0, "time_ms_median"), "9");  // s2 was named first
  EXPECT_EQ(m.at(1, "N"), "16");
  EXPECT_EQ(m.at(2, "N"), "32");
  Table other = s1;
  other.header[0] = "index";
  EXPECT_THROW(merge_tables({s1, other}), std::runtime_error);
}

// Another tool's file of the schema (its own implementations, api and mode varied at one shape, an
// extra column, no point column) is merged and compared by column name.
TEST(BenchMerge, AnotherToolsFileByColumnName) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "sdtw_merge_other_tool";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Table t;
  t.header = common_columns();
  t.header.push_back("precision");
  for (const char* api : {"module", "functional"}) {
    std::vector<std::string> r(t.header.size());
    const auto set = [&](const std::string& c, const std::string& v) { r[static_cast<size_t>(t.column(c))] = v; };
    for (const auto& [c, v] : std::vector<std::pair<std::string, std::string>>{
             {"tool", "step"}, {"impl", "torch-mse"}, {"api", api}, {"device", "cuda"}, {"dtype", "float32"},
             {"B", "16"}, {"N", "128"}, {"M", "128"}, {"D", "64"}, {"gamma", "1"}, {"bandwidth", "none"},
             {"normalize", "false"}, {"disposition", "passed"}, {"reps", "30"}, {"warmup", "5"},
             {"time_ms_median", "0.2"}, {"time_ms_p10", "0.19"}, {"time_ms_p90", "0.21"}, {"abs_peak_mb", "3"},
             {"wall_s", "1.5"}, {"precision", "float32"}})
      set(c, v);
    t.rows.push_back(r);
  }
  write_csv((dir / "step.csv").string(), t);
  std::vector<std::string> repairs;
  const Table m = merge_files({(dir / "step.csv").string()}, (dir / "out/step.csv").string(), &repairs);
  EXPECT_TRUE(repairs.empty()) << repairs.front();
  ASSERT_EQ(m.rows.size(), 2u);  // module and functional: two points
  EXPECT_EQ(m.at(1, "api"), "functional");
  EXPECT_EQ(nlohmann::json::parse(read_file((dir / "out/step.json").string()))["tool"], "step");
  const auto rep = compare_tables(m, t);
  EXPECT_EQ(rep.same, 2u);
  EXPECT_TRUE(rep.only_a.empty() && rep.only_b.empty());
  fs::remove_all(dir);
}

// A file that is not results (broken JSON, another CSV, empty) is refused naming the file.
TEST(BenchCompare, LoadResultsNamesTheFileItCannotRead) {
  const auto dir = std::filesystem::temp_directory_path() / ("sdtw_bench_load_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"broken.json", "{\"columns\": [\"impl\"], \"rows\": ["},
      {"array.json", "[1, 2]"},
      {"cell.json", "{\"columns\": [\"impl\"], \"rows\": [{\"impl\": [1]}]}"},
      {"other.csv", "a,b\n1,2\n"},
      {"empty.csv", ""},
      {"binary.csv", std::string("\x89PNG\r\n\x1a\n\0\0", 10)}};
  for (const auto& [name, text] : files) {
    const std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << text;
    try {
      (void)load_results(path);
      ADD_FAILURE() << name << " was read as results";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(path + ": not an sdtw-bench results file", 0), 0u) << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}
