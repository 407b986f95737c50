#include "series_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "csv.hpp"
#include "point.hpp"

namespace sdtw::bench {

namespace {
std::string dict_value(const std::string& header, const std::string& key) {
  const auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  auto colon = header.find(':', k);
  auto start = header.find_first_not_of(' ', colon + 1);
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  auto end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}
// s without the whitespace around it and a leading '+'.
std::string trimmed(const std::string& s) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const auto first = std::find_if_not(s.begin(), s.end(), space);
  const auto last = std::find_if_not(s.rbegin(), std::make_reverse_iterator(first), space).base();
  const auto sign = first != last && *first == '+' ? 1 : 0;  // from_chars takes no '+'
  return std::string(first + sign, last);
}

}  // namespace

Series read_npy(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t hlen = 0, off = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    off = 10;
  } else {
    if (bytes.size() < 12) throw std::runtime_error(path + ": truncated .npy header");
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    off = 12;
  }
  if (off + hlen > bytes.size()) throw std::runtime_error(path + ": truncated .npy header");
  const std::string header = bytes.substr(off, hlen);
  const std::string descr = dict_value(header, "descr");
  if (dict_value(header, "fortran_order").find("True") != std::string::npos)
    throw std::runtime_error(path + ": Fortran-order arrays are not supported; save with np.ascontiguousarray");
  std::string shape = dict_value(header, "shape");
  std::vector<long> dims;
  for (size_t i = 0; i < shape.size();) {
    if (std::isdigit(static_cast<unsigned char>(shape[i]))) {
      size_t used = 0;
      dims.push_back(std::stol(shape.substr(i), &used));
      i += used;
    } else {
      ++i;
    }
  }
  Series s;
  if (dims.size() == 1) {
    s.rows = dims[0];
    s.cols = 1;
  } else if (dims.size() == 2) {
    s.rows = dims[0];
    s.cols = dims[1];
  } else {
    throw std::runtime_error(path + ": expected a 1-D or 2-D array, shape " + shape);
  }
  const size_t count = static_cast<size_t>(s.rows * s.cols);
  const char* p = bytes.data() + off + hlen;
  const size_t avail = bytes.size() - off - hlen;
  auto need = [&](size_t item) {
    if (avail < count * item) throw std::runtime_error(path + ": array data is truncated");
  };
  s.data.resize(count);
  if (descr == "'<f8'") {
    need(8);
    for (size_t i = 0; i < count; ++i) std::memcpy(&s.data[i], p + 8 * i, 8);
  } else if (descr == "'<f4'") {
    need(4);
    for (size_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      s.data[i] = f;
    }
  } else if (descr == "'<i8'") {
    need(8);
    for (size_t i = 0; i < count; ++i) {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      s.data[i] = static_cast<double>(v);
    }
  } else if (descr == "'<i4'") {
    need(4);
    for (size_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      s.data[i] = v;
    }
  } else {
    throw std::runtime_error(path + ": unsupported dtype " + descr + " (use <f4, <f8, <i4 or <i8)");
  }
  for (size_t i = 0; i < count; ++i)
    if (!std::isfinite(s.data[i]))
      throw std::runtime_error(path + ": element [" + std::to_string(i / static_cast<size_t>(s.cols)) + ", " +
                               std::to_string(i % static_cast<size_t>(s.cols)) + "] is " + format_double(s.data[i]) +
                               " (soft-DTW needs finite inputs)");
  return s;
}

Series read_series_csv(const std::string& path) {
  const Table t = parse_csv(read_file(path), path);
  std::vector<std::vector<std::string>> lines;
  if (!t.header.empty()) lines.push_back(t.header);
  for (const auto& r : t.rows) lines.push_back(r);
  Series s;
  for (size_t li = 0; li < lines.size(); ++li) {
    std::vector<double> vals;
    bool numeric = true;
    for (const auto& f : lines[li]) {
      const auto v = parse_number(trimmed(f));  // series files are hand-written: "1.0, +2.0"
      if (v)
        vals.push_back(*v);
      else
        numeric = false;
    }
    if (!numeric) {
      if (li == 0) continue;  // header
      throw std::runtime_error(path + ": line " + std::to_string(li + 1) + " is not numeric");
    }
    for (size_t c = 0; c < vals.size(); ++c)
      if (!std::isfinite(vals[c]))
        throw std::runtime_error(path + ": line " + std::to_string(li + 1) + ", column " + std::to_string(c + 1) +
                                 ": value '" + lines[li][c] + "' is not finite (soft-DTW needs finite inputs)");
    if (s.cols == 0) s.cols = static_cast<long>(vals.size());
    s.data.insert(s.data.end(), vals.begin(), vals.end());
    ++s.rows;
  }
  if (s.rows == 0) throw std::runtime_error(path + ": no data rows");
  return s;
}

Series read_series(const std::string& path) {
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return read_npy(path);
  return read_series_csv(path);
}

void write_series_csv(const std::string& path, const Series& s) {
  Table t;
  for (long c = 0; c < s.cols; ++c) t.header.push_back("d" + std::to_string(c));
  for (long r = 0; r < s.rows; ++r) {
    std::vector<std::string> row;
    for (long c = 0; c < s.cols; ++c) row.push_back(format_double(s.data[static_cast<size_t>(r * s.cols + c)]));
    t.rows.push_back(row);
  }
  write_csv(path, t);
}

}  // namespace sdtw::bench
