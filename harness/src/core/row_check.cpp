#include "row_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "csv.hpp"
#include "point.hpp"
#include "row.hpp"

namespace sdtw::bench {

namespace {

bool is_number(const std::string& s) { return parse_number(s).has_value(); }

bool is_int_at_least(const std::string& s, long long min_value) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '-')) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size() && v >= min_value;
}

bool one_of(const std::string& s, std::initializer_list<const char*> allowed) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return s == a; });
}

// Column -> (accepts the text, what it expects).
using Check = std::pair<std::function<bool(const std::string&)>, std::string>;

const std::map<std::string, Check>& column_checks() {
  static const std::map<std::string, Check> checks = [] {
    std::map<std::string, Check> c;
    const Check count = {[](const std::string& s) { return is_int_at_least(s, 1); }, "an integer >= 1"};
    const Check number_or_empty = {[](const std::string& s) { return s.empty() || is_number(s); }, "a number or empty"};
    c["point"] = {[](const std::string& s) { return is_int_at_least(s, 0); }, "an integer >= 0"};
    c["impl"] = {[](const std::string& s) {
                   const auto& k = known_implementations();
                   return std::find(k.begin(), k.end(), s) != k.end();
                 },
                 "one of " + known_implementations_text()};
    c["device"] = {[](const std::string& s) { return one_of(s, {"cpu", "cuda"}); }, "cpu or cuda"};
    c["dtype"] = {[](const std::string& s) { return one_of(s, {"float32", "float64"}); }, "float32 or float64"};
    for (const char* k : {"B", "N", "M", "D"}) c[k] = count;
    c["gamma"] = {[](const std::string& s) {
                    const auto g = parse_number(s);
                    return g && std::isfinite(*g) && *g >= 0;
                  },
                  "a finite number >= 0"};
    c["bandwidth"] = {[](const std::string& s) { return s == "none" || is_int_at_least(s, 0); },
                      "none or an integer >= 0"};
    c["normalize"] = {[](const std::string& s) { return one_of(s, {"true", "false"}); }, "true or false"};
    c["disposition"] = {[](const std::string& s) {
                          return s == disposition::passed || s == disposition::failed || s == disposition::not_supported ||
                                 s == disposition::out_of_memory || s == disposition::error;
                        },
                        "passed, failed, not_supported, out_of_memory or error"};
    for (const char* k : {"time_ms_median", "time_ms_p10", "time_ms_p90", "step_peak_mb", "abs_peak_mb", "value_err",
                          "grad_err", "value_tol", "grad_tol"})
      c[k] = number_or_empty;
    for (const char* k : {"reps", "warmup"})
      c[k] = {[](const std::string& s) { return is_int_at_least(s, 0); }, "an integer >= 0"};
    c["wall_s"] = {[](const std::string& s) { return is_number(s); }, "a number"};
    return c;
  }();
  return checks;
}

}  // namespace

CheckedRows check_rows(const Table& t) {
  CheckedRows out;
  out.kept.header = t.header;
  out.rejected.header = t.header;
  out.rejected.header.push_back("rejected_because");
  std::map<std::string, size_t> first_line;  // key -> line of its kept row
  const auto& checks = column_checks();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const size_t line = r + 2;
    std::string reason;
    for (size_t c = 0; c < t.header.size() && reason.empty(); ++c) {
      const auto it = checks.find(t.header[c]);
      // Another tool's implementations are its own (originals, torch-mse, ...), not the sweep's list.
      if (t.header[c] == "impl" && t.column("tool") >= 0 && t.at(r, "tool") != kToolName) continue;
      if (it != checks.end() && !it->second.first(t.rows[r][c]))
        reason = "column '" + t.header[c] + "' is '" + t.rows[r][c] + "', expected " + it->second.second;
    }
    if (reason.empty()) {
      const auto [it, fresh] = first_line.emplace(row_key(t, r), line);
      if (!fresh) reason = "the same point as line " + std::to_string(it->second) + " (kept)";
    }
    if (reason.empty()) {
      out.kept.rows.push_back(t.rows[r]);
    } else {
      auto row = t.rows[r];
      row.push_back(reason);
      out.rejected.rows.push_back(row);
      out.reasons.push_back("line " + std::to_string(line) + ": " + reason);
    }
  }
  return out;
}

}  // namespace sdtw::bench
