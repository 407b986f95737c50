// What carrying R in float32 pairs (two-float, compensated) instead of float64 would do to the
// kernels' accuracy, on the CPU, before anyone builds it (issue 13 allows it only if the accuracy
// grid stays <= 1e-4). The forward recursion runs as forward.cuh runs it: the three differences to
// the minimum in float32, exp2 (its subnormal results flushed to 0, as ex2.approx.ftz does) and log2
// in float32, the weights quantised to two unorm16 as CellState<float>::encode does, and every
// fused multiply-add the compiler forms there written as one; only R's arithmetic changes. The
// GPU's exp2, log2 and reciprocal are approximations within a few ulp; here they are the C
// library's, which is why the float64 row is near, not equal to, the GPU's grid. E is then swept back from the
// decoded weights in float64, so the forward's share alone is priced, and the gradients and the
// value are compared with the float64 reference on the same float32 cost (the grid's "own" error;
// here the float64 cost rounded to float32).
// R kept as: float64 (today), float32, two floats with the cost added exactly (two TwoSums), two
// floats with the cost and the log term first summed in float32 (one TwoSum); or not kept, each cell
// holding its float32 differences to its left and upper neighbours.
// Run: sdtw_chain_precision SEED N [DIM]   (the grid's inputs for that seed at DIM = 8, the default)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
using sdtw::reference::Gradients;
using sdtw::reference::Matrix;
using sdtw::reference::Options;
using sdtw::reference::soft_dtw_with_alignment;
using sdtw::reference::SqEuclideanCost;

constexpr double kInf = std::numeric_limits<double>::infinity();

// R in float64: the differences and the sum as forward.cuh forms them.
struct Float64R {
  double r = kInf;
  static Float64R of(double v) { return {v}; }
  double value() const { return r; }
  bool operator<(const Float64R& o) const { return r < o.r; }
  float minus(const Float64R& m) const { return static_cast<float>(r - m.r); }
  // (c + rmin) - log2_scale * log2(sum), log2(sum) taken in float32: a DADD and a DFMA.
  Float64R plus(float cost, float log2_sum, double log2_scale) const {
    return {std::fma(-log2_scale, static_cast<double>(log2_sum), static_cast<double>(cost) + r)};
  }
};

struct Float32R {
  float r = INFINITY;
  static Float32R of(double v) { return {static_cast<float>(v)}; }
  double value() const { return r; }
  bool operator<(const Float32R& o) const { return r < o.r; }
  float minus(const Float32R& m) const { return r - m.r; }
  Float32R plus(float cost, float log2_sum, double log2_scale) const {
    return {std::fma(-static_cast<float>(log2_scale), log2_sum, cost + r)};
  }
};

// hi + lo with |lo| <= ulp(hi) / 2. TwoSum gives a + b exactly as s + e.
static void two_sum(float a, float b, float& s, float& e) {
  s = a + b;
  const float bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}

template <bool kExactCost>
struct TwoFloatR {
  float hi = INFINITY, lo = 0;
  static TwoFloatR of(double v) {
    const float h = static_cast<float>(v);
    return {h, std::isfinite(h) ? static_cast<float>(v - h) : 0.0f};
  }
  double value() const { return double(hi) + double(lo); }
  bool operator<(const TwoFloatR& o) const { return hi < o.hi || (hi == o.hi && lo < o.lo); }
  float minus(const TwoFloatR& m) const { return (hi - m.hi) + (lo - m.lo); }
  TwoFloatR plus(float cost, float log2_sum, double log2_scale) const {
    float s, e;
    if (kExactCost) {
      const float log_term = static_cast<float>(log2_scale) * log2_sum;
      float s2, e2;
      two_sum(hi, cost, s, e);
      two_sum(s, -log_term, s2, e2);
      s = s2;
      e += e2;
    } else {
      two_sum(hi, std::fma(-static_cast<float>(log2_scale), log2_sum, cost), s, e);
    }
    e += lo;
    const float h = s + e;
    return {h, e - (h - s)};
  }
};

