#include "store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "row_check.hpp"

namespace sdtw::bench {

namespace fs = std::filesystem;

namespace {
std::string sibling(const std::string& csv_path, const std::string& suffix) {
  fs::path p(csv_path);
  p.replace_extension(suffix);
  return p.string();
}
}  // namespace

nlohmann::json results_json(const Table& t, const nlohmann::json& runs) {
  nlohmann::json j;
  j["schema"] = kSchemaVersion;
  j["tool"] = t.rows.empty() || t.column("tool") < 0 ? std::string(kToolName) : t.at(0, "tool");
  j["metadata"] = runs.empty() ? nlohmann::json::object() : runs.back();
  j["runs"] = runs;
  j["columns"] = t.header;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : t.rows) j["rows"].push_back(row_to_json(t.header, r));
  return j;
}

std::string json_sibling(const std::string& csv_path) { return sibling(csv_path, ".json"); }
std::string runs_log_path(const std::string& csv_path) { return sibling(csv_path, ".runs.jsonl"); }
std::string rejected_path(const std::string& csv_path) { return sibling(csv_path, ".rejected.csv"); }

nlohmann::json load_runs(const std::string& csv_path) {
  nlohmann::json runs = nlohmann::json::array();
  const auto log = runs_log_path(csv_path);
  if (fs::exists(log)) {
    std::istringstream in(read_file(log));
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      try {
        runs.push_back(nlohmann::json::parse(line));
      } catch (const nlohmann::json::exception&) {
        // A line torn by a kill: that run wrote no complete metadata.
      }
    }
    return runs;
  }
  const auto json = json_sibling(csv_path);
  if (fs::exists(json)) {
    try {
      const auto old = nlohmann::json::parse(read_file(json));
      if (old.contains("runs") && old["runs"].is_array()) runs = old["runs"];
    } catch (const nlohmann::json::exception&) {
      // Unreadable and no log: the JSON was written by a version without the log.
    }
  }
  return runs;
}

void write_runs_log(const std::string& csv_path, const nlohmann::json& runs) {
  std::string text;
  for (const auto& r : runs) text += r.dump() + "\n";
  write_file_atomic(runs_log_path(csv_path), text);
}

CheckedResults read_results_checked(const std::string& csv_path) {
  const std::string text = read_file(csv_path);
  const Table raw = parse_csv(text, csv_path, /*drop_partial_tail=*/true);
  if (raw.header.empty()) throw SchemaMismatch(csv_path + ": not a results CSV of this sdtw-bench: the file is empty");
  for (const auto& c : common_columns())
    if (raw.column(c) < 0)
      throw SchemaMismatch(csv_path + ": not a results CSV of this sdtw-bench: no column '" + c + "' of " +
                           kSchemaVersion);
  CheckedResults c{check_rows(raw), false};
  const bool torn = !text.empty() && text.back() != '\n';
  c.stale = torn || !c.rows.rejected.rows.empty();
  return c;
}

void set_aside(const CheckedResults& c, const std::string& from, const std::string& beside,
               std::vector<std::string>* repairs) {
  if (c.rows.rejected.rows.empty()) return;
  // Appended to what earlier repairs set aside, so nothing is ever lost.
  const auto rej = rejected_path(beside);
  Table all = fs::exists(rej) ? read_csv(rej) : Table{c.rows.rejected.header, {}};
  if (all.header != c.rows.rejected.header)
    throw std::runtime_error(rej + ": unexpected columns; move it away so bad rows can be set aside there");
  // Skip rows an earlier set-aside already holds (merges re-read unchanged inputs each time): only
  // new rows are written and reported.
  const auto earlier = static_cast<std::ptrdiff_t>(all.rows.size());
  std::vector<std::string> reasons;
  for (std::size_t k = 0; k < c.rows.rejected.rows.size(); ++k) {
    const auto& row = c.rows.rejected.rows[k];
    if (std::find(all.rows.begin(), all.rows.begin() + earlier, row) != all.rows.begin() + earlier) continue;
    all.rows.push_back(row);
    reasons.push_back(c.rows.reasons[k]);
  }
  if (reasons.empty()) return;
  write_csv(rej, all);
  if (repairs)
    for (const auto& r : reasons) repairs->push_back(from + ": " + r + "; set aside in " + rej);
}

Table read_results_repairing(const std::string& csv_path, std::vector<std::string>* repairs) {
  const CheckedResults c = read_results_checked(csv_path);
  // A sweep appends its own rows: another tool's file of the schema is not one to resume.
  if (c.rows.kept.header != result_columns())
    throw std::runtime_error(csv_path + ": existing file has a different column schema; move it away or pass --fresh");
  set_aside(c, csv_path, csv_path, repairs);
  if (c.stale) write_csv(csv_path, c.rows.kept);
  return c.rows.kept;
}

ResultsStore::ResultsStore(std::string csv_path, nlohmann::json run_metadata, bool fresh)
    : csv_path_(std::move(csv_path)), json_path_(json_sibling(csv_path_)) {
  lock_ = std::make_unique<OutputLock>(lock_path(csv_path_), csv_path_);
  const bool exists = fs::exists(csv_path_) && fs::file_size(csv_path_) > 0;
  if (exists && !fresh) {
    try {
      table_ = read_results_repairing(csv_path_, &repairs_);
    } catch (const SchemaMismatch& e) {
      throw std::runtime_error(std::string(e.what()) + "; move it away or pass --fresh to start it over");
    }
    for (size_t i = 0; i < table_.rows.size(); ++i) keys_.insert(row_key(table_, i));
    resumed_ = table_.rows.size();
    runs_ = load_runs(csv_path_);
  } else {
    table_.header = result_columns();
    write_file_atomic(csv_path_, csv_line(table_.header));
  }
  run_metadata["resumed_rows"] = resumed_;
  runs_.push_back(std::move(run_metadata));
  if (runs_.size() == 1 || !fs::exists(runs_log_path(csv_path_))) {
    write_runs_log(csv_path_, runs_);
  } else {
    std::ofstream log(runs_log_path(csv_path_), std::ios::binary | std::ios::app);
    log << runs_.back().dump() << "\n";
    log.flush();
    if (!log) throw std::runtime_error("cannot append to " + runs_log_path(csv_path_) + ": " + std::strerror(errno));
  }
  write_json();
}

void ResultsStore::append(const Result& r) {
  auto fields = result_fields(r);
  {
    std::ofstream out(csv_path_, std::ios::binary | std::ios::app);
    if (!out) throw std::runtime_error("cannot append to " + csv_path_ + ": " + std::strerror(errno));
    out << csv_line(fields);
    out.flush();
    if (!out) throw std::runtime_error("cannot append to " + csv_path_ + ": " + std::strerror(errno));
  }
  table_.rows.push_back(fields);
  keys_.insert(row_key(table_, table_.rows.size() - 1));
  write_json();
}

void ResultsStore::write_json() const { write_file_atomic(json_path_, results_json(table_, runs_).dump(1) + "\n"); }

}  // namespace sdtw::bench
