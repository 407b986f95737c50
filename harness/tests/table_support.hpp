#pragma once
// Helpers on result tables shared by the harness tests (core and CLI).
#include <string>
#include <vector>

#include "csv.hpp"
#include "row.hpp"

namespace sdtw::bench::test_support {

// The point key of every row, in file order.
inline std::vector<std::string> row_keys(const Table& t) {
  std::vector<std::string> k;
  for (size_t r = 0; r < t.rows.size(); ++r) k.push_back(row_key(t, r));
  return k;
}

}  // namespace sdtw::bench::test_support
