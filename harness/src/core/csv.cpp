#include "csv.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sdtw::bench {

int Table::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& Table::at(size_t row, const std::string& name) const {
  const int c = column(name);
  if (c < 0) throw std::runtime_error("CSV has no column '" + name + "'");
  return rows.at(row).at(static_cast<size_t>(c));
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const auto& f = fields[i];
    if (f.find_first_of(",\"\n\r") == std::string::npos) {
      out += f;
    } else {
      out += '"';
      for (char c : f) {
        if (c == '"') out += '"';
        out += c;
      }
      out += '"';
    }
  }
  out += '\n';
  return out;
}

Table parse_csv(const std::string& text, const std::string& name, bool drop_partial_tail) {
  std::string body = text;
  if (drop_partial_tail && !body.empty() && body.back() != '\n') {
    const auto nl = body.find_last_of('\n');
    body = nl == std::string::npos ? std::string() : body.substr(0, nl + 1);
  }
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < body.size() && body[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      rec.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < body.size() && body[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        rec.push_back(field);
        records.push_back(rec);
      }
      rec.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) throw std::runtime_error(name + ": unterminated quoted field");
  if (any || !field.empty()) {
    rec.push_back(field);
    records.push_back(rec);
  }
  Table t;
  if (records.empty()) return t;
  t.header = records.front();
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size())
      throw std::runtime_error(name + ": row " + std::to_string(r + 1) + " has " + std::to_string(records[r].size()) +
                               " fields, the header has " + std::to_string(t.header.size()));
    t.rows.push_back(std::move(records[r]));
  }
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Table read_csv(const std::string& path, bool drop_partial_tail) { return parse_csv(read_file(path), path, drop_partial_tail); }

void write_file_atomic(const std::string& path, const std::string& text) {
  // One temporary per process: two writers never rename each other's half-written file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  // Every failure removes the temporary and names the file the caller asked for, with the reason.
  const auto fail = [&](const char* what) {
    const int error = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error(std::string("cannot ") + what + " " + path + ": " +
                             (error ? std::strerror(error) : "the write failed"));
  };
  errno = 0;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail("create");
    out << text;
    out.flush();
    if (!out) fail("write");
    out.close();
    if (!out) fail("write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("replace");
}

void write_csv(const std::string& path, const Table& t) {
  std::string text = csv_line(t.header);
  for (const auto& r : t.rows) text += csv_line(r);
  write_file_atomic(path, text);
}

std::optional<double> parse_number(const std::string& s) {
  // The inverse of format_double (std::to_chars): no locale, subnormals kept, out of range refused.
  double v = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace sdtw::bench
