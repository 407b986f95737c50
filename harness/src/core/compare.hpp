#pragma once
// Regression tracking between two result files: per point (matched by key), time and memory
// ratios B/A with a verdict. Time noise is each side's [p10, p90] spread over its reps: the
// intervals overlapping means "same"; otherwise "faster" or "slower". Memory is deterministic
// up to allocator rounding: within `mem_tolerance` (relative) is "same".
#include <optional>
#include <string>
#include <vector>

#include "csv.hpp"

namespace sdtw::bench {

struct CompareEntry {
  std::string key, label;
  std::optional<double> a_ms, b_ms, time_ratio;
  std::string time_verdict;  // same / faster / slower / n/a
  std::optional<double> a_mb, b_mb, mem_ratio;
  std::string mem_verdict;  // same / less / more / n/a
  std::string note;
};

struct CompareReport {
  std::vector<CompareEntry> entries;
  std::vector<std::string> only_a, only_b;  // labels of points in one file only
  size_t faster = 0, slower = 0, same = 0, more_memory = 0, less_memory = 0;
};

// Reads a results .json ("rows") or .csv into a table.
Table load_results(const std::string& path);
CompareReport compare_tables(const Table& a, const Table& b, double mem_tolerance = 0.02, double time_margin = 0.0);
std::string format_report(const CompareReport& r, const std::string& a_name, const std::string& b_name);

}  // namespace sdtw::bench
