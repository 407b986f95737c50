#pragma once
// Joins result files of shards (or of separate runs) into one: rows de-duplicated by key (the
// first file named wins), ordered by point index with ties in argument order.
#include <string>
#include <vector>

#include "csv.hpp"
#include "store.hpp"

namespace sdtw::bench {

Table merge_tables(const std::vector<Table>& inputs);
// Reads the CSVs without rewriting them (bad rows set aside beside `out`, each one reported in
// `repairs`), writes `out`, its JSON sibling and its runs log with every input's runs. The caller
// holds out's lock. Returns the rows written.
Table merge_files(const std::vector<std::string>& inputs, const std::string& out,
                   std::vector<std::string>* repairs = nullptr);

}  // namespace sdtw::bench
