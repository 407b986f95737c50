// End to end on the GPU (label gpu; skipped without one): ours fused and unfused and the Maghoumi
// baseline through a small sweep (every row passed, CUDA-event times, allocator peaks, device
// metadata), Maghoumi's length limit as not_supported, profile, eval on CUDA against the CPU (the
// library's options too), the peak estimates against the measured peaks, and `--gpus all` against a
// plain sweep.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli_fixture.hpp"
#include "csv.hpp"
#include "row.hpp"

using namespace sdtw::bench;
using BenchGpu = sdtw::bench::test_support::BenchCliFixture;
namespace fs = std::filesystem;

namespace {

bool have_gpu(BenchGpu& t) { return t.bench("list") == 0 && t.out.find("GPU: none") == std::string::npos; }

double sdtw_value(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("sdtw = ([-+0-9.eE]+)"))) return std::nan("");
  return std::stod(m[1]);
}

}  // namespace

TEST_F(BenchGpu, SmallSweepPassesWithTimesAndPeaks) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  std::ofstream(p("gpu.yaml")) << "name: gpu\nsettings:\n  reps: 3\ngrids:\n"
                                  "  - impl: [ours_fused, ours_unfused, maghoumi]\n    B: [1, 4]\n    N: [64, 200]\n"
                                  "    D: [1, 16]\n"
                                  "  - impl: [ours_fused, ours_unfused, maghoumi]\n    B: 3\n    N: 150\n    M: 130\n"
                                  "    D: 8\n    gamma: 0.1\n    bandwidth: [null, 25]\n"
                                  "  - name: too-long\n    impl: maghoumi\n    B: 1\n    N: 4096\n    D: 2\n";
  ASSERT_EQ(bench("--sweep " + p("gpu.yaml") + " --out " + p("r")), 0) << out;
  const Table t = read_csv(p("r/gpu.csv"));
  ASSERT_EQ(t.rows.size(), 3u * 8u + 3u * 2u + 1u) << out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string what = t.at(r, "impl") + " N=" + t.at(r, "N") + ": " + t.at(r, "message");
    if (t.at(r, "N") == "4096") {
      EXPECT_EQ(t.at(r, "disposition"), "not_supported") << what;
      continue;
    }
    EXPECT_EQ(t.at(r, "disposition"), "passed") << what;
    EXPECT_EQ(t.at(r, "device"), "cuda");
    EXPECT_GT(std::stod(t.at(r, "time_ms_p10")), 0.0) << what;
    EXPECT_LE(std::stod(t.at(r, "time_ms_p10")), std::stod(t.at(r, "time_ms_median")));
    EXPECT_LE(std::stod(t.at(r, "time_ms_median")), std::stod(t.at(r, "time_ms_p90")));
    // The step's own memory is part of the absolute peak, which also holds what was allocated before.
    EXPECT_GT(std::stod(t.at(r, "step_peak_mb")), 0.0) << what;
    EXPECT_LE(std::stod(t.at(r, "step_peak_mb")), std::stod(t.at(r, "abs_peak_mb"))) << what;
    // The peak includes at least the leaf inputs and their gradients.
    const double B = std::stod(t.at(r, "B")), N = std::stod(t.at(r, "N")), M = std::stod(t.at(r, "M")),
                 D = std::stod(t.at(r, "D"));
    EXPECT_GE(std::stod(t.at(r, "abs_peak_mb")) * 1024 * 1024, 2 * 4 * B * (N + M) * D) << what;
  }
  const auto j = nlohmann::json::parse(read_file(p("r/gpu.json")));
  EXPECT_FALSE(j["metadata"]["gpu"].is_null());
  EXPECT_FALSE(j["metadata"]["cuda_runtime"].is_null());
  EXPECT_FALSE(j["metadata"]["driver"].is_null());
}

// A point's peak is what its own implementation allocates: ours_fused after an ours_unfused point
// that runs cuBLAS (B*N*M*D > 2^23: the bmm form of the cost, workspaces in both passes) measures
// the same peak as alone, because the harness frees the cuBLAS workspaces between points.
TEST_F(BenchGpu, PeakDoesNotDependOnTheSweepOrder) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  const std::string fused = "  - impl: ours_fused\n    B: 8\n    N: 128\n    D: 16\n";
  std::ofstream(p("alone.yaml")) << "name: alone\nsettings:\n  reps: 2\ngrids:\n" << fused;
  std::ofstream(p("after.yaml")) << "name: after\nsettings:\n  reps: 2\ngrids:\n"
                                 << "  - impl: ours_unfused\n    B: 8\n    N: 128\n    D: 128\n" << fused;
  ASSERT_EQ(bench("--sweep " + p("alone.yaml") + " --out " + p("r")), 0) << out;
  ASSERT_EQ(bench("--sweep " + p("after.yaml") + " --out " + p("r")), 0) << out;
  const Table alone = read_csv(p("r/alone.csv")), after = read_csv(p("r/after.csv"));
  ASSERT_EQ(alone.rows.size(), 1u);
  ASSERT_EQ(after.rows.size(), 2u);
  ASSERT_EQ(after.at(1, "impl"), "ours_fused");
  EXPECT_EQ(after.at(1, "disposition"), "passed") << after.at(1, "message");
  EXPECT_NEAR(std::stod(after.at(1, "abs_peak_mb")), std::stod(alone.at(0, "abs_peak_mb")), 1.0 / 1024)
      << "ours_unfused's peak: " << after.at(0, "abs_peak_mb") << " MiB";
}

