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

// The results schema every measuring tool writes (docs/DESIGN.md §5; its Python side is harness/python/sdtw_results).
inline constexpr const char* kSchemaVersion = "sdtw-results/1";
inline constexpr const char* kToolName = "sweep";

struct Result {
  Point point;
  std::string sweep;
  std::string disposition;
  std::optional<double> time_ms_median, time_ms_p10, time_ms_p90;  // nearest rank over the timed steps
  int reps = 0, warmup = 0;
  // MiB; none on the CPU or when not measured. step: the step's peak minus what was allocated just
  // before it (largest over the timed steps); abs: the peak since the point started (inputs included).
  std::optional<double> step_peak_mb, abs_peak_mb;
  std::optional<double> value_err, grad_err, value_tol, grad_tol;
  std::string verified;  // "32/32", "4/32 (subsample)", "off", "skipped (...)", "" when not run
  std::string message;   // error text; one line
  std::optional<uint64_t> seed;  // the seed of the point's inputs; none when none were drawn
  double wall_s = 0;     // the whole point: inputs, timing, verification
  std::string gpu;       // the GPU the process ran on (its CUDA_VISIBLE_DEVICES entry); "" for none
};

// The schema's common columns, in order (equal to sdtw_results.COLUMNS: a test checks it), and the
// sweep's own columns after them.
const std::vector<std::string>& common_columns();
const std::vector<std::string>& sweep_columns();
// Column names in CSV order: the common columns, then the sweep's. The key columns (point.hpp) are among them.
const std::vector<std::string>& result_columns();
std::vector<std::string> result_fields(const Result& r);

// One CSV row as a typed JSON object (numbers as numbers, empty as null).
nlohmann::json row_to_json(const std::vector<std::string>& header, const std::vector<std::string>& fields);
// The key of a CSV row: the key columns joined as point_key() does, then api and mode for a row of
// another tool than the sweep.
std::string row_key(const Table& t, size_t row);

}  // namespace sdtw::bench
