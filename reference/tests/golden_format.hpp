#pragma once
// The golden fixture format, shared by the generator (tools/make_golden.cpp) and golden_test.cpp.
// One case per file: `key: value` lines; a key with nothing after the colon is a matrix whose rows
// follow, one per line, numbers printed with %.17g so that they read back bit-exact.
#include <cstdint>
#include <cstdio>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sdtw/reference.hpp"

namespace sdtw::test {

using reference::Matrix;

struct GoldenCase {
  std::string name;
  std::string mode;  // "cost" (input D), "sqeuclidean" or "divergence" (inputs x, y)
  double gamma = 1.0;
  std::optional<long> bandwidth;
  std::uint64_t seed = 0;  // how the inputs were drawn; the inputs themselves are stored
  Matrix D, x, y;
  double value = 0.0;
  Matrix E, grad_x, grad_y;  // E for cost and sqeuclidean, gradients for sqeuclidean and divergence
};

// Fills value, E and the gradients from the inputs with the reference.
inline void compute_outputs(GoldenCase& c) {
  const reference::Options options{c.gamma, c.bandwidth};
  if (c.mode == "cost") {
    const auto r = reference::soft_dtw_with_alignment(c.D, options);
    c.value = r.value;
    c.E = r.E;
  } else if (c.mode == "sqeuclidean") {
    const auto r = reference::soft_dtw_sqeuclidean(c.x, c.y, options);
    c.value = r.value;
    c.E = reference::soft_dtw_with_alignment(reference::SqEuclideanCost(c.x, c.y).compute(), options).E;
    c.grad_x = r.grad.x;
    c.grad_y = r.grad.y;
  } else if (c.mode == "divergence") {
    const auto r = reference::soft_dtw_divergence(c.x, c.y, options);
    c.value = r.value;
    c.grad_x = r.grad.x;
    c.grad_y = r.grad.y;
  } else {
    throw std::invalid_argument("golden case " + c.name + ": unknown mode " + c.mode);
  }
}

inline std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline void write_matrix(std::ostream& os, const std::string& key, const Matrix& a) {
  if (a.size() == 0) return;
  os << key << ":\n";
  for (long i = 0; i < a.rows(); ++i) {
    for (long j = 0; j < a.cols(); ++j) os << (j ? " " : "") << format_number(a(i, j));
    os << "\n";
  }
}

inline void write_golden(std::ostream& os, const GoldenCase& c) {
  os << "format: sdtw-golden 1\n"
     << "name: " << c.name << "\n"
     << "mode: " << c.mode << "\n"
     << "gamma: " << format_number(c.gamma) << "\n"
     << "bandwidth: " << (c.bandwidth ? std::to_string(*c.bandwidth) : "none") << "\n"
     << "seed: " << c.seed << "\n";
  write_matrix(os, "D", c.D);
  write_matrix(os, "x", c.x);
  write_matrix(os, "y", c.y);
  os << "value: " << format_number(c.value) << "\n";
  write_matrix(os, "E", c.E);
  write_matrix(os, "grad_x", c.grad_x);
  write_matrix(os, "grad_y", c.grad_y);
}

inline GoldenCase read_golden(std::istream& is) {
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<std::vector<double>>> matrices;
  std::string line, current;
  while (std::getline(is, line)) {
    if (line.empty()) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) {
      current = line.substr(0, colon);
      const auto start = line.find_first_not_of(' ', colon + 1);
      if (start != std::string::npos) scalars[current] = line.substr(start);
      else matrices[current];
      continue;
    }
    if (!matrices.count(current)) throw std::runtime_error("golden: numbers outside a matrix after " + current);
    std::istringstream row(line);
    std::vector<double> values;
    for (std::string token; row >> token;) values.push_back(std::stod(token));
    matrices[current].push_back(values);
  }
  auto scalar = [&](const std::string& key) {
    if (!scalars.count(key)) throw std::runtime_error("golden: missing key " + key);
    return scalars[key];
  };
  auto matrix = [&](const std::string& key) {
    const auto& rows = matrices[key];
    Matrix a(static_cast<long>(rows.size()), rows.empty() ? 0L : static_cast<long>(rows[0].size()));
    for (long i = 0; i < a.rows(); ++i) {
      if (static_cast<long>(rows[i].size()) != a.cols()) throw std::runtime_error("golden: ragged matrix " + key);
      for (long j = 0; j < a.cols(); ++j) a(i, j) = rows[i][j];
    }
    return a;
  };
  if (scalar("format") != "sdtw-golden 1") throw std::runtime_error("golden: unknown format " + scalar("format"));
  GoldenCase c;
  c.name = scalar("name");
  c.mode = scalar("mode");
  c.gamma = std::stod(scalar("gamma"));
  if (scalar("bandwidth") != "none") c.bandwidth = std::stol(scalar("bandwidth"));
  c.seed = std::stoull(scalar("seed"));
  c.D = matrix("D");
  c.x = matrix("x");
  c.y = matrix("y");
  c.value = std::stod(scalar("value"));
  c.E = matrix("E");
  c.grad_x = matrix("grad_x");
  c.grad_y = matrix("grad_y");
  return c;
}

}  // namespace sdtw::test
