#pragma once
// The result row of one point: its schema (CSV columns, JSON types) and dispositions.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "csv.hpp"
#include "point.hpp"

namespace sdtw::bench {

// CUTLASS-profiler style dispositions.
namespace disposition {
inline const std::string passed = "passed";                // ran; verified within tolerance (or verify off)
inline const std::string failed = "failed";                // ran; value or gradient outside tolerance
inline const std::string not_supported = "not_supported";  // the implementation cannot run this point
inline const std::string out_of_memory = "out_of_memory";  // allocation failed
inline const std::string error = "error";                  // any other exception
}  // namespace disposition

inline constexpr const char* kSchemaVersion = "sdtw-bench/1";

struct Result {
  Point point;
  std::string sweep;
  std::string disposition;
  std::optional<double> time_ms_median, time_ms_min, time_ms_max;
  int reps = 0;
  std::optional<double> peak_mb;  // none: "n/a" (CPU) or not measured
  std::optional<double> value_err, grad_err, value_tol, grad_tol;
  std::string verified;  // "32/32", "4/32 (subsample)", "off", "skipped (...)", "" when not run
  std::string message;   // error text; one line
  double wall_s = 0;     // the whole point: inputs, timing, verification
  std::string gpu;       // the GPU the process ran on (its CUDA_VISIBLE_DEVICES entry); "" for none
};

// Column names in CSV order. The key columns (point.hpp) are among them.
const std::vector<std::string>& result_columns();
std::vector<std::string> result_fields(const Result& r);
// Files written before the `gpu` column get it, empty; any other header is left as it is.
void upgrade_legacy_columns(Table& t);

// One CSV row as a typed JSON object (numbers as numbers, empty as null).
nlohmann::json row_to_json(const std::vector<std::string>& header, const std::vector<std::string>& fields);
// The key of a CSV row (the key columns joined as point_key() does).
std::string row_key(const Table& t, size_t row);

}  // namespace sdtw::bench
