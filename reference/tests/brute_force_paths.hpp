#pragma once
// Soft-DTW by enumerating every alignment path explicitly, with no dynamic programming: the
// softmin of the path costs, E as the paths' Gibbs-weighted 0/1 alignments and the end weights as
// the weight of the paths ending in each last-row column. Cells outside `allowed` are never
// visited (the recursions instead see them as +inf costs). Exponential: small sizes only.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "sdtw/reference/constraints.hpp"

namespace sdtw::test {

struct BrutePath {
  std::vector<std::pair<long, long>> cells;
  long warps;  // vertical and horizontal moves
};

struct BruteForce {
  double value;
  reference::Matrix E;
  reference::Vector end;
  long paths;
};

// Moves down, right or diagonally from each start; a full path starts at (0, 0) and ends at
// (N-1, M-1). A subsequence path starts at any (0, j), without an entry move, and may end at any
// (N-1, j).
inline std::vector<BrutePath> all_paths(const reference::Mask& allowed, bool subsequence) {
  const long N = allowed.rows(), M = allowed.cols();
  std::vector<BrutePath> out;
  BrutePath path{{}, 0};
  auto walk = [&](auto&& self, long i, long j) -> void {
    if (i >= N || j >= M || !allowed(i, j)) return;
    path.cells.emplace_back(i, j);
    if (i == N - 1 && (subsequence || j == M - 1)) out.push_back(path);
    self(self, i + 1, j + 1);
    ++path.warps;
    self(self, i + 1, j);
    self(self, i, j + 1);
    --path.warps;
    path.cells.pop_back();
  };
  if (!subsequence) {
    walk(walk, 0, 0);
    return out;
  }
  for (long j = 0; j < M; ++j) walk(walk, 0, j);
  return out;
}

// gamma = 0 puts all the weight on the cheapest path (the first found when costs tie).
inline BruteForce brute_force(const reference::Matrix& D, const reference::Mask& allowed, double gamma, double warp,
                              bool subsequence) {
  const long N = D.rows(), M = D.cols();
  const auto paths = all_paths(allowed, subsequence);
  std::vector<double> cost;
  for (const auto& p : paths) {
    double c = warp * static_cast<double>(p.warps);
    for (const auto& [i, j] : p.cells) c += D(i, j);
    cost.push_back(c);
  }
  BruteForce r{std::numeric_limits<double>::infinity(), reference::Matrix::Zero(N, M), reference::Vector::Zero(M),
               static_cast<long>(paths.size())};
  if (paths.empty()) return r;
  const long best = std::min_element(cost.begin(), cost.end()) - cost.begin();
  std::vector<double> weight(paths.size(), 0.0);
  if (gamma > 0) {
    double sum = 0.0;
    for (size_t k = 0; k < paths.size(); ++k) sum += weight[k] = std::exp(-(cost[k] - cost[best]) / gamma);
    for (double& w : weight) w /= sum;
    r.value = cost[best] - gamma * std::log(sum);
  } else {
    weight[best] = 1.0;
    r.value = cost[best];
  }
  for (size_t k = 0; k < paths.size(); ++k) {
    for (const auto& [i, j] : paths[k].cells) r.E(i, j) += weight[k];
    r.end(paths[k].cells.back().second) += weight[k];
  }
  return r;
}

inline reference::Mask everything(long n, long m) { return reference::Mask::Constant(n, m, true); }

}  // namespace sdtw::test
