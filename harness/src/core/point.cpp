#include "point.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace sdtw::bench {

std::string format_double(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  if (res.ec != std::errc()) throw std::runtime_error("format_double: cannot format value");
  return std::string(buf, res.ptr);
}

const std::vector<std::string>& key_columns() {
  static const std::vector<std::string> cols = {"impl", "device", "dtype", "B",         "N",
                                                "M",    "D",      "gamma", "bandwidth", "normalize"};
  return cols;
}

std::vector<std::string> key_values(const Point& p) {
  return {p.impl,
          p.device,
          p.dtype,
          std::to_string(p.batch),
          std::to_string(p.n),
          std::to_string(p.m),
          std::to_string(p.dim),
          format_double(p.gamma),
          p.bandwidth ? std::to_string(*p.bandwidth) : std::string("none"),
          p.normalize ? "true" : "false"};
}

std::string point_key(const Point& p) {
  std::string key;
  for (const auto& v : key_values(p)) {
    key += v;
    key += '|';
  }
  return key;
}

ApiMode api_and_mode(const std::string& impl) {
  if (impl == "ours_fused") return {"functional", "fused"};
  if (impl == "ours_unfused") return {"functional", "unfused"};
  if (impl == "ours_checkpoint") return {"functional", "checkpoint"};
  return {"functional", ""};
}

std::string describe(const Point& p) {
  std::string s = p.impl + " " + p.device + " " + p.dtype + " B=" + std::to_string(p.batch) +
                  " N=" + std::to_string(p.n) + " M=" + std::to_string(p.m) + " D=" + std::to_string(p.dim) +
                  " gamma=" + format_double(p.gamma);
  if (p.bandwidth) s += " band=" + std::to_string(*p.bandwidth);
  if (p.normalize) s += " normalize";
  if (const std::string k = p.problem.set_options(); !k.empty()) s += " " + k;
  return s;
}

std::string ProblemOptions::set_options() const {
  std::string s;
  if (dist != "sqeuclidean") s += " --dist " + dist;
  if (global_constraint) s += " --global-constraint " + *global_constraint;
  if (sakoe_chiba_radius) s += " --sakoe-chiba-radius " + std::to_string(*sakoe_chiba_radius);
  if (itakura_max_slope) s += " --itakura-max-slope " + format_double(*itakura_max_slope);
  if (warp != 0.0) s += " --warp " + format_double(warp);
  if (subsequence) s += " --subsequence";
  return s.empty() ? s : s.substr(1);
}

const std::vector<std::string>& known_implementations() {
  static const std::vector<std::string> names = {"ours_fused", "ours_unfused", "ours_checkpoint", "ours_cpu",
                                                 "reference_cpu", "maghoumi"};
  return names;
}

std::string known_implementations_text() {
  std::string list;
  for (const auto& k : known_implementations()) list += (list.empty() ? "" : ", ") + k;
  return list;
}

std::string default_device(const std::string& impl) {
  if (impl == "ours_cpu" || impl == "reference_cpu") return "cpu";
  return "cuda";
}

}  // namespace sdtw::bench