TEST_F(BenchGpu, ProfileRuns) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  for (const char* impl : {"ours_fused", "ours_unfused", "maghoumi"}) {
    EXPECT_EQ(bench(std::string("profile --impl ") + impl + " -B 2 -N 128 -D 8 --reps 2 --warmup 1"), 0) << out;
    EXPECT_NE(out.find("rep 2:"), std::string::npos) << out;
  }
}

TEST_F(BenchGpu, EvalOnCudaMatchesCpu) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  {
    std::ofstream x(p("x.csv")), y(p("y.csv"));
    for (int i = 0; i < 50; ++i) x << std::sin(0.1 * i) << "," << std::cos(0.2 * i) << "\n";
    for (int i = 0; i < 40; ++i) y << std::sin(0.12 * i + 0.3) << "," << std::cos(0.25 * i) << "\n";
  }
  ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --impl reference_cpu --gamma 0.1"), 0) << out;
  const double ref = sdtw_value(out);
  for (const char* impl : {"ours_fused", "ours_unfused"}) {
    ASSERT_EQ(bench("eval " + p("x.csv") + " " + p("y.csv") + " --device cuda --dtype float32 --gamma 0.1 --grad --impl " +
                    impl + " --grad-x-out " + p("gx.csv")),
              0)
        << out;
    EXPECT_NEAR(sdtw_value(out), ref, 1e-5 * std::max(1.0, std::abs(ref))) << impl << "\n" << out;
  }
}

// The library's options on CUDA give the CPU's float64 value; warp and subsequence are not fused, so
// ours_fused refuses them by name and the default picks ours_unfused.
TEST_F(BenchGpu, EvalLibraryOptionsOnCudaMatchCpu) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  {
    std::ofstream x(p("x.csv")), y(p("y.csv"));
    for (int i = 0; i < 30; ++i) x << std::sin(0.1 * i) << "," << std::cos(0.2 * i) + 1.5 << "\n";
    for (int i = 0; i < 45; ++i) y << std::sin(0.12 * i + 0.3) << "," << std::cos(0.25 * i) + 1.5 << "\n";
  }
  const std::string xy = "eval " + p("x.csv") + " " + p("y.csv") + " --gamma 0.1 ";
  for (const char* options : {"--dist cosine", "--dist l1", "--dist euclidean", "--dist negative_dot",
                              "--sakoe-chiba-radius 2", "--global-constraint itakura", "--warp 0.2", "--subsequence"}) {
    SCOPED_TRACE(options);
    ASSERT_EQ(bench(xy + options + " --impl ours_cpu"), 0) << out;
    const double cpu = sdtw_value(out);
    const std::string o = options;
    const bool fusable = o.find("--warp") == std::string::npos && o.find("--subsequence") == std::string::npos;
    for (const char* impl : {"auto", "ours_fused", "ours_unfused"}) {
      const int rc = bench(xy + options + " --device cuda --dtype float64 --grad --impl " + impl);
      if (!fusable && std::string(impl) == "ours_fused") {
        EXPECT_NE(rc, 0) << out;
        EXPECT_NE(out.find("ours_fused is fused, and warp and subsequence are not"), std::string::npos) << out;
        continue;
      }
      ASSERT_EQ(rc, 0) << impl << "\n" << out;
      if (std::string(impl) == "auto") {
        EXPECT_NE(out.find(fusable ? "impl ours_fused" : "impl ours_unfused"), std::string::npos) << out;
      }
      EXPECT_NEAR(sdtw_value(out), cpu, 1e-9 * std::max(1.0, std::abs(cpu))) << impl << "\n" << out;
    }
  }
}

