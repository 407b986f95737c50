#pragma once
// Joins result files of shards (or of separate runs) into one: rows de-duplicated by key (the
// first file named wins), ordered by point index with ties in argument order.
#include <string>
#include <vector>

#include "csv.hpp"

namespace sdtw::bench {

Table merge_tables(const std::vector<Table>& inputs);
// Reads the CSVs, writes `out` and, where every input has its JSON sibling, out's JSON sibling
// with every run's metadata. Returns the number of rows written.
size_t merge_files(const std::vector<std::string>& inputs, const std::string& out);

// "dir/x.csv" -> "dir/x.json".
std::string json_sibling(const std::string& csv_path);

}  // namespace sdtw::bench
