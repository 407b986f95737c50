// How much of the accuracy grid's float32 gradient error the float32 cost explains, on the CPU:
// for a seed of the grid (SDTW_TEST_SEED, printed by the test) and its N, the grid's inputs (drawn
// in kernels/tests/harness.hpp's draw_inputs order: x, y, dvalues per gamma) go through the float64
// reference on the float64 cost and on the cost computed as the fused kernel does (float32, one FMA
// per feature in order), and the gradients are compared as the grid compares them (relative L2, the
// larger of grad_x and grad_y), the values by their relative difference. Beside the kernel's cost, two others that
// say where its error comes from: float32 differences squared and summed in float64 (the
// differences' rounding), and the float64 cost rounded to float32 (the best a float32 cost can be).
// Two more price a cost on the tensor cores before anyone writes it: ||x||^2 + ||y||^2 - 2 x.y in
// float32, with x.y by float32 FMAs and by 3xTF32 as kernels/src/tf32x3.cuh splits and orders it.
// Run: sdtw_cost_rounding SEED N [FIRST_GAMMA_INDEX [DIM [NEAR [OFFSET]]]]   (gammas 10, 1, 0.1,
// 0.01, 0.001; the grid draws DIM = 8, the default: another DIM draws inputs of the same seed that
// no grid draws). NEAR > 0 puts y at x + NEAR * (the drawn y), a loss near its minimum; OFFSET adds
// one constant to every feature of x and y (data that is not centred), which leaves the exact cost
// as it is. Both make the expanded cost cancel; independent centred x and y rarely do.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include <CLI/CLI.hpp>

#include "grid_replay.hpp"
#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

using sdtw::kernels::bench::draw_grid_pair;
using sdtw::kernels::bench::float32_matrix;
using sdtw::kernels::bench::gradient_error;
using sdtw::reference::Matrix;
using sdtw::reference::Options;
using sdtw::reference::soft_dtw_with_alignment;
using sdtw::reference::SqEuclideanCost;

// split_tf32 of kernels/src/tf32x3.cuh: the head is v with its low 13 mantissa bits cleared, the
// tail the remainder rounded to nearest TF32, ties away from zero (cvt.rna.tf32.f32).
static uint32_t bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}
static float from_bits(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}
static float tf32_head(float v) { return from_bits(bits(v) & 0xffffe000u); }
static float tf32_rna(float v) { return from_bits((bits(v) + 0x1000u) & 0xffffe000u); }

static float tf32_tail(float v) { return tf32_rna(v - tf32_head(v)); }

// x.y in mma_3xtf32's order: per k-step of 8 features, the tail*head, head*tail and head*head
// steps in turn, each modelled as its 8 products (exact in float32) summed in float32 in k order
// and then added to the accumulator. The tensor core's own accumulation inside a step (its
// precision and rounding are not documented) is not modelled, so these figures are a model's.
static float dot_3xtf32(const float* xi, const float* yj, int dim) {
  float acc = 0;
  for (int k0 = 0; k0 < dim; k0 += 8) {
    const int k1 = std::min(dim, k0 + 8);
    const auto step = [&](float (*a)(float), float (*b)(float)) {
      float sum = 0;
      for (int k = k0; k < k1; ++k) sum += a(xi[k]) * b(yj[k]);
      acc += sum;
    };
    step(tf32_tail, tf32_head);
    step(tf32_head, tf32_tail);
    step(tf32_head, tf32_head);
  }
  return acc;
}

static float squared_norm(const float* v, int dim) {
  float s = 0;
  for (int d = 0; d < dim; ++d) s = std::fma(v[d], v[d], s);
  return s;
}

// The cost of one cell from its float32 features: the kernel's (one FMA per feature, in order),
// with the differences squared and summed in float64, and expanded as ||x||^2 + ||y||^2 - 2 x.y
// (clamped at 0, as a negative cost cannot be) with x.y by float32 FMAs and by 3xTF32.
struct CellCosts {
  double kernel, double_sum, expanded_fma, expanded_3xtf32;
};

CellCosts cell_costs(const float* xi, const float* yj, float xx, float yy, int dim) {
  float f = 0, dot = 0;
  double sum = 0;
  for (int d = 0; d < dim; ++d) {
    const float diff = xi[d] - yj[d];
    f = std::fma(diff, diff, f);
    sum += double(diff) * double(diff);
    dot = std::fma(xi[d], yj[d], dot);
  }
  const auto expanded = [&](float xy) { return std::max(0.0f, std::fma(-2.0f, xy, xx + yy)); };
  return {f, sum, expanded(dot), expanded(dot_3xtf32(xi, yj, dim))};
}

