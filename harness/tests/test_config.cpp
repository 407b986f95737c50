// Config parsing: the shipped configs parse to the expected grids; bad configs are rejected with
// the file, the line and the key.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "config.hpp"

using namespace sdtw::bench;

namespace {

std::string configs(const std::string& f) { return std::string(SDTW_BENCH_CONFIGS) + "/" + f; }

// Parses `text` expecting a ConfigError at `line` naming `key`; returns the message.
std::string expect_error(const std::string& text, int line, const std::string& key) {
  try {
    parse_config(text, "bad.yaml");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_EQ(e.file(), "bad.yaml");
    EXPECT_NE(std::string(e.what()).find("bad.yaml:" + std::to_string(line) + ": key '" + key + "'"), std::string::npos)
        << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

const char* kGood = R"(name: t
settings:
  reps: 3
grids:
  - impl: [ours_fused, maghoumi]
    B: [1, 2]
    N: {from: 64, to: 256, mul: 2}
    D: 4
)";

}  // namespace

TEST(BenchConfig, CartesianProductInOrder) {
  const auto cfg = parse_config(kGood, "good.yaml");
  EXPECT_EQ(cfg.name, "t");
  EXPECT_EQ(cfg.settings.reps, 3);
  EXPECT_EQ(cfg.settings.warmup, 1);
  EXPECT_EQ(cfg.settings.warmup_min_ms, 0);
  ASSERT_EQ(cfg.points.size(), 2u * 2u * 3u);
  EXPECT_EQ(cfg.points[0].impl, "ours_fused");
  EXPECT_EQ(cfg.points[0].device, "cuda");
  EXPECT_EQ(cfg.points[0].n, 64);
  EXPECT_EQ(cfg.points[0].m, 64);  // M defaults to N
  EXPECT_EQ(cfg.points[2].n, 256);
  EXPECT_EQ(cfg.points.back().impl, "maghoumi");
  for (size_t i = 0; i < cfg.points.size(); ++i) EXPECT_EQ(cfg.points[i].index, static_cast<int64_t>(i));
}

TEST(BenchConfig, WarmupMinMs) {
  EXPECT_EQ(parse_config("settings:\n  warmup_min_ms: 250\ngrids:\n  - impl: ours_cpu\n    B: 1\n    N: 8\n    D: 1\n", "w.yaml")
                .settings.warmup_min_ms,
            250);
}

TEST(BenchConfig, DefaultsAndDuplicatesAcrossGrids) {
  const auto cfg = parse_config(R"(defaults:
  impl: reference_cpu
  D: 2
grids:
  - name: a
    B: 1
    N: [8, 16]
  - name: b
    B: 1
    N: [16, 32]
    gamma: [1, 0.1]
)", "d.yaml");
  EXPECT_EQ(cfg.name, "d");
  // a: N 8, 16; b: N 16 (g 1 duplicate of a), 16 g 0.1, 32 g 1, 32 g 0.1
  ASSERT_EQ(cfg.points.size(), 5u);
  EXPECT_EQ(cfg.points[1].grid, "a");
  EXPECT_EQ(cfg.points[2].grid, "b");
  EXPECT_EQ(cfg.points[2].gamma, 0.1);
  EXPECT_EQ(cfg.points[0].device, "cpu");
}

TEST(BenchConfig, DeviceAxisFiltersFixedDeviceImplementations) {
  const auto cfg = parse_config(R"(grids:
  - impl: [ours_cpu, maghoumi, reference_cpu]
    device: cpu
    B: 1
    N: 4
    D: 1
    bandwidth: [null, 2]
)", "x.yaml");
  ASSERT_EQ(cfg.points.size(), 6u);
  for (const auto& p : cfg.points) EXPECT_EQ(p.device, "cpu");
  EXPECT_FALSE(cfg.points[0].bandwidth.has_value());
  EXPECT_EQ(*cfg.points[1].bandwidth, 2);
}

TEST(BenchConfig, ShippedConfigsParse) {
  const auto paper = load_config(configs("paper.yaml"));
  EXPECT_EQ(paper.name, "paper");
  // seed grid 2*4*2 + length 6 + dimension 6, minus B=32 N=256 D=128 listed twice, times 3 impls
  EXPECT_EQ(paper.points.size(), (16u + 6u + 6u - 1u) * 3u);
  std::set<std::string> impls;
  for (const auto& p : paper.points) {
    impls.insert(p.impl);
    EXPECT_EQ(p.gamma, 1.0);
  }
  EXPECT_EQ(impls, (std::set<std::string>{"ours_fused", "ours_unfused", "maghoumi"}));
  for (const char* f : {"quick.yaml", "cpu.yaml", "ci.yaml", "long.yaml"}) {
    const auto c = load_config(configs(f));
    EXPECT_FALSE(c.points.empty()) << f;
  }
  for (const auto& p : load_config(configs("cpu.yaml")).points) EXPECT_EQ(p.device, "cpu");
  for (const auto& p : load_config(configs("ci.yaml")).points) EXPECT_EQ(p.device, "cpu");
  // The full state up to 2^16; past it only the checkpointed mode, up to 2^20.
  int64_t max_full = 0, max_checkpoint = 0;
  for (const auto& p : load_config(configs("long.yaml")).points) {
    int64_t& max_n = p.impl == "ours_checkpoint" ? max_checkpoint : max_full;
    max_n = std::max(max_n, p.n);
    EXPECT_EQ(p.impl.rfind("ours", 0), 0u);
  }
  EXPECT_EQ(max_full, 65536);
  EXPECT_EQ(max_checkpoint, int64_t{1} << 20);
}

TEST(BenchConfig, RejectsSyntaxError) { expect_error("grids:\n  - impl: [ours_fused\n    B: 1\n", 3, "(syntax)"); }

TEST(BenchConfig, RejectsUnknownKeyWithLine) {
  const auto msg = expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 8\n    D: 1\n    gama: 0.1\n", 6, "gama");
  EXPECT_NE(msg.find("unknown key"), std::string::npos);
}

TEST(BenchConfig, IntegerTooLargeForSixtyFourBitsIsOutOfRangeNotAFormatError) {
  for (const char* big : {"9223372036854775808", "-9223372036854775809", "99999999999999999999"}) {
    const auto msg = expect_error(std::string("grids:\n  - impl: ours_fused\n    B: 1\n    N: ") + big + "\n    D: 1\n", 4,
                                  "N");
    EXPECT_NE(msg.find(std::string("integer ") + big + " is out of range: it must fit in 64 bits"), std::string::npos)
        << msg;
  }
  const auto seed = expect_error("settings:\n  seed: 18446744073709551616\ngrids: []\n", 2, "seed");
  EXPECT_NE(seed.find("out of range"), std::string::npos) << seed;
  const auto word = expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 12x\n    D: 1\n", 4, "N");
  EXPECT_NE(word.find("expected an integer, got '12x'"), std::string::npos) << word;
}

TEST(BenchConfig, RejectsUnknownSetting) { expect_error("settings:\n  repz: 3\ngrids: []\n", 2, "repz"); }

TEST(BenchConfig, RejectsDuplicateKey) { expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    B: 2\n    N: 8\n    D: 1\n", 4, "B"); }

TEST(BenchConfig, RejectsBadValues) {
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: [8, 0]\n    D: 1\n", 4, "N");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 8\n    D: x\n", 5, "D");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 8\n    D: 1\n    gamma: -1\n", 6, "gamma");
  expect_error("grids:\n  - impl: ours_fast\n    B: 1\n    N: 8\n    D: 1\n", 2, "impl");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 8\n    D: 1\n    dtype: half\n", 6, "dtype");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: 8\n    D: 1\n    device: tpu\n", 6, "device");
  expect_error("settings:\n  reps: 0\ngrids: []\n", 2, "reps");
  expect_error("settings:\n  warmup_min_ms: -1\ngrids: []\n", 2, "warmup_min_ms");
  expect_error("settings:\n  warmup_min_ms: 60001\ngrids: []\n", 2, "warmup_min_ms");
  expect_error("grids:\n  - impl: ours_fused\n    B: []\n    N: 8\n    D: 1\n", 3, "B");
}