// CellState<float>::encode and decode: two unorm16, the third weight what is left of 65535.
static float quantise(float e, float scale) {
  const float q = std::fma(e, scale, 0x1.8p23f);
  uint32_t u;
  std::memcpy(&u, &q, 4);
  return static_cast<float>(u - 0x4b400000u);
}
struct Weights {
  float diag, up, left;
};
static Weights encoded(float ed, float eu, float el, float inv_sum) {
  const float scale = inv_sum * 65535.0f;
  float qd = std::min(quantise(ed, scale), 65535.0f), qu = quantise(eu, scale);
  if (el == 0.0f || qd + qu > 65535.0f) qu = 65535.0f - qd;
  return {qd / 65535.0f, qu / 65535.0f, (65535.0f - qd - qu) / 65535.0f};
}

// ex2.approx.ftz: a result below FLT_MIN is 0.
static float ftz_exp2(float v) {
  const float r = std::exp2(v);
  return std::fpclassify(r) == FP_SUBNORMAL ? 0.0f : r;
}

struct Outcome {
  double value;
  Matrix E;
};

// E swept back in float64 from the decoded weights of every cell.
Matrix swept_back(const std::vector<Weights>& w, long n, long m) {
  Matrix E = Matrix::Zero(n, m);
  for (long i = n - 1; i >= 0; --i)
    for (long j = m - 1; j >= 0; --j) {
      if (i == n - 1 && j == m - 1) {
        E(i, j) = 1.0;
        continue;
      }
      double e = 0;
      if (i + 1 < n && j + 1 < m) e += E(i + 1, j + 1) * w[(i + 1) * m + j + 1].diag;
      if (i + 1 < n) e += E(i + 1, j) * w[(i + 1) * m + j].up;
      if (j + 1 < m) e += E(i, j + 1) * w[i * m + j + 1].left;
      E(i, j) = e;
    }
  return E;
}

// The forward recursion with R kept as R, then E from the saved weights (float64 sweep).
template <typename R>
Outcome run(const Matrix& cost, double gamma) {
  const long n = cost.rows(), m = cost.cols();
  const float exp2_scale = static_cast<float>(-1.4426950408889634 / gamma);
  const double log2_scale = gamma * 0.6931471805599453;
  std::vector<R> prev(m + 1), cur(m + 1);  // R(i-1, .) and R(i, .), column 0 the border
  prev[0] = R::of(0.0);
  std::vector<Weights> w(n * m);
  for (long i = 0; i < n; ++i) {
    cur[0] = R::of(kInf);
    for (long j = 0; j < m; ++j) {
      const R diag = prev[j], up = prev[j + 1], left = cur[j];
      const R rmin = std::min(diag, std::min(up, left));
      const float ed = ftz_exp2(diag.minus(rmin) * exp2_scale), eu = ftz_exp2(up.minus(rmin) * exp2_scale),
                  el = ftz_exp2(left.minus(rmin) * exp2_scale);
      const float sum = ed + eu + el;
      w[i * m + j] = encoded(ed, eu, el, 1.0f / sum);
      cur[j + 1] = rmin.plus(static_cast<float>(cost(i, j)), std::log2(sum), log2_scale);
    }
    std::swap(prev, cur);
    prev[0] = R::of(kInf);
  }
  return {prev[m].value(), swept_back(w, n, m)};
}