// On the GPU: the dry-run estimate against the allocator's measured peak, for
// each implementation, both dtypes, a band and a divergence; and a point far over the device's
// memory is out_of_memory with its estimate before allocating.
TEST_F(BenchGpu, PeakEstimateMatchesMeasuredPeak) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  std::ofstream(p("est.yaml")) << "name: est\nsettings:\n  reps: 2\n  verify: false\ngrids:\n"
                                  "  - impl: [ours_fused, ours_unfused, maghoumi]\n    dtype: [float32, float64]\n"
                                  "    B: [16, 2]\n    N: [512, 1000]\n    D: [64, 4]\n"
                                  "  - impl: [ours_fused, ours_unfused]\n    B: 4\n    N: 2048\n    M: 1900\n    D: 8\n"
                                  "    bandwidth: [null, 300]\n    normalize: [false, true]\n"
                                  "  - name: huge\n    impl: [ours_fused, ours_unfused]\n    B: 64\n    N: 1000000\n    D: 64\n";
  ASSERT_EQ(bench("--sweep " + p("est.yaml") + " --dry-run"), 0) << out;
  std::map<std::string, double> estimate;  // "index" -> bytes
  const std::regex line("^([0-9]+)\t[^\t]+\t[^\t]+\tpeak ~([0-9.]+) (B|KiB|MiB|GiB|TiB|PiB) GPU");
  const std::map<std::string, double> unit = {{"B", 1.0},         {"KiB", 1024.0},          {"MiB", 1048576.0},
                                              {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"PiB", 1125899906842624.0}};
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) estimate[m[1]] = std::stod(m[2]) * unit.at(m[3]);
  }
  ASSERT_EQ(estimate.size(), 48u + 8u + 2u) << out;
  ASSERT_EQ(bench("--sweep " + p("est.yaml") + " --out " + p("r") + " --no-table"), 0) << out;
  const Table t = read_csv(p("r/est.csv"));
  ASSERT_EQ(t.rows.size(), estimate.size());
  std::string ratios;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string what = t.at(r, "impl") + " " + t.at(r, "dtype") + " B=" + t.at(r, "B") + " N=" + t.at(r, "N") +
                             " M=" + t.at(r, "M") + " D=" + t.at(r, "D") + " band=" + t.at(r, "bandwidth") +
                             " norm=" + t.at(r, "normalize");
    if (t.at(r, "N") == "1000000") {
      EXPECT_EQ(t.at(r, "disposition"), "out_of_memory") << what << ": " << t.at(r, "message");
      EXPECT_NE(t.at(r, "message").find("of GPU memory (not allocated)"), std::string::npos) << t.at(r, "message");
      continue;
    }
    if (t.at(r, "disposition") != "passed") {
      EXPECT_EQ(t.at(r, "disposition"), "not_supported") << what << ": " << t.at(r, "message");
      continue;
    }
    const double measured = std::stod(t.at(r, "abs_peak_mb")) * 1048576.0, est = estimate.at(t.at(r, "point"));
    ratios += what + ": estimate / measured = " + std::to_string(est / measured) + "\n";
    EXPECT_GT(est, 0.67 * measured) << what;
    EXPECT_LT(est, 1.5 * measured) << what;
  }
  std::cout << ratios;
}

// `--gpus all` (one worker per GPU, here maybe one) gives the rows of a plain sweep,
// each naming its GPU.
TEST_F(BenchGpu, GpusAllGivesTheRowsOfAPlainSweep) {
  if (!have_gpu(*this)) GTEST_SKIP() << "no CUDA device";
  const std::string quick = std::string(SDTW_BENCH_CONFIGS) + "/quick.yaml";
  ASSERT_EQ(bench("--sweep " + quick + " --out " + p("plain") + " --no-table"), 0) << out;
  ASSERT_EQ(bench("--sweep " + quick + " --out " + p("par") + " --gpus all --no-table"), 0) << out;
  const Table plain = read_csv(p("plain/quick.csv")), par = read_csv(p("par/quick.csv"));
  ASSERT_EQ(par.rows.size(), plain.rows.size());
  std::set<std::string> gpus;
  for (size_t r = 0; r < plain.rows.size(); ++r) {
    EXPECT_EQ(row_key(par, r), row_key(plain, r));
    EXPECT_EQ(par.at(r, "disposition"), plain.at(r, "disposition")) << row_key(par, r) << ": " << par.at(r, "message");
    EXPECT_FALSE(par.at(r, "gpu").empty());
    gpus.insert(par.at(r, "gpu"));
  }
  EXPECT_FALSE(fs::exists(p("par/quick.workers")));
  std::cout << "rows on " << gpus.size() << " GPU(s)\n";
  // Rerun: everything is already there; nothing runs again.
  ASSERT_EQ(bench("--sweep " + quick + " --out " + p("par") + " --gpus all --no-table"), 0) << out;
  EXPECT_EQ(read_csv(p("par/quick.csv")).rows, par.rows);
}
