// Random YAML configs, valid and broken, through the config loader: each one either parses to a
// sweep whose every point is valid, or fails with a ConfigError that names the file, a line and a
// key (an integer too large for 64 bits is out of range, never a format error). Any other
// exception, a hang or a crash fails. 3000 cases, well under a second.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "config.hpp"
#include "rapidcheck_seed.hpp"

using namespace sdtw::bench;

namespace {

// Uniform draws: RapidCheck scales inRange with the case's size, which makes small cases all 0.
int roll(int lo, int hi) { return *rc::gen::resize(100, rc::gen::inRange(lo, hi)); }
std::string pick(const std::vector<std::string>& v) { return v[static_cast<size_t>(roll(0, static_cast<int>(v.size())))]; }

// A value for an axis: mostly plausible, sometimes of the wrong kind or out of range.
std::string axis_value(const std::string& axis) {
  const std::vector<std::string> ints = {"1", "2", "3", "8", "17", "64", "0", "-1", "1e3", "x", "~", "9223372036854775807",
                                         "99999999999999999999", "2.5", "9223372036854775808",
                                         "-9223372036854775809", "18446744073709551616"};
  if (axis == "impl")
    return pick({"reference_cpu", "ours_cpu", "maghoumi", "ours_fused", "[ours_cpu, reference_cpu]", "bogus", "[]",
                 "{a: 1}"});
  if (axis == "device") return pick({"cpu", "cuda", "[cpu, cuda]", "tpu", "default", "1"});
  if (axis == "dtype") return pick({"float32", "float64", "[float32, float64]", "half", "~"});
  if (axis == "gamma") return pick({"1", "0.1", "[1, 0.01]", "0", "-1", ".nan", ".inf", "1e-300", "abc", "[1, [2]]"});
  if (axis == "bandwidth") return pick({"null", "0", "4", "[null, 8]", "-3", "x", "100"});
  if (axis == "normalize") return pick({"false", "true", "[false, true]", "maybe", "2"});
  if (axis == "M") return pick({"same", "8", "[8, 12]", "0", "same2"});
  const int kind = roll(0, 10);
  if (kind < 5) return pick(ints);
  if (kind < 8) return "[" + pick(ints) + ", " + pick(ints) + "]";
  std::string range = "{from: " + pick(ints) + ", to: " + pick({"4", "64", "100000", "100001", "9223372036854775807", "0"});
  const int rkind = roll(0, 5);
  if (rkind == 0) range += ", mul: " + pick({"2", "1", "3", "x"});
  if (rkind == 1) range += ", step: " + pick({"1", "7", "0", "-2"});
  if (rkind == 2) range += ", mul: 2, step: 1";
  if (rkind == 3) range += ", sep: 1";
  return range + "}";
}

std::string valid_value(const std::string& axis) {
  if (axis == "impl") return pick({"reference_cpu", "[ours_cpu, maghoumi]", "ours_fused"});
  if (axis == "device") return "cpu";
  if (axis == "dtype") return pick({"float32", "float64"});
  if (axis == "gamma") return pick({"1", "[0.1, 1e-3]"});
  if (axis == "bandwidth") return pick({"null", "0", "[null, 4]"});
  if (axis == "normalize") return pick({"false", "[false, true]"});
  if (axis == "M") return pick({"same", "[16, 18]"});
  return pick({"2", "16", "[1, 3]", "{from: 4, to: 64, mul: 2}", "{from: 1, to: 9, step: 4}"});
}

// Valid nine times in ten: most damage is then one bad value in an otherwise good config.
std::string some_value(const std::string& axis) { return roll(0, 10) ? valid_value(axis) : axis_value(axis); }

std::string random_config() {
  std::string text;
  if (roll(0, 3) == 0) text += "name: " + (roll(0, 4) ? pick({"fz", "ok_name"}) : pick({"a b", "[x]", "''"})) + "\n";
  if (roll(0, 3) == 0) {
    text += "settings:\n  reps: 2\n";
    for (const auto& k : {"warmup", "seed", "verify", "verify_max_cells", "repz"})
      if (roll(0, 4) == 0)
        text += std::string("  ") + k + ": " +
                (roll(0, 4) && std::string(k) != "repz" && std::string(k) != "verify"
                     ? pick({"1", "5", "1000"})
                     : pick({"0", "1", "5", "-1", "true", "false", "x", "100001", "[1]", "18446744073709551616"})) +
                "\n";
  }
  if (roll(0, 4) == 0) text += "defaults:\n  impl: " + some_value("impl") + "\n  D: " + some_value("D") + "\n";
  if (roll(0, 12) != 0) {
    text += "grids:\n";
    const int grids = roll(0, 8) == 0 ? 0 : roll(1, 4);
    for (int g = 0; g < grids; ++g) {
      bool first = true;
      auto line = [&](const std::string& key, const std::string& value) {
        text += (first ? "  - " : "    ") + key + ": " + value + "\n";
        first = false;
      };
      if (roll(0, 3) == 0) line("name", pick({"g", "h", "g", "k", "[n]"}));
      // The required axes are usually present.
      for (const std::string axis : {"impl", "B", "N", "D"})
        if (roll(0, 8) != 0) line(axis, some_value(axis));
      for (const std::string axis : {"device", "dtype", "M", "gamma", "bandwidth", "normalize"})
        if (roll(0, 4) == 0) line(axis, some_value(axis));
      if (roll(0, 12) == 0) line("gama", "1");  // a typo
      if (first) text += "  - {}\n";
    }
    if (grids == 0) text += "  []\n";
  }
  // Textual damage: a character removed, inserted or the text cut.
  const int damage = roll(0, 9);
  if (damage == 0 && !text.empty()) text.erase(static_cast<size_t>(roll(0, static_cast<int>(text.size()))), 1);
  if (damage == 1 && !text.empty())
    text.insert(static_cast<size_t>(roll(0, static_cast<int>(text.size()))), 1,
                std::string(":[]{}-,&*!#\n '\"\t|>%@`")[static_cast<size_t>(roll(0, 20))]);
  if (damage == 2 && !text.empty()) text.resize(static_cast<size_t>(roll(0, static_cast<int>(text.size()))));
  return text;
}

int valid_configs = 0, config_errors = 0;

}  // namespace

