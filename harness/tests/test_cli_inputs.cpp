// End to end on the CPU: bad arguments are clear errors (no C++ backtrace, nonzero
// exit), eval's bandwidth 0 means no band, a point larger than the machine is out_of_memory
// before anything is allocated, and a second sweep into the same files is refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <regex>
#include <thread>

#include "cli_fixture.hpp"
#include "csv.hpp"

using namespace sdtw::bench;

namespace {

using BenchCli = sdtw::bench::test_support::BenchCliFixture;
using sdtw::bench::test_support::kExe;
namespace fs = std::filesystem;

void expect_no_backtrace(const std::string& out) {
  EXPECT_EQ(out.find("Exception raised from"), std::string::npos) << out;
  EXPECT_EQ(out.find("frame #"), std::string::npos) << out;
}

double value_of(const std::string& out) {
  const auto at = out.find("sdtw = ");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? 0 : std::stod(out.substr(at + 7));
}

}  // namespace

// gamma = 0 is exact DTW: x = (0, 1, 2), y = (0, 2) aligns 1 with 0 or 2 at cost 1, where every
// gamma > 0 gives less. The reference and ours agree; the Maghoumi baseline refuses it.
TEST_F(BenchCli, EvalGammaZeroIsExactDtw) {
  std::ofstream(p("x.csv")) << "0\n1\n2\n";
  std::ofstream(p("y.csv")) << "0\n2\n";
  for (const char* impl : {"reference_cpu", "auto"}) {
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --gamma 0 --grad --impl " + impl), 0) << out;
    EXPECT_EQ(value_of(out), 1.0) << impl << out;
  }
  EXPECT_NE(bench("eval " + p("x.csv") + " " + p("y.csv") + " --gamma 0 --impl maghoumi"), 0);
  EXPECT_NE(out.find("gamma = 0"), std::string::npos) << out;
}