// R never held at all: each cell keeps its differences to its neighbours, H = R(i, j) - R(i, j-1)
// and V = R(i, j) - R(i-1, j), in float32 (bounded by the costs, whatever R's size), so the three
// predecessors relative to the diagonal one are 0, H(i-1, j) and V(i, j-1). The value is summed in
// float64 along the first row and the last column. Finite costs and no band only: the first row
// and column have one predecessor each; elsewhere the diagonal one is finite.
Outcome run_differences(const Matrix& cost, double gamma) {
  const long n = cost.rows(), m = cost.cols();
  const float exp2_scale = static_cast<float>(-1.4426950408889634 / gamma);
  const float log2_scale = static_cast<float>(gamma * 0.6931471805599453);
  std::vector<float> h_above(m), h_row(m);  // H of the row above and of this row, by column
  std::vector<Weights> w(n * m);
  double value = 0;
  for (long j = 0; j < m; ++j) {
    h_above[j] = static_cast<float>(cost(0, j));
    w[j] = {0, 0, j == 0 ? 0.0f : 1.0f};
    value += static_cast<float>(cost(0, j));
  }
  for (long i = 1; i < n; ++i) {
    float v_left = static_cast<float>(cost(i, 0));  // V(i, 0): the first column's one predecessor
    w[i * m] = {0, 1, 0};
    for (long j = 1; j < m; ++j) {
      const float u = h_above[j], l = v_left;
      const float rmin = std::min(0.0f, std::min(u, l));
      const float ed = ftz_exp2((0.0f - rmin) * exp2_scale), eu = ftz_exp2((u - rmin) * exp2_scale),
                  el = ftz_exp2((l - rmin) * exp2_scale);
      const float sum = ed + eu + el;
      w[i * m + j] = encoded(ed, eu, el, 1.0f / sum);
      const float t = std::fma(-log2_scale, std::log2(sum), static_cast<float>(cost(i, j)) + rmin);
      h_row[j] = t - l;
      v_left = t - u;
    }
    value += m == 1 ? static_cast<float>(cost(i, 0)) : v_left;
    std::swap(h_above, h_row);
  }
  return {value, swept_back(w, n, m)};
}

int main(int argc, char** argv) {
  CLI::App app{"Prices R in float64, float32 and two floats on the accuracy grid's inputs for a seed"};
  uint64_t seed = 0;
  long n = 0;
  int D = 8;
  app.add_option("SEED", seed, "the grid's seed to replay")->required();
  app.add_option("N", n, "the sequences' length")->required()->check(CLI::Range(1L, 1L << 16));
  app.add_option("DIM", D, "features; the grid draws 8")->check(CLI::Range(1, 4096));
  CLI11_PARSE(app, argc, argv);
  const double gammas[5] = {10, 1, 0.1, 0.01, 0.001};
  std::mt19937_64 rng(seed);
  for (double gamma : gammas) {
    const auto [x, y] = draw_grid_pair(rng, n, D);
    const SqEuclideanCost sqeuclidean(float32_matrix(x, n, D), float32_matrix(y, n, D));
    Matrix cost = sqeuclidean.compute();
    for (long k = 0; k < cost.size(); ++k) cost.data()[k] = static_cast<float>(cost.data()[k]);
    Options o;
    o.gamma = gamma;
    const auto reference = soft_dtw_with_alignment(cost, o);
    const Gradients g64 = sqeuclidean.jacobian_product(reference.E);
    std::printf("seed=%llu N=%ld D=%d gamma=%g, error against the float64 reference on the float32 cost (gradient "
                "relative L2 | value relative):",
                static_cast<unsigned long long>(seed), n, D, gamma);
    const auto report = [&](const char* separator, const char* name, const Outcome& r) {
      std::printf("%s R in %s %.3g | %.3g", separator, name, gradient_error(sqeuclidean.jacobian_product(r.E), g64),
                  std::abs(r.value - reference.value) / std::abs(reference.value));
    };
    report("", "float64", run<Float64R>(cost, gamma));
    report(",", "float32", run<Float32R>(cost, gamma));
    report(",", "two floats (cost exact)", run<TwoFloatR<true>>(cost, gamma));
    report(",", "two floats (cost - log term in float32)", run<TwoFloatR<false>>(cost, gamma));
    report(",", "neighbour differences in float32", run_differences(cost, gamma));
    std::printf("\n");
  }
}
