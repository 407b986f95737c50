// The kernels' accuracy grid: float32 fused gradients against float64 for N = M in
// {64, 512, 2048, 8192} and gamma in {10, 1, 0.1, 0.01, 0.001}, D = 8. The 1e-4 bound (relative
// L2) holds the kernels' own error: against the float64 reference on the float32 cost the kernels
// compute (sqeuclidean_cost runs the arithmetic that the fused mode stages). Against the float64
// cost the error also holds the cost's rounding, which small gamma and long lengths amplify past
// 1e-4 for rare inputs whatever float32 cost reaches the DP (docs/DESIGN.md §3.5):
// that error, and how far the float32 cost alone moves the reference, are printed beside.
#include <future>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

// The fused kernels' float32 cost of the inputs, in float64.
std::vector<double> kernel_cost(const Case& c, const Inputs& in) {
  DeviceBuffer<float> x(in.x.size()), y(in.y.size()), D(c.batch * c.n * c.m);
  x.upload(cast<float>(in.x));
  y.upload(cast<float>(in.y));
  D.poison();
  sqeuclidean_cost<float>(Problem{c.batch, c.n, c.m, c.dim, c.gamma}, x.get(), y.get(), D.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return to_double(D.download());
}

// The larger of grad_x's and grad_y's relative L2 error; got: the kernels' Outputs or a reference's Expected.
template <typename Got>
double worst_gradient_error(const Got& got, const Expected& want) {
  return std::max(relative_l2(got.grad_x, want.grad_x), relative_l2(got.grad_y, want.grad_y));
}

class AccuracyGrid : public ::testing::TestWithParam<int64_t> {};

TEST_P(AccuracyGrid, Float32GradientWithin1e4) {
  SDTW_REQUIRE_GPU();
  const int64_t n = GetParam();
  const std::vector<double> gammas = {10, 1, 0.1, 0.01, 0.001};
  auto rng = seeded_rng("accuracy grid");
  std::vector<Inputs> inputs;
  std::vector<std::future<Expected>> wanted, wanted_on_kernel_cost;
  for (double g : gammas) {
    inputs.push_back(draw_inputs(rng, {1, n, n, 8, g}));
    inputs.back().dvalues = {1.0};
  }
  for (std::size_t k = 0; k < gammas.size(); ++k) {
    const Case c{1, n, n, 8, gammas[k]};
    wanted.push_back(std::async(std::launch::async, [&, c, k] { return reference_for<float>(c, inputs[k], false); }));
    wanted_on_kernel_cost.push_back(std::async(std::launch::async, [&, c, k, D = kernel_cost(c, inputs[k])] {
      return reference_gradients_on_cost<float>(c, inputs[k], D);
    }));
  }
  for (std::size_t k = 0; k < gammas.size(); ++k) {
    const Case c{1, n, n, 8, gammas[k]};
    const Expected want = wanted[k].get(), want_on_kernel_cost = wanted_on_kernel_cost[k].get();
    const Outputs<float> got = run_fused_mode<float>(c, inputs[k]);
    const double ev = max_relative(got.values, want.values);
    const double kernels = worst_gradient_error(got, want_on_kernel_cost), end_to_end = worst_gradient_error(got, want);
    const double cost = worst_gradient_error(want_on_kernel_cost, want);
    std::printf("[ accuracy ] N=%lld gamma=%g value_rel=%.3g grad_rel_l2=%.3g (against the float64 cost %.3g; the "
                "float32 cost alone moves the reference by %.3g)\n",
                static_cast<long long>(n), gammas[k], ev, kernels, end_to_end, cost);
    EXPECT_LE(ev, 1e-5) << c;
    EXPECT_LE(kernels, 1e-4) << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Lengths, AccuracyGrid, ::testing::Values(64, 512, 2048, 8192));

}  // namespace
}  // namespace sdtw::kernels::testing
