#include "row.hpp"

#include <set>
#include <stdexcept>

namespace sdtw::bench {

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> cols = {
      "point",        "sweep",       "grid",        "impl",      "device",    "dtype",    "B",
      "N",            "M",           "D",           "gamma",     "bandwidth", "normalize", "disposition",
      "time_ms_median", "time_ms_min", "time_ms_max", "reps",    "peak_mb",   "value_err", "grad_err",
      "value_tol",    "grad_tol",    "verified",    "wall_s",    "message",   "gpu"};
  return cols;
}

void upgrade_legacy_columns(Table& t) {
  std::vector<std::string> legacy = result_columns();
  legacy.pop_back();
  if (t.header != legacy) return;
  t.header = result_columns();
  for (auto& r : t.rows) r.emplace_back();
}

namespace {
std::string num(const std::optional<double>& v) { return v ? format_double(*v) : std::string(); }
std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}
}  // namespace

std::vector<std::string> result_fields(const Result& r) {
  const auto& p = r.point;
  const std::string peak = r.peak_mb ? format_double(*r.peak_mb) : std::string(p.device == "cpu" ? "n/a" : "");
  std::vector<std::string> f = {std::to_string(p.index), r.sweep, p.grid};
  const auto key = key_values(p);  // impl .. normalize, in column order
  f.insert(f.end(), key.begin(), key.end());
  const std::vector<std::string> rest = {r.disposition,        num(r.time_ms_median), num(r.time_ms_min),
                                         num(r.time_ms_max),   std::to_string(r.reps), peak,
                                         num(r.value_err),     num(r.grad_err),       num(r.value_tol),
                                         num(r.grad_tol),      r.verified,            format_double(r.wall_s),
                                         one_line(r.message),  r.gpu};
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

nlohmann::json row_to_json(const std::vector<std::string>& header, const std::vector<std::string>& fields) {
  static const std::set<std::string> numeric = {"point",     "B",         "N",        "M",        "D",
                                                "gamma",     "time_ms_median", "time_ms_min", "time_ms_max", "reps",
                                                "peak_mb",   "value_err", "grad_err", "value_tol", "grad_tol",
                                                "wall_s"};
  nlohmann::json o = nlohmann::json::object();
  for (size_t i = 0; i < header.size() && i < fields.size(); ++i) {
    const auto& h = header[i];
    const auto& f = fields[i];
    if (numeric.count(h)) {
      if (f.empty()) {
        o[h] = nullptr;
        continue;
      }
      if (const auto v = parse_number(f)) {
        if (h == "point" || h == "B" || h == "N" || h == "M" || h == "D" || h == "reps")
          o[h] = static_cast<long long>(*v);
        else
          o[h] = *v;
        continue;
      }
      o[h] = f;  // "n/a", "inf", ...
    } else if (h == "normalize") {
      o[h] = f == "true";
    } else if (h == "bandwidth") {
      if (f == "none" || f.empty())
        o[h] = nullptr;
      else
        o[h] = std::stoll(f);
    } else {
      o[h] = f;
    }
  }
  return o;
}

std::string row_key(const Table& t, size_t row) {
  std::string key;
  for (const auto& c : key_columns()) {
    key += t.at(row, c);
    key += '|';
  }
  return key;
}

}  // namespace sdtw::bench
