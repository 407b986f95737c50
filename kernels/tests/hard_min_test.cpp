// gamma = 0, exact DTW, in both modes and dtypes: the value is the reference's hard DTW and E is
// dvalue times the 0/1 indicator of the reference's path, exactly (R is carried in float64 on the
// kernels' own cost, as the reference computes it, so ties and near-ties are broken alike).
#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

const std::vector<Case> kCases = {
    {1, 1, 1, 3, 0.0},     {2, 1, 7, 2, 0.0},         {3, 9, 1, 5, 0.0},           {3, 33, 31, 3, 0.0},
    {2, 64, 95, 8, 0.0, 40}, {5, 70, 45, 12, 0.0, -1, true}, {1, 257, 130, 7, 0.0}, {4, 100, 100, 4, 0.0, 3, true},
};

class HardMin : public ::testing::TestWithParam<Case> {};

// Costs from {0, 1, 2}: many optimal paths, so the tie-break is what is tested.
template <typename T>
std::vector<T> tied_costs(std::mt19937_64& rng, const Case& c) {
  std::uniform_int_distribution<int> pick(0, 2);
  std::vector<T> D(c.batch * c.n * c.m);
  for (auto& d : D) d = static_cast<T>(pick(rng));
  return D;
}

template <typename T>
void check_cost_mode(const Case& c, bool ties) {
  auto rng = seeded_rng(ties ? "hard min, tied costs" : "hard min, cost mode");
  const Inputs in = draw_inputs(rng, c);
  const std::vector<T> D = ties ? tied_costs<T>(rng, c) : cost_tensor<T>(c, in);
  const Expected want = reference_on_cost<T>(c, in, std::vector<double>(D.begin(), D.end()));
  const Outputs<T> got = run_cost_mode<T>(c, in, D);
  EXPECT_LE(max_relative(got.values, want.values), sizeof(T) == 4 ? 1e-7 : 0.0) << c;
  for (std::size_t k = 0; k < want.E.size(); ++k)
    ASSERT_EQ(static_cast<double>(got.E[k]), want.E[k]) << c << " at " << k;
}

// The fused mode against the reference on the cost the kernels compute (sqeuclidean_cost, the
// same cost policy): the same path, so the gradients differ by the Jacobian product's rounding.
template <typename T>
void check_fused_mode(const Case& c, double grad_tol) {
  auto rng = seeded_rng("hard min, fused mode");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size()), D(c.batch * c.n * c.m);
  x.upload(cast<T>(in.x));
  y.upload(cast<T>(in.y));
  sqeuclidean_cost<T>(dp.problem, x.get(), y.get(), D.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Expected want = reference_gradients_on_cost<T>(c, in, to_double(D.download()));
  const Outputs<T> got = run_fused_mode<T>(c, in);
  EXPECT_LE(max_relative(got.values, want.values), sizeof(T) == 4 ? 1e-7 : 0.0) << c;
  EXPECT_LE(relative_l2(got.grad_x, want.grad_x), grad_tol) << c;
  EXPECT_LE(relative_l2(got.grad_y, want.grad_y), grad_tol) << c;
}

TEST_P(HardMin, CostModeFloat) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<float>(GetParam(), false);
  check_cost_mode<float>(GetParam(), true);
}
TEST_P(HardMin, CostModeDouble) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<double>(GetParam(), false);
  check_cost_mode<double>(GetParam(), true);
}
TEST_P(HardMin, FusedFloat) {
  SDTW_REQUIRE_GPU();
  check_fused_mode<float>(GetParam(), 1e-5);
}
TEST_P(HardMin, FusedDouble) {
  SDTW_REQUIRE_GPU();
  check_fused_mode<double>(GetParam(), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Shapes, HardMin, ::testing::ValuesIn(kCases));

// Every path crosses a +inf cost: an infinite value and a NaN E, as at gamma > 0.
TEST(HardMinAlone, NoFinitePathGivesNaNAlignment) {
  SDTW_REQUIRE_GPU();
  const Case c{1, 40, 40, 1, 0.0};
  auto rng = seeded_rng("hard min, blocked");
  const Inputs in = draw_inputs(rng, c);
  std::vector<float> D = cost_tensor<float>(c, in);
  for (int64_t j = 0; j < c.m; ++j) D[20 * c.m + j] = std::numeric_limits<float>::infinity();
  const Outputs<float> got = run_cost_mode<float>(c, in, D);
  EXPECT_EQ(got.values[0], std::numeric_limits<float>::infinity());
  for (const float e : got.E) ASSERT_TRUE(std::isnan(e));
}

}  // namespace
}  // namespace sdtw::kernels::testing