// CLI::Range would let NaN through (both of its comparisons are false) and print DBL_MAX in full.
static CLI::Validator finite_at_least(double lo) {
  char bound[40] = "";
  if (std::isfinite(lo)) std::snprintf(bound, sizeof bound, " >= %g", lo);
  const std::string want = std::string("a finite number") + bound;
  return CLI::Validator(
      [lo, want](std::string& s) {
        double v;
        return CLI::detail::lexical_cast(s, v) && std::isfinite(v) && v >= lo ? std::string{} : s + " is not " + want;
      },
      want);
}

int main(int argc, char** argv) {
  CLI::App app{"Prices float32 costs on the accuracy grid's inputs for a seed"};
  uint64_t seed = 0;
  long n = 0;
  int first_gamma = 0, D = 8;
  double near = 0, offset = 0;
  app.add_option("SEED", seed, "the grid's seed to replay")->required();
  app.add_option("N", n, "the sequences' length")->required()->check(CLI::Range(1L, 1L << 16));
  app.add_option("FIRST_GAMMA_INDEX", first_gamma, "skip the gammas before this one")->check(CLI::Range(0, 4));
  app.add_option("DIM", D, "features; the grid draws 8")->check(CLI::Range(1, 4096));
  app.add_option("NEAR", near, "y = x + NEAR * the drawn y when > 0")->check(finite_at_least(0.0));
  app.add_option("OFFSET", offset, "a constant added to every feature of x and y")->check(finite_at_least(-HUGE_VAL));
  CLI11_PARSE(app, argc, argv);
  const double gammas[5] = {10, 1, 0.1, 0.01, 0.001};
  std::mt19937_64 rng(seed);
  for (int gi = 0; gi < 5; ++gi) {
    auto [x, y] = draw_grid_pair(rng, n, D);
    for (long k = 0; k < n * D; ++k) {
      if (near > 0) y[k] = x[k] + near * y[k];
      x[k] += offset;
      y[k] += offset;
    }
    if (gi < first_gamma) continue;
    const std::vector<float> xf(x.begin(), x.end()), yf(y.begin(), y.end());
    const SqEuclideanCost sqeuclidean(float32_matrix(x, n, D), float32_matrix(y, n, D));
    const Matrix D64 = sqeuclidean.compute();
    std::vector<float> xx(n), yy(n);
    for (long i = 0; i < n; ++i) {
      xx[i] = squared_norm(&xf[i * D], D);
      yy[i] = squared_norm(&yf[i * D], D);
    }
    Matrix kernel(n, n), double_sum(n, n), rounded(n, n), expanded_fma(n, n), expanded_3xtf32(n, n);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < n; ++j) {
        const CellCosts c = cell_costs(&xf[i * D], &yf[j * D], xx[i], yy[j], D);
        kernel(i, j) = c.kernel;
        double_sum(i, j) = c.double_sum;
        rounded(i, j) = static_cast<float>(D64(i, j));
        expanded_fma(i, j) = c.expanded_fma;
        expanded_3xtf32(i, j) = c.expanded_3xtf32;
      }
    Options o;
    o.gamma = gammas[gi];
    const auto outcome = [&](const Matrix& cost) {
      const auto r = soft_dtw_with_alignment(cost, o);
      return std::make_pair(r.value, sqeuclidean.jacobian_product(r.E));
    };
    const auto [value64, g64] = outcome(D64);
    std::printf("seed=%llu N=%ld D=%d near=%g offset=%g gamma=%g, error against the float64 cost (gradient relative L2 | "
                "value relative):", static_cast<unsigned long long>(seed), n, D, near, offset, gammas[gi]);
    const std::pair<const char*, const Matrix*> costs[] = {
        {"kernel's float32 cost", &kernel},
        {"float32 differences summed in float64", &double_sum},
        {"float64 cost rounded to float32", &rounded},
        {"||x||^2 + ||y||^2 - 2 x.y by float32 FMAs", &expanded_fma},
        {"by 3xTF32", &expanded_3xtf32}};
    const char* separator = "";
    for (const auto& [name, cost] : costs) {
      const auto [value, g] = outcome(*cost);
      std::printf("%s %s %.3g | %.3g", separator, name, gradient_error(g, g64), std::abs(value - value64) / std::abs(value64));
      separator = ",";
    }
    std::printf("\n");
  }
}
