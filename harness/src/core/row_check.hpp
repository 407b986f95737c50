#pragma once
// Validation of result rows read back from a file (resume, merge): each column holds what its
// type allows, and each point key appears once. A bad row is set aside with the reason, never
// kept silently and never dropped silently.
#include <string>
#include <vector>

#include "csv.hpp"

namespace sdtw::bench {

struct CheckedRows {
  Table kept;                        // valid rows, the first of each key
  Table rejected;                    // the others, with a last column `rejected_because`
  std::vector<std::string> reasons;  // one per rejected row: "line 5: column 'N' is 'x', expected ..."
};

// `t` must have the schema's common columns (row.hpp); a sweep row's impl must be one sdtw-bench
// knows. Line numbers count the header as line 1.
CheckedRows check_rows(const Table& t);

}  // namespace sdtw::bench
