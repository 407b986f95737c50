// How much of the accuracy grid's float32 gradient error the float32 cost explains, on the CPU:
// for a seed of the grid (SDTW_TEST_SEED, printed by the test) and its N, the grid's inputs (drawn
// in kernels/tests/harness.hpp's draw_inputs order: x, y, dvalues per gamma) go through the float64
// reference twice, once on the float64 cost and once on the cost computed as the fused kernel does
// (float32, one FMA per feature in order), and the two gradients are compared as the grid compares
// them (relative L2, the larger of grad_x and grad_y). Beside the kernel's cost, two others that
// say where its error comes from: float32 differences squared and summed in float64 (the
// differences' rounding), and the float64 cost rounded to float32 (the best a float32 cost can be).
// Run: sdtw_cost_rounding SEED N [FIRST_GAMMA_INDEX]   (gammas 10, 1, 0.1, 0.01, 0.001)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

using sdtw::reference::Gradients;
using sdtw::reference::Matrix;
using sdtw::reference::Options;
using sdtw::reference::soft_dtw_with_alignment;
using sdtw::reference::SqEuclideanCost;

// As kernels/tests/support.hpp's normal<double>: a fresh distribution per call.
static std::vector<double> normal(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(count);
  for (auto& e : v) e = dist(rng);
  return v;
}

// The cost of one cell from its float32 features: the kernel's (one FMA per feature, in order) and
// with the differences squared and summed in float64.
struct CellCosts {
  double kernel, double_sum;
};

CellCosts cell_costs(const float* xi, const float* yj, int dim) {
  float f = 0;
  double sum = 0;
  for (int d = 0; d < dim; ++d) {
    const float diff = xi[d] - yj[d];
    f = std::fma(diff, diff, f);
    sum += double(diff) * double(diff);
  }
  return {f, sum};
}

// The larger of grad_x's and grad_y's relative L2 error against the float64 cost's gradients.
double gradient_error(const Gradients& g, const Gradients& g64) {
  return std::max((g.x - g64.x).norm() / g64.x.norm(), (g.y - g64.y).norm() / g64.y.norm());
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sdtw_cost_rounding SEED N [FIRST_GAMMA_INDEX]\n");
    return 2;
  }
  const uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  const long n = std::atol(argv[2]);
  const double gammas[5] = {10, 1, 0.1, 0.01, 0.001};
  const int D = 8;
  std::mt19937_64 rng(seed);
  for (int gi = 0; gi < 5; ++gi) {
    const std::vector<double> x = normal(rng, n * D), y = normal(rng, n * D);
    normal(rng, 1);
    if (gi < (argc > 3 ? std::atoi(argv[3]) : 0)) continue;
    const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    Matrix xm(n, D), ym(n, D);  // the float32 inputs, as the grid's reference reads them
    for (long k = 0; k < n * D; ++k) {
      xm(k / D, k % D) = xf[k];
      ym(k / D, k % D) = yf[k];
    }
    const SqEuclideanCost sqeuclidean(xm, ym);
    const Matrix D64 = sqeuclidean.compute();
    Matrix kernel(n, n), double_sum(n, n), rounded(n, n);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        const CellCosts c = cell_costs(&xf[i * D], &yf[j * D], D);
        kernel(i, j) = c.kernel;
        double_sum(i, j) = c.double_sum;
        rounded(i, j) = static_cast<float>(D64(i, j));
      }
    Options o;
    o.gamma = gammas[gi];
    const auto gradients = [&](const Matrix& cost) { return sqeuclidean.jacobian_product(soft_dtw_with_alignment(cost, o).E); };
    const Gradients g64 = gradients(D64);
    const auto error = [&](const Matrix& cost) { return gradient_error(gradients(cost), g64); };
    std::printf("seed=%llu N=%ld gamma=%g grad_rel_l2 against the float64 cost: kernel's float32 cost %.3g, "
                "float32 differences summed in float64 %.3g, float64 cost rounded to float32 %.3g\n",
                static_cast<unsigned long long>(seed), n, gammas[gi], error(kernel), error(double_sum), error(rounded));
  }
}
