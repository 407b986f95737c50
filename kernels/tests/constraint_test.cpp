// Global constraints in the kernels (tslearn's Sakoe-Chiba radius and Itakura slope, each pair's
// range from its own lengths) against the float64 reference on costs set to +inf outside
// tslearn's masks (harness.hpp's masked_cost): both modes, both dtypes, gamma > 0 and 0, the
// values-only forward and the Hessian-vector product; and what happens without a path.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "harness.hpp"
#include "sdtw/kernels/second_order.hpp"

namespace sdtw::kernels::testing {
namespace {

Constraint sakoe_chiba(int64_t radius) { return {ConstraintKind::sakoe_chiba, radius}; }
Constraint itakura(double slope) { return {ConstraintKind::itakura, 0, slope}; }

// N != M both ways, N or M = 1, strips of 32 rows and more, and lengths (which change the masks).
const std::vector<Case> kCases = {
    {2, 1, 7, 2, 0.5, -1, false, sakoe_chiba(0)},   {2, 9, 1, 3, 1.0, -1, false, sakoe_chiba(2)},
    {3, 33, 31, 3, 0.1, -1, false, sakoe_chiba(0)}, {2, 64, 95, 8, 1.0, -1, false, sakoe_chiba(3)},
    {4, 70, 45, 5, 0.5, -1, true, sakoe_chiba(1)},  {2, 96, 96, 4, 0.3, -1, false, sakoe_chiba(0)},
    {3, 40, 40, 3, 1.0, -1, false, itakura(2.0)},   {2, 64, 95, 8, 1.0, -1, false, itakura(2.0)},
    {4, 70, 45, 5, 0.5, -1, true, itakura(2.0)},    {2, 100, 77, 3, 0.2, -1, true, itakura(1.3)},
    {1, 257, 130, 7, 2.0, -1, false, itakura(3.0)}, {3, 33, 31, 3, 0.0, -1, false, sakoe_chiba(1)},
    {4, 70, 45, 5, 0.0, -1, true, itakura(2.0)},
};

class Constrained : public ::testing::TestWithParam<Case> {};

template <typename T>
void check_cost_mode(const Case& c, double value_tol, double grad_tol) {
  auto rng = seeded_rng("constrained cost mode");
  const Inputs in = draw_inputs(rng, c);
  const std::vector<T> D = cost_tensor<T>(c, in);
  const Expected want = reference_on_cost<T>(c, in, std::vector<double>(D.begin(), D.end()));
  const Outputs<T> got = run_cost_mode<T>(c, in, D);
  EXPECT_LE(max_relative(got.values, want.values), value_tol) << c;
  EXPECT_LE(relative_l2(got.E, want.E), grad_tol) << c;
  // Outside each pair's mask E is exactly 0 (the reference's E is 0 there).
  const std::vector<double> masked_D = masked_cost(c, in, std::vector<double>(D.size(), 0.0));
  for (std::size_t k = 0; k < D.size(); ++k) {
    if (std::isinf(masked_D[k])) {
      ASSERT_EQ(got.E[k], T(0)) << c << " at " << k;
    }
  }
}

// The tolerances of agreement_test.cpp (gamma > 0) and hard_min_test.cpp (gamma = 0, exact in double).
TEST_P(Constrained, CostModeFloat) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<float>(GetParam(), 1e-5, 1e-4);
}
TEST_P(Constrained, CostModeDouble) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<double>(GetParam(), 1e-12, 1e-10);
}
TEST_P(Constrained, FusedFloat) {
  SDTW_REQUIRE_GPU();
  expect_fused_agrees<float>(GetParam(), "constrained fused mode", 1e-5, 1e-4);
}
TEST_P(Constrained, FusedDouble) {
  SDTW_REQUIRE_GPU();
  expect_fused_agrees<double>(GetParam(), "constrained fused mode", 1e-12, 1e-10);
}

