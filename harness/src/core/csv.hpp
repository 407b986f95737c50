#pragma once
// Minimal RFC 4180 CSV: a header and rows of text fields; quoting where a field needs it.
#include <optional>
#include <string>
#include <vector>

namespace sdtw::bench {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of a column, or -1.
  int column(const std::string& name) const;
  const std::string& at(size_t row, const std::string& name) const;  // throws when the column is missing
};

std::string csv_line(const std::vector<std::string>& fields);  // with the trailing '\n'
// Parses CSV text. A last line without its '\n' is dropped when `drop_partial_tail` (an interrupted
// write), else kept. Throws std::runtime_error on a row whose field count differs from the header.
Table parse_csv(const std::string& text, const std::string& name_for_errors, bool drop_partial_tail = false);
Table read_csv(const std::string& path, bool drop_partial_tail = false);
void write_csv(const std::string& path, const Table& t);

// A whole field as a number (std::from_chars: no whitespace, no sign '+', as format_double writes
// them), else none; empty is none.
std::optional<double> parse_number(const std::string& s);

std::string read_file(const std::string& path);                           // throws when unreadable
void write_file_atomic(const std::string& path, const std::string& text);  // tmp + rename

}  // namespace sdtw::bench
