// The accuracy grid of the kernels issue: float32 fused gradients within 1e-4 relative L2 of
// float64 for N = M in {64, 512, 2048, 8192} and gamma in {10, 1, 0.1, 0.01, 0.001}, D = 8.
#include <future>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

class AccuracyGrid : public ::testing::TestWithParam<int64_t> {};

TEST_P(AccuracyGrid, Float32GradientWithin1e4) {
  SDTW_REQUIRE_GPU();
  const int64_t n = GetParam();
  const std::vector<double> gammas = {10, 1, 0.1, 0.01, 0.001};
  auto rng = seeded_rng("accuracy grid");
  std::vector<Inputs> inputs;
  std::vector<std::future<Expected>> wanted;
  for (double g : gammas) {
    inputs.push_back(draw_inputs(rng, {1, n, n, 8, g}));
    inputs.back().dvalues = {1.0};
  }
  for (std::size_t k = 0; k < gammas.size(); ++k)
    wanted.push_back(std::async(std::launch::async, [&, k] { return reference_for<float>({1, n, n, 8, gammas[k]}, inputs[k], false); }));
  for (std::size_t k = 0; k < gammas.size(); ++k) {
    const Case c{1, n, n, 8, gammas[k]};
    const Expected want = wanted[k].get();
    const Outputs<float> got = run_fused_mode<float>(c, inputs[k]);
    const double ev = max_relative(got.values, want.values), ex = relative_l2(got.grad_x, want.grad_x),
                 ey = relative_l2(got.grad_y, want.grad_y);
    std::printf("[ accuracy ] N=%lld gamma=%g value_rel=%.3g grad_x_rel_l2=%.3g grad_y_rel_l2=%.3g\n",
                static_cast<long long>(n), gammas[k], ev, ex, ey);
    EXPECT_LE(ev, 1e-5) << c;
    EXPECT_LE(ex, 1e-4) << c;
    EXPECT_LE(ey, 1e-4) << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Lengths, AccuracyGrid, ::testing::Values(64, 512, 2048, 8192));

}  // namespace
}  // namespace sdtw::kernels::testing
