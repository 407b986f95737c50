// How much of the accuracy grid's float32 gradient error the float32 cost explains, on the CPU:
// for a seed of the grid (SDTW_TEST_SEED, printed by the test) and its N, the grid's inputs (drawn
// in kernels/tests/harness.hpp's draw_inputs order: x, y, dvalues per gamma) go through the float64
// reference twice, once on the float64 cost and once on the cost computed as the fused kernel does
// (float32, one FMA per feature in order), and the two gradients are compared as the grid compares
// them (relative L2, the larger of grad_x and grad_y).
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
    std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    Matrix D64(n, n), D32(n, n);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        double a = 0;
        float f = 0;
        for (int d = 0; d < D; ++d) {
          const double diff = double(xf[i * D + d]) - double(yf[j * D + d]);
          a += diff * diff;
          const float df = xf[i * D + d] - yf[j * D + d];
          f = std::fma(df, df, f);
        }
        D64(i, j) = a;
        D32(i, j) = f;
      }
    Options o;
    o.gamma = gammas[gi];
    const Matrix E64 = soft_dtw_with_alignment(D64, o).E, E32 = soft_dtw_with_alignment(D32, o).E;
    double worst = 0;
    for (bool for_y : {false, true}) {
      std::vector<double> g32(n * D, 0.0), g64(n * D, 0.0);
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
          for (int d = 0; d < D; ++d) {
            const double diff = double(xf[i * D + d]) - double(yf[j * D + d]);
            const long at = (for_y ? j : i) * D + d;
            g32[at] += 2 * E32(i, j) * diff;
            g64[at] += 2 * E64(i, j) * diff;
          }
      double num = 0, den = 0;
      for (long k = 0; k < n * D; ++k) {
        num += (g32[k] - g64[k]) * (g32[k] - g64[k]);
        den += g64[k] * g64[k];
      }
      worst = std::max(worst, std::sqrt(num / den));
    }
    std::printf("seed=%llu N=%ld gamma=%g grad_rel_l2(float32 cost vs float64 cost)=%.3g\n", (unsigned long long)seed, n, gammas[gi], worst);
  }
}
