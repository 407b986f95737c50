// NaN and infinite costs give the CPU operator's value, at gamma = 0 and gamma > 0, in the full
// forward and the values-only one: NaN for a NaN cost even where it has one path to the end (a pair
// of one row or one column, a length of 1, a band of 0) or lies behind a wall of +inf costs (no
// finite predecessor); at gamma = 0 a -inf cost is NaN as well. A pair whose value is not finite
// has NaN in E inside its lengths.
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Injected {
  const char* name;
  Case c;
  std::vector<long> x_len, y_len;  // empty: full lengths
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> costs;  // (pair, i, j) -> cost
};

std::map<std::tuple<int64_t, int64_t, int64_t>, double> wall_and(int64_t n, int64_t row, int64_t i, int64_t j,
                                                                   double value) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> costs;
  for (int64_t k = 0; k < n; ++k) costs[{0, row, k}] = kInf;
  costs[{0, i, j}] = value;
  return costs;
}

std::vector<Injected> cases(double gamma) {
  return {
      {"1 x M", {2, 1, 40, 1, gamma}, {}, {}, {{{0, 0, 3}, kNaN}}},
      {"N x 1 across strips", {2, 70, 1, 1, gamma}, {}, {}, {{{0, 5, 0}, kNaN}, {{1, 40, 0}, kNaN}}},
      {"lengths of 1", {3, 6, 9, 1, gamma, -1, true}, {1, 6, 1}, {9, 1, 1},
       {{{0, 0, 4}, kNaN}, {{1, 2, 0}, kNaN}, {{2, 0, 0}, kNaN}}},
      {"band of 0", {1, 40, 40, 1, gamma, 0}, {}, {}, {{{0, 10, 10}, kNaN}}},
      {"NaN behind +inf", {2, 40, 40, 1, gamma}, {}, {}, wall_and(40, 20, 30, 5, kNaN)},
      {"-inf", {2, 10, 12, 1, gamma}, {}, {}, {{{0, 3, 4}, -kInf}, {{1, 9, 11}, -kInf}}},
      {"-inf in 1 x M", {1, 1, 40, 1, gamma}, {}, {}, {{{0, 0, 7}, -kInf}}},
      {"-inf behind +inf", {1, 40, 40, 1, gamma}, {}, {}, wall_and(40, 20, 30, 5, -kInf)},
  };
}

// The CPU operator's value (pytorch/src/ops_cpu.cpp): at gamma = 0 NaN for a NaN or -inf cost in the
// band, else the reference's hard DTW; at gamma > 0 the float64 reference, which carries NaN (and
// -inf, unless at the end) on through every cell.
double cpu_value(const Case& c, const Inputs& in, const std::vector<double>& D, int64_t b) {
  if (c.gamma > 0.0) return reference::soft_dtw_cost_batch(D.data(), shape_of(c, in), options_of(c), false).values[b];
  const auto band = options_of(c).bandwidth;
  for (long i = 0; i < in.x_len[b]; ++i)
    for (long j = 0; j < in.y_len[b]; ++j) {
      const double d = D[(b * c.n + i) * c.m + j];
      if (reference::in_band(i, j, band) && (std::isnan(d) || d == -kInf)) return kNaN;
    }
  // The reference's hard DTW refuses NaN and -inf costs, so pair b goes to it alone.
  const Case one{1, c.n, c.m, c.dim, c.gamma, c.bandwidth, c.lengths};
  Inputs pair;
  pair.x_len = {in.x_len[b]};
  pair.y_len = {in.y_len[b]};
  const std::vector<double> D_b(D.begin() + b * c.n * c.m, D.begin() + (b + 1) * c.n * c.m);
  return hard_dtw_on_cost(one, pair, D_b).values[0];
}

template <typename T>
void check(const Injected& k) {
  const Case& c = k.c;
  auto rng = seeded_rng("non-finite costs");
  Inputs in = draw_inputs(rng, c);
  if (!k.x_len.empty()) in.x_len = k.x_len;
  if (!k.y_len.empty()) in.y_len = k.y_len;
  std::vector<T> D = cost_tensor<T>(c, in);
  for (const auto& [at, value] : k.costs)
    D[(std::get<0>(at) * c.n + std::get<1>(at)) * c.m + std::get<2>(at)] = static_cast<T>(value);
  const std::vector<double> D64(D.begin(), D.end());

  const Outputs<T> got = run_cost_mode<T>(c, in, D);
  DeviceProblem dp(c, in);
  DeviceBuffer<T> D_device(D.size()), only(c.batch);
  DeviceBuffer<char> borders(values_workspace_bytes<T>(dp.problem));
  D_device.upload(D);
  only.poison();
  borders.poison();
  cost_values<T>(dp.problem, D_device.get(), only.get(), borders.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<T> values_only = only.download();

  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (int64_t b = 0; b < c.batch; ++b) {
    const double want = static_cast<double>(static_cast<T>(cpu_value(c, in, D64, b)));
    for (const double v : {static_cast<double>(got.values[b]), static_cast<double>(values_only[b])}) {
      if (std::isnan(want) || std::isinf(want))
        EXPECT_TRUE(std::isnan(want) ? std::isnan(v) : v == want) << k.name << " pair " << b << ": " << v << " for " << want;
      else
        EXPECT_LE(std::abs(v - want), tol * std::abs(want)) << k.name << " pair " << b;
    }
    if (std::isfinite(want)) continue;
    for (long i = 0; i < in.x_len[b]; ++i)
      for (long j = 0; j < in.y_len[b]; ++j) {
        ASSERT_TRUE(std::isnan(got.E[(b * c.n + i) * c.m + j])) << k.name << " pair " << b << " E(" << i << ", " << j << ")";
      }
  }
}

// gamma = 0 (the hard-min instantiation) and gamma > 0.
class NonFiniteCost : public ::testing::TestWithParam<double> {};

TEST_P(NonFiniteCost, Float) {
  SDTW_REQUIRE_GPU();
  for (const auto& k : cases(GetParam())) check<float>(k);
}
TEST_P(NonFiniteCost, Double) {
  SDTW_REQUIRE_GPU();
  for (const auto& k : cases(GetParam())) check<double>(k);
}

INSTANTIATE_TEST_SUITE_P(Gammas, NonFiniteCost, ::testing::Values(0.0, 0.5));

}  // namespace
}  // namespace sdtw::kernels::testing
