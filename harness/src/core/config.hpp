#pragma once
// Sweep configs: YAML -> settings + the ordered, de-duplicated list of points. The schema is
// documented in configs/README.md. Every error names the file, the line and the key.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "point.hpp"

namespace sdtw::bench {

// Points one sweep may hold: more is a typo in a range, and is refused before anything is built.
inline constexpr int64_t kMaxSweepPoints = 100000;

struct Settings {
  int warmup = 1;                          // untimed steps before the timed ones
  int warmup_min_ms = 0;                   // and at least this long of them (clocks, lazy loading)
  int reps = 5;                            // timed steps; nearest-rank median, p10 and p90 are reported
  uint64_t seed = 0;                       // inputs of a point are drawn from seed + its key
  bool verify = true;                      // compare value and gradient with the float64 reference
  int64_t verify_max_cells = 1LL << 25;    // verified pairs * N * M stays under this (subsample)
};

struct SweepConfig {
  std::string name;  // "name:" or the file stem
  std::string path;
  std::string text;  // the file's bytes, stored in the JSON metadata
  Settings settings;
  std::vector<Point> points;
};

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& file, int line, const std::string& key, const std::string& what);
  const std::string& file() const { return file_; }
  int line() const { return line_; }  // 1-based; 0 when unknown
  const std::string& key() const { return key_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
};

SweepConfig load_config(const std::string& path);
// Parses YAML text; `name_for_errors` stands for the file in messages and gives the default name.
SweepConfig parse_config(const std::string& text, const std::string& name_for_errors);

}  // namespace sdtw::bench
