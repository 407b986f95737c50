#include "compare.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <stdexcept>

#include "row.hpp"
#include "text_table.hpp"

namespace sdtw::bench {

namespace {
Table parse_results(const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    const auto j = nlohmann::json::parse(read_file(path));
    if (!j.contains("columns") || !j.contains("rows")) throw std::runtime_error(path + ": not an sdtw-bench results file (no 'columns' and 'rows')");
    Table t;
    for (const auto& c : j["columns"]) t.header.push_back(c.get<std::string>());
    for (const auto& r : j["rows"]) {
      std::vector<std::string> fields;
      for (const auto& c : t.header) {
        const auto& v = r.is_object() && r.contains(c) ? r[c] : nlohmann::json();
        if (v.is_structured())
          throw std::runtime_error(path + ": not an sdtw-bench results file (row " + std::to_string(t.rows.size() + 1) +
                                   ", column '" + c + "' is " + v.dump() + ", not a number or text)");
        if (v.is_null())
          fields.push_back(c == "bandwidth" ? "none" : "");
        else if (v.is_string())
          fields.push_back(v.get<std::string>());
        else if (v.is_boolean())
          fields.push_back(v.get<bool>() ? "true" : "false");
        else if (v.is_number_integer())
          fields.push_back(std::to_string(v.get<long long>()));
        else
          fields.push_back(format_double(v.get<double>()));
      }
      t.rows.push_back(fields);
    }
    return t;
  }
  return read_csv(path, /*drop_partial_tail=*/true);
}
}  // namespace

Table load_results(const std::string& path) {
  // Every failure names the file: the JSON parser's and the key's messages do not.
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error(path + ": not an sdtw-bench results file (" + why + ")");
  };
  Table t;
  try {
    t = parse_results(path);
  } catch (const nlohmann::json::exception& e) {
    fail(e.what());
  }
  if (t.header.empty()) fail("it is empty");
  try {
    for (size_t r = 0; r < t.rows.size(); ++r) (void)row_key(t, r);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return t;
}

namespace {
std::optional<double> number(const Table& t, size_t r, const std::string& col) {
  if (t.column(col) < 0) return std::nullopt;
  return parse_number(t.at(r, col));
}
std::string label(const Table& t, size_t r) {
  std::string s = t.at(r, "impl") + " " + t.at(r, "device") + " B=" + t.at(r, "B") + " N=" + t.at(r, "N");
  if (t.at(r, "M") != t.at(r, "N")) s += " M=" + t.at(r, "M");
  s += " D=" + t.at(r, "D") + " g=" + t.at(r, "gamma");
  if (t.at(r, "dtype") != "float32") s += " " + t.at(r, "dtype");
  if (t.at(r, "bandwidth") != "none") s += " band=" + t.at(r, "bandwidth");
  if (t.at(r, "normalize") == "true") s += " norm";
  return s;
}
}  // namespace

CompareReport compare_tables(const Table& a, const Table& b, double mem_tol, double margin) {
  CompareReport rep;
  std::map<std::string, size_t> in_b;
  for (size_t r = 0; r < b.rows.size(); ++r) in_b.emplace(row_key(b, r), r);
  std::map<std::string, bool> matched;
  for (size_t ra = 0; ra < a.rows.size(); ++ra) {
    const auto key = row_key(a, ra);
    const auto it = in_b.find(key);
    if (it == in_b.end()) {
      rep.only_a.push_back(label(a, ra));
      continue;
    }
    matched[key] = true;
    const size_t rb = it->second;
    CompareEntry e;
    e.key = key;
    e.label = label(a, ra);
    const auto& da = a.at(ra, "disposition");
    const auto& db = b.at(rb, "disposition");
    e.a_ms = number(a, ra, "time_ms_median");
    e.b_ms = number(b, rb, "time_ms_median");
    const auto a_lo = number(a, ra, "time_ms_p10"), a_hi = number(a, ra, "time_ms_p90");
    const auto b_lo = number(b, rb, "time_ms_p10"), b_hi = number(b, rb, "time_ms_p90");
    if (da != db) e.note = da + " -> " + db;
    if (e.a_ms && e.b_ms && *e.a_ms > 0 && a_lo && a_hi && b_lo && b_hi) {
      e.time_ratio = *e.b_ms / *e.a_ms;
      if (*b_hi * (1 + margin) < *a_lo) {
        e.time_verdict = "faster";
        ++rep.faster;
      } else if (*b_lo > *a_hi * (1 + margin)) {
        e.time_verdict = "slower";
        ++rep.slower;
      } else {
        e.time_verdict = "same";
        ++rep.same;
      }
    } else {
      e.time_verdict = "n/a";
    }
    e.a_mb = number(a, ra, "abs_peak_mb");
    e.b_mb = number(b, rb, "abs_peak_mb");
    if (e.a_mb && e.b_mb && *e.a_mb > 0) {
      e.mem_ratio = *e.b_mb / *e.a_mb;
      if (*e.mem_ratio > 1 + mem_tol) {
        e.mem_verdict = "more";
        ++rep.more_memory;
      } else if (*e.mem_ratio < 1 - mem_tol) {
        e.mem_verdict = "less";
        ++rep.less_memory;
      } else {
        e.mem_verdict = "same";
      }
    } else {
      e.mem_verdict = "n/a";
    }
    rep.entries.push_back(e);
  }
  for (size_t rb = 0; rb < b.rows.size(); ++rb)
    if (!matched.count(row_key(b, rb))) rep.only_b.push_back(label(b, rb));
  return rep;
}

std::string format_report(const CompareReport& r, const std::string& a_name, const std::string& b_name) {
  auto fmt = [](const std::optional<double>& v, const char* f) {
    if (!v) return std::string("-");
    char buf[64];
    std::snprintf(buf, sizeof buf, f, *v);
    return std::string(buf);
  };
  Table t;
  t.header = {"point", "A ms", "B ms", "B/A", "time", "A MB", "B MB", "B/A mem", "memory", "note"};
  for (const auto& e : r.entries)
    t.rows.push_back({e.label, fmt(e.a_ms, "%.3f"), fmt(e.b_ms, "%.3f"), fmt(e.time_ratio, "%.3f"), e.time_verdict,
                      fmt(e.a_mb, "%.1f"), fmt(e.b_mb, "%.1f"), fmt(e.mem_ratio, "%.3f"), e.mem_verdict, e.note});
  std::string out = "A = " + a_name + "\nB = " + b_name + "\n" + format_text_table(t);
  for (const auto& s : r.only_a) out += "only in A: " + s + "\n";
  for (const auto& s : r.only_b) out += "only in B: " + s + "\n";
  out += "time: " + std::to_string(r.faster) + " faster, " + std::to_string(r.slower) + " slower, " +
         std::to_string(r.same) + " same; memory: " + std::to_string(r.less_memory) + " less, " +
         std::to_string(r.more_memory) + " more\n";
  return out;
}

}  // namespace sdtw::bench