// The library's options through eval, each against a value worked by hand at gamma = 0 (one optimal
// path) or on a single-path region (whose value is that path's cost at every gamma).
TEST_F(BenchCli, EvalTakesTheLibrarysCostsConstraintsWarpAndSubsequence) {
  std::ofstream(p("x.csv")) << "0\n1\n2\n";
  std::ofstream(p("y.csv")) << "0\n2\n";
  std::ofstream(p("y4.csv")) << "0\n4\n";
  std::ofstream(p("shift.csv")) << "1\n2\n3\n";
  std::ofstream(p("u.csv")) << "1,0\n1,1\n";
  std::ofstream(p("v.csv")) << "2,0\n0,3\n";
  std::ofstream(p("short.csv")) << "1\n2\n";
  std::ofstream(p("long.csv")) << "5\n1\n2\n7\n";
  auto value = [&](const std::string& x, const std::string& y, const std::string& options) {
    EXPECT_EQ(bench("eval " + p(x) + " " + p(y) + " " + options), 0) << options << out;
    EXPECT_NE(out.find("impl ours_cpu"), std::string::npos) << out;  // auto picks the library
    return value_of(out);
  };
  // x = (0, 1, 2) against (0, 4): 1 meets 0, so the costs 0, |1 - 0|, |2 - 4| (squared: 0, 1, 4).
  EXPECT_EQ(value("x.csv", "y4.csv", "--gamma 0"), 5.0);
  EXPECT_EQ(value("x.csv", "y4.csv", "--gamma 0 --dist l1"), 3.0);
  EXPECT_NEAR(value("x.csv", "y4.csv", "--gamma 0 --dist euclidean"), 3.0, 1e-12);
  // u = ((1,0), (1,1)), v = ((2,0), (0,3)): cosine's best path is the diagonal, 0 + (1 - 1/sqrt 2);
  // the negative dot product's goes through (u1, v0): -2 - 2 - 3.
  EXPECT_NEAR(value("u.csv", "v.csv", "--gamma 0 --dist cosine"), 1.0 - 1.0 / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(value("u.csv", "v.csv", "--gamma 0 --dist negative_dot"), -7.0, 1e-12);
  // (0,1,2) against (1,2,3): DTW 2 through (1,0) and (2,1); the diagonal alone costs 3 at any gamma.
  EXPECT_EQ(value("x.csv", "shift.csv", "--gamma 0"), 2.0);
  const double full = value("x.csv", "shift.csv", "--gamma 0.5");
  EXPECT_LT(full, 2.0);
  EXPECT_NEAR(value("x.csv", "shift.csv", "--gamma 0.5 --global-constraint sakoe_chiba --sakoe-chiba-radius 0"), 3.0,
              1e-12);
  EXPECT_NEAR(value("x.csv", "shift.csv", "--gamma 0.5 --sakoe-chiba-radius 0"), 3.0, 1e-12);
  EXPECT_NEAR(value("x.csv", "shift.csv", "--gamma 0.5 --itakura-max-slope 1"), 3.0, 1e-12);
  const double radius_one = value("x.csv", "shift.csv", "--gamma 0.5 --global-constraint sakoe_chiba");
  EXPECT_GT(radius_one, full + 1e-9);  // the default radius 1 drops the paths through the corners
  EXPECT_LT(radius_one, 3.0 - 1e-9);
  // (0,1,2) against (0,2): one vertical move on every optimal path, so DTW 1 plus the warp.
  EXPECT_EQ(value("x.csv", "y.csv", "--gamma 0"), 1.0);
  EXPECT_EQ(value("x.csv", "y.csv", "--gamma 0 --warp 0.5"), 1.5);
  EXPECT_EQ(value("x.csv", "y.csv", "--gamma 0 --warp -0.25"), 0.75);
  // (1,2) is a stretch of (5,1,2,7): 0 as a subsequence; pinned to both ends, 16 + 0 + 0 + 25.
  EXPECT_EQ(value("short.csv", "long.csv", "--gamma 0 --subsequence"), 0.0);
  EXPECT_EQ(value("short.csv", "long.csv", "--gamma 0"), 41.0);
}

TEST_F(BenchCli, EvalBadGammaAndNonFiniteInputsAreCleanErrors) {
  std::ofstream(p("x.csv")) << "0\n1\n2\n";
  std::ofstream(p("y.csv")) << "0\n1\n";
  std::ofstream(p("nan.csv")) << "0\nnan\n2\n";
  for (const char* g : {"-1", "nan", "inf", "x"}) {
    EXPECT_NE(bench("eval " + p("x.csv") + " " + p("y.csv") + " --gamma " + g), 0) << g;
    EXPECT_NE(out.find("--gamma"), std::string::npos) << out;
    EXPECT_NE(out.find("must be a finite number >= 0"), std::string::npos) << out;
    expect_no_backtrace(out);
  }
  for (const char* impl : {"auto", "reference_cpu", "ours_cpu", "maghoumi"}) {
    EXPECT_NE(bench("eval " + p("nan.csv") + " " + p("y.csv") + " --impl " + impl), 0) << impl;
    EXPECT_NE(out.find("nan.csv: line 2, column 1: value 'nan' is not finite"), std::string::npos) << out;
    expect_no_backtrace(out);
  }
  // An error raised inside torch's checks (a band that cannot reach the end cell) prints its
  // message without the backtrace c10 attaches.
  std::ofstream(p("long.csv")) << "0\n1\n2\n3\n4\n5\n6\n7\n";
  EXPECT_NE(bench("eval " + p("long.csv") + " " + p("y.csv") + " --impl ours_cpu --bandwidth 2"), 0);
  EXPECT_NE(out.find("bandwidth"), std::string::npos) << out;
  expect_no_backtrace(out);
}

TEST_F(BenchCli, EvalBandwidthZeroMeansNoBand) {
  std::ofstream(p("x.csv")) << "0\n3\n1\n4\n";
  std::ofstream(p("y.csv")) << "1\n0\n4\n2\n";
  for (const char* impl : {"reference_cpu", "ours_cpu", "maghoumi"}) {
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl " + impl), 0) << out;
    const double none = value_of(out);
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl " + impl + " --bandwidth 0"), 0) << out;
    EXPECT_EQ(value_of(out), none) << impl;
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl " + impl + " --bandwidth -5"), 0) << out;
    EXPECT_EQ(value_of(out), none) << impl;
    // A real band of 1 differs (it removes the paths that the unbanded value softly includes).
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl " + impl + " --bandwidth 1"), 0) << out;
    EXPECT_GT(std::abs(value_of(out) - none), 1e-6) << impl;
  }
}

TEST_F(BenchCli, UnknownImplAndNegativeLimitAreRejected) {
  const std::string cfg = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";
  EXPECT_NE(bench("--sweep " + cfg + " --out " + p("r") + " --impl bogus"), 0);
  EXPECT_NE(out.find("--impl"), std::string::npos) << out;
  for (const char* known : {"ours_fused", "ours_unfused", "ours_cpu", "reference_cpu", "maghoumi"})
    EXPECT_NE(out.find(known), std::string::npos) << out;
  // Known, but not in this sweep: still zero points, so an error.
  EXPECT_NE(bench("--sweep " + cfg + " --out " + p("r") + " --impl ours_fused"), 0);
  EXPECT_NE(out.find("--impl ours_fused: no point of sweep ci uses it"), std::string::npos) << out;
  EXPECT_NE(bench("sweep " + cfg + " --out " + p("r") + " --limit -1"), 0);
  EXPECT_NE(out.find("--limit"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(p("r/ci.csv")));
  EXPECT_EQ(bench("sweep " + cfg + " --out " + p("r") + " --limit 0 --no-table"), 0) << out;
}

// Through the CLI: the 1e8-point range fails at once, and the process never grows (a parser that
// expands first would reach 7 GB).
TEST_F(BenchCli, HugeSweepIsRefusedWithoutGrowing) {
  std::ofstream(p("huge.yaml")) << "grids:\n  - impl: reference_cpu\n    B: 1\n    N: {from: 1, to: 100000000, step: 1}\n"
                                   "    D: 1\n";
  const pid_t pid = start({"--sweep", p("huge.yaml"), "--dry-run"}, p("child.txt"));
  ASSERT_GE(pid, 0);
  int status = 0;
  rusage use{};
  ASSERT_EQ(::wait4(pid, &status, 0, &use), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_LT(use.ru_maxrss, 1024 * 1024) << "KiB";  // under 1 GiB: torch's libraries, no points
  const std::string err = read_file(p("child.txt"));
  EXPECT_NE(err.find("huge.yaml:4: key 'N': the range has 100000000 values; a sweep holds at most 100000 points"),
            std::string::npos)
      << err;
}

// --dry-run shows each point's predicted peak; a point far larger than the
// machine is out_of_memory with its estimate, at once and without allocating.
TEST_F(BenchCli, PeakEstimatesAndOutOfMemoryBeforeAllocating) {
  std::ofstream(p("big.yaml")) << "name: big\nsettings:\n  reps: 1\n  verify: false\ngrids:\n"
                                  "  - impl: [reference_cpu, ours_cpu, maghoumi]\n    device: cpu\n    B: 1\n"
                                  "    N: [16, 1000000]\n    D: 4\n";
  ASSERT_EQ(bench("--sweep " + p("big.yaml") + " --dry-run"), 0) << out;
  // ours_cpu at N = 1e6: 1e12 cells * 32 bytes = 29.1 TiB.
  EXPECT_NE(out.find("ours_cpu cpu float32 B=1 N=1000000 M=1000000 D=4 gamma=1\tpeak ~29.1 TiB host (> "),
            std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 7) << out;
  EXPECT_EQ(std::regex_search(out, std::regex("N=16 M=16 D=4 gamma=1\tpeak ~[0-9.]+ KiB host\n")), true) << out;
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(bench("--sweep " + p("big.yaml") + " --out " + p("r") + " --no-table"), 0) << out;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
  const Table t = read_csv(p("r/big.csv"));
  ASSERT_EQ(t.rows.size(), 6u);
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.at(r, "N") == "16") {
      EXPECT_EQ(t.at(r, "disposition"), "passed") << t.at(r, "message");
    } else {
      EXPECT_EQ(t.at(r, "disposition"), "out_of_memory") << t.at(r, "impl");
      EXPECT_TRUE(std::regex_search(t.at(r, "message"),
                                    std::regex("^estimated peak [0-9.]+ TiB > [0-9.]+ GiB of host memory \\(not allocated\\)$")))
          << t.at(r, "message");
    }
  }
}

// The host estimate against the measured peak resident memory of a real point (float64 inputs,
// hundreds of MB or more): the estimate must neither miss the real need nor overstate it grossly.
TEST_F(BenchCli, HostEstimateMatchesMeasuredPeak) {
  auto peak_kib = [&](const std::string& yaml) {
    std::ofstream(p("m.yaml")) << yaml;
    fs::remove_all(p("r"));
    const pid_t pid = start({"--sweep", p("m.yaml"), "--out", p("r"), "--no-table"}, p("child.txt"));
    int status = 0;
    rusage use{};
    ::wait4(pid, &status, 0, &use);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(p("child.txt"));
    return static_cast<double>(use.ru_maxrss) * 1024.0;
  };
  auto estimate = [&](const std::string& yaml) {
    std::ofstream(p("m.yaml")) << yaml;
    EXPECT_EQ(bench("--sweep " + p("m.yaml") + " --dry-run"), 0) << out;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(out, m, std::regex("peak ~([0-9.]+) (MiB|GiB) host"))) << out;
    return m.size() > 2 ? std::stod(m[1]) * (m[2] == "GiB" ? 1024.0 : 1.0) * 1024 * 1024 : 0.0;
  };
  const std::string head = "settings:\n  warmup: 0\n  reps: 1\n  verify: false\ngrids:\n  - impl: ";
  // device: cpu in the baseline too: on a CUDA build a point on the GPU would add the CUDA
  // context to the baseline and none of it to the measured points.
  const double base = peak_kib(head + "ours_cpu\n    device: cpu\n    B: 1\n    N: 8\n    D: 1\n");
  for (const std::string impl : {"ours_cpu", "maghoumi", "reference_cpu"}) {
    // ru_maxrss cannot tell the point's memory from the process's own start-up peak, which is
    // most of `base` (the CUDA libraries make it ~0.5 GB on a GPU build): N grows until the
    // estimate is 4x base, so that peak - base is within a quarter of the point's need.
    // reference_cpu: one pair, the part of its estimate that does not depend on how many pairs
    // torch's thread pool runs at once (the estimate takes one per thread, an upper bound).
    const std::string batch = impl == "reference_cpu" ? "1" : "2";
    auto yaml_at = [&](int n) {
      return head + impl + "\n    device: cpu\n    dtype: float64\n    B: " + batch + "\n    N: " + std::to_string(n) +
             "\n    D: 4\n";
    };
    int n = 2000;
    while (estimate(yaml_at(n)) < 4 * base && n < 12000) n = n * 5 / 4;
    const std::string yaml = yaml_at(n);
    const double est = estimate(yaml), used = peak_kib(yaml) - base;
    ASSERT_GE(est, 4 * base) << impl << " at N = " << n;
    EXPECT_GT(est, 0.75 * used) << impl << ": estimated " << est / 1048576 << " MiB, measured " << used / 1048576;
    EXPECT_LT(est, 1.5 * used) << impl << ": estimated " << est / 1048576 << " MiB, measured " << used / 1048576;
  }
}

