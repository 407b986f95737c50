#include "row.hpp"

#include <set>
#include <stdexcept>

namespace sdtw::bench {

const std::vector<std::string>& common_columns() {
  static const std::vector<std::string> cols = {
      "tool",          "grid",        "impl",        "api",          "mode",        "device",    "dtype",
      "B",             "N",           "M",           "D",            "gamma",       "bandwidth", "normalize",
      "disposition",   "message",     "reps",        "warmup",       "time_ms_median", "time_ms_p10", "time_ms_p90",
      "step_peak_mb",  "abs_peak_mb", "value_err",   "grad_err",     "value_tol",   "grad_tol",  "verified",
      "seed",          "wall_s",      "gpu"};
  return cols;
}

const std::vector<std::string>& sweep_columns() {
  static const std::vector<std::string> cols = {"point", "sweep"};
  return cols;
}

const std::vector<std::string>& result_columns() {
  static const std::vector<std::string> cols = [] {
    auto c = common_columns();
    c.insert(c.end(), sweep_columns().begin(), sweep_columns().end());
    return c;
  }();
  return cols;
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
  const auto key = key_values(p);  // impl, device, dtype, B, N, M, D, gamma, bandwidth, normalize
  const auto [api, mode] = api_and_mode(p.impl);
  std::vector<std::string> f = {kToolName, p.grid, key[0], api, mode};
  f.insert(f.end(), key.begin() + 1, key.end());
  const std::vector<std::string> rest = {r.disposition,        one_line(r.message),   std::to_string(r.reps),
                                         std::to_string(r.warmup), num(r.time_ms_median), num(r.time_ms_p10),
                                         num(r.time_ms_p90),   num(r.step_peak_mb),   num(r.abs_peak_mb),
                                         num(r.value_err),     num(r.grad_err),       num(r.value_tol),
                                         num(r.grad_tol),      r.verified,
                                         r.seed ? std::to_string(*r.seed) : std::string(),
                                         format_double(r.wall_s), r.gpu,              std::to_string(p.index),
                                         r.sweep};
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

nlohmann::json row_to_json(const std::vector<std::string>& header, const std::vector<std::string>& fields) {
  static const std::set<std::string> numeric = {
      "point",       "B",           "N",            "M",           "D",         "gamma",    "time_ms_median",
      "time_ms_p10", "time_ms_p90", "reps",         "warmup",      "step_peak_mb", "abs_peak_mb", "value_err",
      "grad_err",    "value_tol",   "grad_tol",     "wall_s"};
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
        if (h == "point" || h == "B" || h == "N" || h == "M" || h == "D" || h == "reps" || h == "warmup")
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
  // Other tools vary api and mode at one implementation and shape (module/functional, cdist/barycenter);
  // a sweep's follow from its impl, so its keys stay point_key()'s.
  const int tool = t.column("tool");
  if (tool >= 0 && t.rows.at(row).at(static_cast<size_t>(tool)) != kToolName)
    key += t.at(row, "api") + '|' + t.at(row, "mode") + '|';
  return key;
}

}  // namespace sdtw::bench
