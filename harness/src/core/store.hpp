#pragma once
// A sweep's result files: the CSV (rows appended and flushed as points finish), its JSON sibling
// (rewritten after each row, so both are always complete) and the runs log (one line of metadata
// per invocation, appended, so a damaged JSON never loses the history). Reopening resumes.
#include <nlohmann/json.hpp>

#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "csv.hpp"
#include "row_check.hpp"
#include "lock.hpp"
#include "row.hpp"

namespace sdtw::bench {

// {"schema", "tool", "metadata" (the latest run), "runs" (every run that wrote rows), "columns", "rows"}.
nlohmann::json results_json(const Table& t, const nlohmann::json& runs);

// "dir/x.csv" -> "dir/x.json", "dir/x.runs.jsonl" and "dir/x.rejected.csv".
std::string json_sibling(const std::string& csv_path);
std::string runs_log_path(const std::string& csv_path);
std::string rejected_path(const std::string& csv_path);
// The runs of a results file: its log (a torn last line skipped), else the JSON sibling's
// "runs" (files written before the log existed), else none.
nlohmann::json load_runs(const std::string& csv_path);
// Writes the whole log (after a merge, or to start one from older JSON runs).
void write_runs_log(const std::string& csv_path, const nlohmann::json& runs);

// A results CSV of any tool read and checked, the file left as it is: invalid and duplicated rows
// apart; `stale` when the file differs from `rows.kept` (torn tail, rows set apart). Throws
// SchemaMismatch when the file is empty or a common column of the schema is missing.
struct SchemaMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CheckedResults {
  CheckedRows rows;
  bool stale = false;
};
CheckedResults read_results_checked(const std::string& csv_path);
// Appends the rows set apart to rejected_path(beside), each reason (naming `from`) to repairs.
void set_aside(const CheckedResults& c, const std::string& from, const std::string& beside,
               std::vector<std::string>* repairs);
// For the writer that holds csv_path's lock (resume): read_results_checked, the bad rows set aside
// beside it and the CSV rewritten without them. Throws unless the file has the sweep's columns.
Table read_results_repairing(const std::string& csv_path, std::vector<std::string>* repairs);

class ResultsStore {
 public:
  // Locks csv_path (see lock.hpp), then opens it, creating it with the header or resuming from its
  // rows (a partial last line left by a killed run is cut off; bad rows are set aside). `fresh`
  // starts over. Throws LockHeld when another process writes it.
  ResultsStore(std::string csv_path, nlohmann::json run_metadata, bool fresh);  // JSON: json_sibling(csv_path)

  bool has(const std::string& key) const { return keys_.count(key) != 0; }
  size_t size() const { return table_.rows.size(); }
  size_t resumed_rows() const { return resumed_; }
  const Table& table() const { return table_; }
  // What resume repaired, one line each ("line 7: column 'N' is 'x', expected ..."); empty when nothing.
  const std::vector<std::string>& repairs() const { return repairs_; }
  void append(const Result& r);

 private:
  void write_json() const;
  std::unique_ptr<OutputLock> lock_;
  std::string csv_path_, json_path_;
  Table table_;
  std::set<std::string> keys_;
  nlohmann::json runs_ = nlohmann::json::array();
  size_t resumed_ = 0;
  std::vector<std::string> repairs_;
};

}  // namespace sdtw::bench