// A second sweep into the same --out while the first runs exits nonzero naming
// the first (pid, host, start time), and leaves the first's file intact.
TEST_F(BenchCli, SecondSweepIntoTheSameOutIsRefused) {
  std::ofstream(p("slow.yaml")) << "name: slow\nsettings:\n  reps: 2\ngrids:\n  - impl: reference_cpu\n"
                                   "    B: 4\n    N: {from: 100, to: 160, step: 1}\n    D: 4\n";
  const pid_t pid = start({"--sweep", p("slow.yaml"), "--out", p("r"), "--no-table"}, p("child.txt"));
  ASSERT_GE(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && !fs::exists(p("r/slow.json")))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int rc = bench("--sweep " + p("slow.yaml") + " --out " + p("r") + " --no-table");
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("is in use by another sdtw-bench (pid " + std::to_string(pid) + " on host "), std::string::npos)
      << out;
  EXPECT_NE(out.find(", started 20"), std::string::npos) << out;
  // The killed first run resumes alone: complete, no duplicates.
  ASSERT_EQ(bench("--sweep " + p("slow.yaml") + " --out " + p("r") + " --no-table"), 0) << out;
  const Table t = read_csv(p("r/slow.csv"));
  EXPECT_EQ(t.rows.size(), 61u);
}

TEST_F(BenchCli, GpusWithoutAGpuIsAClearError) {
  const std::string cfg = std::string(SDTW_BENCH_CONFIGS) + "/ci.yaml";
  // No GPU visible, also on a machine that has one.
  EXPECT_NE(bench("--sweep " + cfg + " --out " + p("r") + " --gpus all", "CUDA_VISIBLE_DEVICES="), 0);
  EXPECT_TRUE(out.find("--gpus all: this sdtw-bench was built without CUDA") != std::string::npos ||
              out.find("--gpus all: no CUDA device is visible") != std::string::npos)
      << out;
  EXPECT_NE(bench("--sweep " + cfg + " --out " + p("r") + " --gpus 0,0"), 0);
  EXPECT_NE(out.find("--gpus"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(p("r/ci.csv")));
}
