#include "merge.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <set>
#include <stdexcept>

#include "row.hpp"
#include "store.hpp"

namespace sdtw::bench {

Table merge_tables(const std::vector<Table>& inputs) {
  Table out;
  if (inputs.empty()) return out;
  out.header = inputs.front().header;
  struct Ref {
    long point;
    size_t file, row;
  };
  std::vector<Ref> refs;
  for (size_t f = 0; f < inputs.size(); ++f) {
    if (inputs[f].header != out.header)
      throw std::runtime_error("merge: input " + std::to_string(f + 1) + " has a different column schema");
    // A sweep's rows in point order; another tool's file has no point column: its rows in file order.
    const bool points = inputs[f].column("point") >= 0;
    for (size_t r = 0; r < inputs[f].rows.size(); ++r)
      refs.push_back({points ? std::stol(inputs[f].at(r, "point")) : 0L, f, r});
  }
  std::stable_sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) {
    if (a.point != b.point) return a.point < b.point;
    return a.file < b.file;
  });
  std::set<std::string> seen;
  for (const auto& ref : refs) {
    if (seen.insert(row_key(inputs[ref.file], ref.row)).second) out.rows.push_back(inputs[ref.file].rows[ref.row]);
  }
  return out;
}

Table merge_files(const std::vector<std::string>& inputs, const std::string& out, std::vector<std::string>* repairs) {
  namespace fs = std::filesystem;
  std::vector<Table> tables;
  nlohmann::json runs = nlohmann::json::array();
  std::set<std::string> seen_runs;  // the output itself may be an input (a resumed --gpus sweep)
  create_parent_folder(out);
  for (const auto& in : inputs) {
    // Inputs are read, never rewritten (they may belong to a sweep still writing them); their bad
    // rows are set aside beside the output, which the caller has locked.
    const CheckedResults c = read_results_checked(in);
    set_aside(c, in, out, repairs);
    tables.push_back(c.rows.kept);
    for (const auto& r : load_runs(in))
      if (seen_runs.insert(r.dump()).second) runs.push_back(r);
  }
  const Table merged = merge_tables(tables);
  write_csv(out, merged);
  write_runs_log(out, runs);
  write_file_atomic(json_sibling(out), results_json(merged, runs).dump(1) + "\n");
  return merged;
}

}  // namespace sdtw::bench