TEST(BenchConfigFuzz, RandomConfigsParseOrNameTheirKey) {
  sdtw::test::fix_rapidcheck_seed("max_success=3000");  // the environment may override (seed=...)
  const bool ok = rc::check("a config parses to valid points or fails naming file, line and key", [] {
    const std::string text = random_config();
    try {
      const SweepConfig cfg = parse_config(text, "fuzz.yaml");
      ++valid_configs;
      RC_ASSERT(!cfg.points.empty());
      RC_ASSERT(cfg.points.size() <= static_cast<size_t>(kMaxSweepPoints));
      for (size_t i = 0; i < cfg.points.size(); ++i) {
        const Point& p = cfg.points[i];
        RC_ASSERT(p.index == static_cast<int64_t>(i));
        RC_ASSERT(p.batch >= 1 && p.n >= 1 && p.m >= 1 && p.dim >= 1);
        RC_ASSERT(std::isfinite(p.gamma) && p.gamma >= 0);
        RC_ASSERT(!p.bandwidth || (*p.bandwidth >= 1 && std::llabs(p.n - p.m) <= *p.bandwidth));
        RC_ASSERT(p.device == "cpu" || p.device == "cuda");
        RC_ASSERT(p.dtype == "float32" || p.dtype == "float64");
      }
    } catch (const ConfigError& e) {
      ++config_errors;
      const std::string what = e.what();
      RC_ASSERT(e.file() == "fuzz.yaml");
      RC_ASSERT(!e.key().empty());
      RC_ASSERT(what.rfind("fuzz.yaml:", 0) == 0);
      RC_ASSERT(what.find(": key '" + e.key() + "': ") != std::string::npos);
      const auto format = what.find("expected an integer, got '");
      if (format != std::string::npos) {
        const auto value = what.substr(format + 26, what.size() - 1 - format - 26);  // up to the closing quote
        const auto digits = value.find_first_not_of("+-") == std::string::npos ? value.size() : value.find_first_not_of("+-");
        const bool whole = digits <= 1 && digits < value.size() &&
                           value.find_first_not_of("0123456789", digits) == std::string::npos;
        if (whole) RC_FAIL("an integer too large for 64 bits called a format error: " + what);
      }
    }
    // Anything else escapes and fails the property with the text that caused it.
  });
  EXPECT_TRUE(ok) << sdtw::test::rapidcheck_seed();
  // Both outcomes must be common, or the generator tests too little of one of them.
  std::printf("%d valid configs, %d config errors\n", valid_configs, config_errors);
  EXPECT_GT(valid_configs, 150);
  EXPECT_GT(config_errors, 900);
}