TEST(BenchConfig, RejectsBadRanges) {
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: {from: 64, to: 8, mul: 2}\n    D: 1\n", 4, "N.to");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: {from: 8, to: 64, mul: 1}\n    D: 1\n", 4, "N.mul");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: {from: 8, to: 64}\n    D: 1\n", 4, "N");
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    N: {from: 8, to: 64, mul: 2, sep: 1}\n    D: 1\n", 4, "sep");
}

TEST(BenchConfig, RejectsContradictions) {
  // The band cannot reach the end cell when |N - M| > bandwidth.
  const auto msg = expect_error(
      "grids:\n  - impl: ours_fused\n    B: 1\n    N: 100\n    M: 50\n    D: 1\n    bandwidth: [null, 10]\n", 7,
      "bandwidth");
  EXPECT_NE(msg.find("N=100, M=50"), std::string::npos) << msg;
  // A CPU-only implementation on a CUDA-only grid.
  expect_error("grids:\n  - impl: [ours_fused, reference_cpu]\n    device: cuda\n    B: 1\n    N: 8\n    D: 1\n", 2, "impl");
  expect_error("settings:\n  verify: false\n  verify_max_cells: 10\ngrids: []\n", 3, "verify_max_cells");
  // A required axis missing from both the grid and the defaults.
  expect_error("grids:\n  - impl: ours_fused\n    B: 1\n    D: 1\n", 2, "N");
  expect_error("grids:\n  - name: a\n    impl: ours_fused\n    B: 1\n    N: 8\n    D: 1\n  - name: a\n    impl: ours_cpu\n"
               "    B: 1\n    N: 8\n    D: 1\n",
               7, "name");
}

