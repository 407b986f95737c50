// Both modes, both dtypes, against the float64 reference on fresh random inputs at many shapes.
#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

const std::vector<Case> kCases = {
    {1, 1, 1, 3, 1.0},         {2, 1, 7, 2, 0.5},          {3, 9, 1, 5, 1.0},      {2, 32, 32, 4, 1.0},
    {3, 33, 31, 3, 0.1},       {2, 64, 95, 8, 1.0, 40},    {4, 100, 100, 16, 0.01, 5},
    {5, 70, 45, 12, 1.0, -1, true},  {3, 96, 96, 64, 0.3, 12, true}, {1, 257, 130, 7, 2.0},
    {2, 129, 200, 20, 0.05, -1, true}, {6, 40, 40, 1, 10.0},  {1, 300, 301, 33, 1.0, 3},
    {2, 70, 90, 100, 0.5, -1, true},   {1, 65, 33, 130, 1.0, 40},
};

class Agreement : public ::testing::TestWithParam<Case> {};

template <typename T>
void check_cost_mode(const Case& c, double value_tol, double grad_tol) {
  auto rng = seeded_rng("cost mode");
  const Inputs in = draw_inputs(rng, c);
  const Expected want = reference_for<T>(c, in);
  const Outputs<T> got = run_cost_mode<T>(c, in, cost_tensor<T>(c, in));
  EXPECT_LE(max_relative(got.values, want.values), value_tol) << c;
  EXPECT_LE(relative_l2(got.E, want.E), grad_tol) << c;
}

// float: R in float64, exp/log in float, weights as unorm16 (~1e-5 gradient error by design).
TEST_P(Agreement, CostModeFloat) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<float>(GetParam(), 1e-5, 1e-4);
}
TEST_P(Agreement, CostModeDouble) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<double>(GetParam(), 1e-12, 1e-10);
}
TEST_P(Agreement, FusedFloat) {
  SDTW_REQUIRE_GPU();
  expect_fused_agrees<float>(GetParam(), "fused mode", 1e-5, 1e-4);
}
TEST_P(Agreement, FusedDouble) {
  SDTW_REQUIRE_GPU();
  expect_fused_agrees<double>(GetParam(), "fused mode", 1e-12, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Agreement, ::testing::ValuesIn(kCases));

// A +inf cost forbids its cell, as in the reference: paths go around it (here a wall across all
// three strips with one gap, in the middle strip) and its E is 0.
template <typename T>
void check_forbidden_cells(double value_tol, double grad_tol) {
  const Case c{2, 70, 70, 3, 0.5};
  auto rng = seeded_rng("forbidden cells");
  const Inputs in = draw_inputs(rng, c);
  std::vector<T> D = cost_tensor<T>(c, in);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      if (i != 40) D[(b * c.n + i) * c.m + 35] = std::numeric_limits<T>::infinity();
  const Expected want = reference_on_cost<T>(c, in, std::vector<double>(D.begin(), D.end()));
  const Outputs<T> got = run_cost_mode<T>(c, in, D);
  for (const T v : got.values) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_LE(max_relative(got.values, want.values), value_tol);
  EXPECT_LE(relative_l2(got.E, want.E), grad_tol);
}

TEST(Agreement, InfiniteCostsForbidTheirCells) {
  SDTW_REQUIRE_GPU();
  check_forbidden_cells<float>(1e-5, 1e-4);
  check_forbidden_cells<double>(1e-12, 1e-10);
}

// Inputs far from unit scale: huge costs with a tiny gamma must stay finite and accurate.
TEST(Agreement, LargeCostsSmallGammaStayFinite) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("large costs");
  const Case c{2, 80, 70, 4, 1e-3};
  const Inputs in = draw_inputs(rng, c, 300.0);
  const Expected want = reference_for<float>(c, in);
  const Outputs<float> got = run_fused_mode<float>(c, in);
  EXPECT_LE(max_relative(got.values, want.values), 1e-5);
  EXPECT_LE(relative_l2(got.grad_x, want.grad_x), 1e-4);
}

}  // namespace
}  // namespace sdtw::kernels::testing
