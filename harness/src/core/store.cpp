#include "store.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace sdtw::bench {

nlohmann::json results_json(const Table& t, const nlohmann::json& runs) {
  nlohmann::json j;
  j["schema"] = kSchemaVersion;
  j["metadata"] = runs.empty() ? nlohmann::json::object() : runs.back();
  j["runs"] = runs;
  j["columns"] = t.header;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : t.rows) j["rows"].push_back(row_to_json(t.header, r));
  return j;
}

ResultsStore::ResultsStore(std::string csv_path, std::string json_path, nlohmann::json run_metadata, bool fresh)
    : csv_path_(std::move(csv_path)), json_path_(std::move(json_path)) {
  namespace fs = std::filesystem;
  const auto parent = fs::path(csv_path_).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  const bool exists = fs::exists(csv_path_) && fs::file_size(csv_path_) > 0;
  if (exists && !fresh) {
    const std::string text = read_file(csv_path_);
    table_ = parse_csv(text, csv_path_, /*drop_partial_tail=*/true);
    if (table_.header != result_columns())
      throw std::runtime_error(csv_path_ + ": existing file has a different column schema; move it away or pass --fresh");
    if (!text.empty() && text.back() != '\n') {  // cut the partial line a killed run left
      std::string kept = csv_line(table_.header);
      for (const auto& r : table_.rows) kept += csv_line(r);
      write_file_atomic(csv_path_, kept);
    }
    for (size_t i = 0; i < table_.rows.size(); ++i) keys_.insert(row_key(table_, i));
    resumed_ = table_.rows.size();
    if (fs::exists(json_path_)) {
      try {
        const auto old = nlohmann::json::parse(read_file(json_path_));
        if (old.contains("runs") && old["runs"].is_array()) runs_ = old["runs"];
      } catch (const std::exception&) {
        // An unreadable JSON is regenerated from the CSV; only the older run metadata is lost.
      }
    }
  } else {
    table_.header = result_columns();
    write_file_atomic(csv_path_, csv_line(table_.header));
  }
  run_metadata["resumed_rows"] = resumed_;
  runs_.push_back(std::move(run_metadata));
  write_json();
}

void ResultsStore::append(const Result& r) {
  auto fields = result_fields(r);
  {
    std::ofstream out(csv_path_, std::ios::binary | std::ios::app);
    if (!out) throw std::runtime_error("cannot append to " + csv_path_);
    out << csv_line(fields);
    out.flush();
    if (!out) throw std::runtime_error("cannot append to " + csv_path_);
  }
  table_.rows.push_back(fields);
  keys_.insert(row_key(table_, table_.rows.size() - 1));
  write_json();
}

void ResultsStore::write_json() const { write_file_atomic(json_path_, results_json(table_, runs_).dump(1) + "\n"); }

}  // namespace sdtw::bench