// The values-only forward gives the full forward's values bit for bit under a constraint too.
TEST_P(Constrained, ValuesOnlyEqualsTheForward) {
  SDTW_REQUIRE_GPU();
  const Case c = GetParam();
  auto rng = seeded_rng("constrained values only");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<double> x(in.x.size()), y(in.y.size()), full(c.batch), only(c.batch);
  DeviceBuffer<char> workspace(workspace_bytes<double>(dp.problem)), ring(values_workspace_bytes<double>(dp.problem));
  x.upload(in.x);
  y.upload(in.y);
  full.poison();
  only.poison();
  sqeuclidean_forward<double>(dp.problem, x.get(), y.get(), full.get(), workspace.get(), nullptr);
  sqeuclidean_values<double>(dp.problem, x.get(), y.get(), only.get(), ring.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto a = full.download(), b = only.download();
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << c;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Constrained, ::testing::ValuesIn(kCases));

// The Hessian-vector product under a constraint against the reference's on the masked cost, for a
// float64 cost (float64 weights: 1e-12 of the largest entry) and a float32 one (float32 weights:
// second_order_test.cpp's bound, of the larger of the largest entry and max |G| / gamma).
template <typename In>
void check_constrained_hessian_product() {
  for (const Case& c : {Case{3, 40, 29, 3, 0.5, -1, true, sakoe_chiba(2)}, Case{2, 50, 64, 2, 1.0, -1, true, itakura(2.0)}}) {
    auto rng = seeded_rng("constrained hessian product");
    const Inputs in = draw_inputs(rng, c);
    const std::vector<In> D = cost_tensor<In>(c, in);
    const std::vector<double> G = normal<double>(rng, c.batch * c.n * c.m);
    const std::vector<double> want =
        reference::soft_dtw_hessian_product_cost_batch(masked_cost(c, in, to_double(D)).data(), G.data(),
                                                       shape_of(c, in), options_of(c))
            .E_dot;
    SecondOrderProblem problem{c.batch, c.n, c.m, c.gamma, -1, nullptr, nullptr};
    problem.constraint = c.constraint;
    DeviceBuffer<int64_t> x_len(c.batch), y_len(c.batch);
    x_len.upload(std::vector<int64_t>(in.x_len.begin(), in.x_len.end()));
    y_len.upload(std::vector<int64_t>(in.y_len.begin(), in.y_len.end()));
    problem.x_len = x_len.get();
    problem.y_len = y_len.get();
    DeviceBuffer<In> Dd(D.size());
    DeviceBuffer<double> Gd(G.size()), E_dot(G.size());
    DeviceBuffer<char> workspace(alignment_backward_workspace_bytes(problem));
    Dd.upload(D);
    Gd.upload(G);
    E_dot.poison();
    alignment_backward<In>(problem, Dd.get(), Gd.get(), E_dot.get(), workspace.get(), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    // Padding is 0 in the kernel's output and whatever the reference leaves there: compare inside.
    const auto got = E_dot.download();
    double worst = 0, scale = 0, direction = 0;
    for (int64_t b = 0; b < c.batch; ++b)
      for (long i = 0; i < in.x_len[b]; ++i)
        for (long j = 0; j < in.y_len[b]; ++j) {
          const std::size_t k = (b * c.n + i) * c.m + j;
          ASSERT_TRUE(std::isfinite(got[k])) << c << " at " << k;
          worst = std::max(worst, std::abs(got[k] - want[k]));
          scale = std::max(scale, std::abs(want[k]));
          direction = std::max(direction, std::abs(G[k]) / c.gamma);
        }
    if constexpr (std::is_same_v<In, double>) {
      EXPECT_LE(worst / scale, 1e-12) << c;
    } else {
      EXPECT_LE(worst / std::max(scale, direction), kFloat32WeightsTol) << c;
    }
  }
}

TEST(Constrained, HessianProductIsTheReferencesOnMaskedCosts) {
  SDTW_REQUIRE_GPU();
  check_constrained_hessian_product<double>();
}

TEST(Constrained, HessianProductOfAFloatCostIsWithinItsWeights) {
  SDTW_REQUIRE_GPU();
  check_constrained_hessian_product<float>();
}

// Without per-pair lengths the host knows the shape: no path is an error naming the constraint.
TEST(Constrained, NoPathIsAnErrorWhereTheHostKnowsTheShape) {
  Problem problem{1, 3, 12, 2, 1.0};
  problem.constraint = itakura(2.0);
  try {
    (void)workspace_bytes<float>(problem);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("itakura constraint leaves no alignment path for n = 3, m = 12"),
              std::string::npos)
        << e.what();
  }
  problem.constraint = sakoe_chiba(1);
  problem.bandwidth = 4;
  EXPECT_THROW((void)workspace_bytes<float>(problem), std::invalid_argument);
}

// With lengths on the device the kernels cannot refuse: such a pair gets +inf and NaN gradients
// inside its lengths (0 beyond them, as for every pair), the other pairs their usual values.
TEST(Constrained, DeviceLengthsWithoutAPathGiveInfAndNaN) {
  SDTW_REQUIRE_GPU();
  const Case c{2, 12, 12, 2, 0.5, -1, true, itakura(2.0)};
  auto rng = seeded_rng("constrained no path");
  Inputs in = draw_inputs(rng, c);
  in.x_len = {12, 3};
  in.y_len = {12, 12};
  const Outputs<double> got = run_fused_mode<double>(c, in);
  EXPECT_TRUE(std::isfinite(got.values[0]));
  EXPECT_EQ(got.values[1], std::numeric_limits<double>::infinity());
  for (int64_t k = c.n * c.dim; k < 2 * c.n * c.dim; ++k) {
    if (k < (c.n + in.x_len[1]) * c.dim)
      EXPECT_TRUE(std::isnan(got.grad_x[k])) << k;
    else
      EXPECT_EQ(got.grad_x[k], 0.0) << k;
  }
}

}  // namespace
}  // namespace sdtw::kernels::testing
