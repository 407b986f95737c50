#include "text_table.hpp"

#include <algorithm>
#include <cstdio>

namespace sdtw::bench {

std::string format_text_table(const Table& t) {
  std::vector<size_t> w(t.header.size(), 0);
  for (size_t c = 0; c < t.header.size(); ++c) w[c] = t.header[c].size();
  for (const auto& r : t.rows)
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (size_t c = 0; c < w.size(); ++c) {
      std::string f = c < r.size() ? r[c] : "";
      f.resize(w[c], ' ');
      s += (c ? "  " : "") + f;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.header);
  std::vector<std::string> rule;
  for (auto x : w) rule.push_back(std::string(x, '-'));
  out += line(rule);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string format_results_summary(const Table& res) {
  auto shorten = [](const std::string& s, const char* fmt) {
    if (s.empty()) return std::string("-");
    const auto v = parse_number(s);
    if (!v) return s;
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, *v);
    return std::string(buf);
  };
  Table t;
  t.header = {"impl", "device", "B", "N", "M", "D", "gamma", "options", "result", "median ms", "p10..p90 ms", "peak MB",
              "value err", "grad err", "verified"};
  auto options = [&](size_t r) {
    std::string o;
    if (res.at(r, "bandwidth") != "none") o += "band=" + res.at(r, "bandwidth");
    if (res.at(r, "normalize") == "true") o += std::string(o.empty() ? "" : " ") + "norm";
    if (res.at(r, "dtype") != "float32") o += std::string(o.empty() ? "" : " ") + res.at(r, "dtype");
    return o.empty() ? std::string("-") : o;
  };
  for (size_t r = 0; r < res.rows.size(); ++r) {
    auto g = [&](const char* c) { return res.at(r, c); };
    std::string spread = "-";
    if (!g("time_ms_p10").empty()) spread = shorten(g("time_ms_p10"), "%.3g") + ".." + shorten(g("time_ms_p90"), "%.3g");
    std::string result = g("disposition");
    if (result != "passed" && !g("message").empty()) result += ": " + g("message").substr(0, 60);
    t.rows.push_back({g("impl"), g("device"), g("B"), g("N"), g("M"), g("D"), g("gamma"),
                      options(r), result, shorten(g("time_ms_median"), "%.3f"),
                      spread, shorten(g("abs_peak_mb"), "%.1f"), shorten(g("value_err"), "%.1e"),
                      shorten(g("grad_err"), "%.1e"), g("verified").empty() ? "-" : g("verified")});
  }
  return format_text_table(t);
}

}  // namespace sdtw::bench
