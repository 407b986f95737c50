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

using sdtw::reference::Matrix;
using sdtw::reference::Options;
using sdtw::reference::soft_dtw_with_alignment;

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

// The larger of grad_x's and grad_y's relative L2 error when E comes from cost D instead of D64.
double gradient_error(const Matrix& E, const Matrix& E64, const std::vector<float>& xf, const std::vector<float>& yf,
                      long n, int dim) {
  double worst = 0;
  for (bool for_y : {false, true}) {
    std::vector<double> g(n * dim, 0.0), g64(n * dim, 0.0);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j)
        for (int d = 0; d < dim; ++d) {
          const double diff = double(xf[i * dim + d]) - double(yf[j * dim + d]);
          const long at = (for_y ? j : i) * dim + d;
          g[at] += 2 * E(i, j) * diff;
          g64[at] += 2 * E64(i, j) * diff;
        }
    double num = 0, den = 0;
    for (long k = 0; k < n * dim; ++k) {
      num += (g[k] - g64[k]) * (g[k] - g64[k]);
      den += g64[k] * g64[k];
    }
    worst = std::max(worst, std::sqrt(num / den));
  }
  return worst;
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
    Matrix D64(n, n), kernel(n, n), double_sum(n, n), rounded(n, n);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        double exact = 0;
        for (int d = 0; d < D; ++d) {
          const double diff = double(xf[i * D + d]) - double(yf[j * D + d]);
          exact += diff * diff;
        }
        const CellCosts c = cell_costs(&xf[i * D], &yf[j * D], D);
        D64(i, j) = exact;
        kernel(i, j) = c.kernel;
        double_sum(i, j) = c.double_sum;
        rounded(i, j) = static_cast<float>(exact);
      }
    Options o;
    o.gamma = gammas[gi];
    const Matrix E64 = soft_dtw_with_alignment(D64, o).E;
    const auto error = [&](const Matrix& cost) { return gradient_error(soft_dtw_with_alignment(cost, o).E, E64, xf, yf, n, D); };
    std::printf("seed=%llu N=%ld gamma=%g grad_rel_l2 against the float64 cost: kernel's float32 cost %.3g, "
                "float32 differences summed in float64 %.3g, float64 cost rounded to float32 %.3g\n",
                static_cast<unsigned long long>(seed), n, gammas[gi], error(kernel), error(double_sum), error(rounded));
  }
}
