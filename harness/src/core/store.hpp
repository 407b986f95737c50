#pragma once
// A sweep's result files: the CSV (rows appended and flushed as points finish) and its JSON
// sibling (rewritten after each row, so both are always complete). Reopening resumes.
#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "csv.hpp"
#include "row.hpp"

namespace sdtw::bench {

// {"schema", "metadata" (the latest run), "runs" (every run that wrote rows), "columns", "rows"}.
nlohmann::json results_json(const Table& t, const nlohmann::json& runs);

class ResultsStore {
 public:
  // Opens csv_path, creating it with the header or resuming from its rows (a partial last line
  // left by a killed run is cut off). `fresh` starts over. Throws when the existing header differs.
  ResultsStore(std::string csv_path, std::string json_path, nlohmann::json run_metadata, bool fresh);

  bool has(const std::string& key) const { return keys_.count(key) != 0; }
  size_t size() const { return table_.rows.size(); }
  size_t resumed_rows() const { return resumed_; }
  const Table& table() const { return table_; }
  void append(const Result& r);

 private:
  void write_json() const;
  std::string csv_path_, json_path_;
  Table table_;
  std::set<std::string> keys_;
  nlohmann::json runs_ = nlohmann::json::array();
  size_t resumed_ = 0;
};

}  // namespace sdtw::bench
