#pragma once
// The accuracy grid's inputs replayed on the CPU, for the tools that price a change of arithmetic
// before it is built: the pair a seed draws (in kernels/tests/harness.hpp's draw_inputs order) and
// the grid's gradient error.
#include <algorithm>
#include <random>
#include <vector>

#include "sdtw/reference/problem.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

namespace sdtw::kernels::bench {

// x (n x dim) and y (n x dim) of one grid case, then its dvalue, drawn and dropped, so that the
// next call draws the next case; as support.hpp's normal<double>, a fresh distribution per vector.
struct GridPair {
  std::vector<double> x, y;
};
inline GridPair draw_grid_pair(std::mt19937_64& rng, long n, int dim) {
  const auto normal = [&](std::size_t count) {
    std::normal_distribution<double> dist(0.0, 1.0);
    std::vector<double> v(count);
    for (auto& e : v) e = dist(rng);
    return v;
  };
  GridPair pair{normal(n * dim), normal(n * dim)};
  normal(1);
  return pair;
}

// rows x dim values rounded to float32, as the grid's reference reads the kernels' inputs.
inline reference::Matrix float32_matrix(const std::vector<double>& v, long rows, int dim) {
  reference::Matrix m(rows, dim);
  for (long k = 0; k < rows * dim; ++k) m(k / dim, k % dim) = static_cast<float>(v[k]);
  return m;
}

// The larger of grad_x's and grad_y's relative L2 error, as the grid measures it.
inline double gradient_error(const reference::Gradients& g, const reference::Gradients& want) {
  return std::max((g.x - want.x).norm() / want.x.norm(), (g.y - want.y).norm() / want.y.norm());
}

}  // namespace sdtw::kernels::bench
