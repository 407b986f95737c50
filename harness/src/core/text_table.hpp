#pragma once
// Aligned plain-text tables for terminals and logs.
#include <string>
#include <vector>

#include "csv.hpp"

namespace sdtw::bench {

std::string format_text_table(const Table& t);
// The readable summary of a results table: the columns a reader wants, numbers shortened.
std::string format_results_summary(const Table& results);

}  // namespace sdtw::bench