TEST(BenchConfig, RejectsMissingOrEmptyGrids) {
  expect_error("name: x\n", 1, "grids");
  expect_error("grids: []\n", 1, "grids");
}

TEST(BenchConfig, FileErrorsNameThePath) {
  try {
    load_config(std::string(SDTW_BENCH_TEST_DATA) + "/bad_band.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bad_band.yaml:9: key 'bandwidth'"), std::string::npos) << e.what();
  }
}

// A range of 1e8 values is refused at its key before any value is built (a parser that expands
// first would need 7 GB), and so is a grid whose product is over the limit.
TEST(BenchConfig, HugeRangesAndGridsAreRefusedBeforeExpanding) {
  const auto t0 = std::chrono::steady_clock::now();
  auto msg = expect_error("grids:\n  - impl: reference_cpu\n    B: 1\n    N: {from: 1, to: 100000000, step: 1}\n    D: 1\n",
                          4, "N");
  EXPECT_NE(msg.find("the range has 100000000 values; a sweep holds at most 100000 points"), std::string::npos) << msg;
  // Each axis under the limit, the product over it.
  msg = expect_error("grids:\n  - name: big\n    impl: reference_cpu\n    B: {from: 1, to: 1000, step: 1}\n"
                     "    N: {from: 1, to: 1000, step: 1}\n    D: 1\n",
                     2, "grids");
  EXPECT_NE(msg.find("grid 'big' has 1000000 points"), std::string::npos) << msg;
  // Several grids that together pass the limit.
  std::string text = "grids:\n";
  for (int g = 0; g < 3; ++g)
    text += "  - impl: reference_cpu\n    B: " + std::to_string(g + 1) + "\n    N: {from: 1, to: 40000, step: 1}\n    D: 1\n";
  msg = expect_error(text, 10, "grids");
  EXPECT_NE(msg.find("(80000 before it)"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  // At the limit is fine; a geometric range up to the largest integer ends (no overflow).
  EXPECT_EQ(parse_config("grids:\n  - impl: reference_cpu\n    B: 1\n    N: {from: 1, to: 100000, step: 1}\n    D: 1\n",
                         "ok.yaml").points.size(),
            100000u);
  const auto geo = parse_config(
      "grids:\n  - impl: reference_cpu\n    B: 1\n    N: {from: 1, to: 9223372036854775807, mul: 2}\n    D: 1\n", "g.yaml");
  ASSERT_EQ(geo.points.size(), 63u);
  EXPECT_EQ(geo.points.back().n, int64_t{1} << 62);
  const auto step = parse_config(
      "grids:\n  - impl: reference_cpu\n    B: 1\n    N: {from: 9223372036854775800, to: 9223372036854775807, step: 5}\n"
      "    D: 1\n",
      "s.yaml");
  ASSERT_EQ(step.points.size(), 2u);
  EXPECT_EQ(step.points.back().n, 9223372036854775805);
}

// bandwidth 0 means no band, as in sdtw_torch and softdtw-cuda-torch.
TEST(BenchConfig, BandwidthZeroMeansNoBand) {
  const auto cfg = parse_config("grids:\n  - impl: reference_cpu\n    B: 1\n    N: 8\n    M: 12\n    D: 1\n"
                                "    bandwidth: [0, null, 4]\n",
                                "b.yaml");
  ASSERT_EQ(cfg.points.size(), 2u);  // 0 and null are the same point
  EXPECT_FALSE(cfg.points[0].bandwidth.has_value());
  EXPECT_EQ(*cfg.points[1].bandwidth, 4);
}

// Keys that are lists or mappings, and a grid name that is not a word: config errors with a line.
TEST(BenchConfig, OddKeysAreConfigErrors) {
  expect_error("grids:\n  - impl: reference_cpu\n    [B]: 1\n    N: 8\n    D: 1\n", 3, "[B]");
  expect_error("? {a: 1}\n: 2\ngrids: []\n", 1, "{a: 1}");
  expect_error("grids:\n  - name: [a]\n    impl: reference_cpu\n    B: 1\n    N: 8\n    D: 1\n", 2, "name");
}
