// sdtw_torch on the CPU: the C++ front (sdtw::nn) and the operators against the float64 reference.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "sdtw/reference/constraints.hpp"
#include "sdtw/reference/hard_dtw.hpp"
#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/torch/ops.hpp"
#include "sdtw/torch/soft_dtw.hpp"
#include "test_support.hpp"

using namespace sdtw_torch_test;
using sdtw::nn::SoftDtwOptions;

namespace {

at::Tensor randn(std::vector<int64_t> shape, at::ScalarType dtype = torch::kDouble) {
  return torch::randn(shape, torch::TensorOptions().dtype(dtype));
}

SoftDtwOptions opts(double gamma, std::optional<bool> fused = std::nullopt) {
  SoftDtwOptions o;
  o.gamma = gamma;
  o.fused = fused;
  return o;
}

class FusedOrNot : public ::testing::TestWithParam<bool> {};

TEST_P(FusedOrNot, ValuesAndGradientsMatchReference) {
  torch::manual_seed(1);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 5}, {6, 1}, {8, 8}, {9, 4}}) {
    for (double gamma : {1.0, 0.1, 0.01}) {
      const at::Tensor x = randn({3, n, 2}), y = randn({3, m, 2});
      const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, opts(gamma, GetParam())); }, x, y);
      const auto ref = reference(x, y, gamma, std::nullopt);
      EXPECT_LT(rel_l2(r.values, ref.values), 1e-12) << n << " " << m << " " << gamma;
      EXPECT_LT(rel_l2(r.grad_x, ref.grad_x), 1e-9) << n << " " << m << " " << gamma;
      EXPECT_LT(rel_l2(r.grad_y, ref.grad_y), 1e-9) << n << " " << m << " " << gamma;
    }
  }
}

// gamma = 0 through the C++ front: the value is the reference's hard DTW on the squared Euclidean
// cost and the gradient is that path's alignment through the cost, 2 (rowsum(E) x - E y).
TEST_P(FusedOrNot, GammaZeroIsHardDtwWithItsPathAsGradient) {
  torch::manual_seed(4);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 5}, {6, 1}, {7, 4}, {5, 9}}) {
    const at::Tensor x = randn({3, n, 2}), y = randn({3, m, 2});
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, opts(0.0, GetParam())); }, x, y);
    for (int64_t b = 0; b < 3; ++b) {
      const at::Tensor D = (x[b].unsqueeze(1) - y[b].unsqueeze(0)).pow(2).sum(-1);
      const auto hard = sdtw::reference::hard_dtw(to_matrix(D));
      at::Tensor E = torch::zeros({n, m}, torch::kDouble);
      for (auto [i, j] : hard.path) E[i][j] = 1.0;
      const at::Tensor gx = 2.0 * (x[b] * E.sum(1, true) - E.mm(y[b]));
      const at::Tensor gy = 2.0 * (y[b] * E.sum(0).unsqueeze(1) - E.t().mm(x[b]));
      EXPECT_NEAR(r.values[b].item<double>(), hard.value, 1e-12 * std::max(1.0, hard.value)) << n << " " << m;
      EXPECT_LT(rel_l2(r.grad_x[b], gx), 1e-12) << n << " " << m << " " << b;
      EXPECT_LT(rel_l2(r.grad_y[b], gy), 1e-12) << n << " " << m << " " << b;
    }
  }
}

TEST_P(FusedOrNot, LengthsBandwidthNormalize) {
  torch::manual_seed(2);
  const at::Tensor x = randn({3, 9, 3}), y = randn({3, 7, 3});
  const std::vector<long> xl{9, 4, 6}, yl{7, 5, 3};
  const at::Tensor xlt = torch::tensor(std::vector<int64_t>(xl.begin(), xl.end()));
  const at::Tensor ylt = torch::tensor(std::vector<int64_t>(yl.begin(), yl.end()));
  for (int variant = 0; variant < 3; ++variant) {
    SoftDtwOptions o = opts(0.3, GetParam());
    if (variant == 1) o.bandwidth = 3;
    if (variant == 2) o.normalize = true;
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, o, xlt, ylt); }, x, y);
    const auto ref = reference(x, y, 0.3, variant == 1 ? std::optional<long>(3) : std::nullopt, xl, yl, variant == 2);
    EXPECT_LT(rel_l2(r.values, ref.values), 1e-12) << variant;
    EXPECT_LT(rel_l2(r.grad_x, ref.grad_x), 1e-9) << variant;
    EXPECT_LT(rel_l2(r.grad_y, ref.grad_y), 1e-9) << variant;
  }
}

// tslearn's constraints through SoftDtwOptions: each pair's value and gradient are the reference's
// on its squared-Euclidean cost masked by tslearn's mask for its own lengths.
TEST_P(FusedOrNot, GlobalConstraintsAreTheReferenceOnMaskedCosts) {
  torch::manual_seed(6);
  const at::Tensor x = randn({3, 9, 2}), y = randn({3, 7, 2});
  const std::vector<long> xl{9, 4, 7}, yl{7, 7, 3};
  for (const bool itakura : {false, true}) {
    SoftDtwOptions o = opts(0.4, GetParam());
    o.global_constraint = itakura ? "itakura" : "sakoe_chiba";
    if (itakura) o.itakura_max_slope = 2.5;
    else o.sakoe_chiba_radius = 1;
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, o, torch::tensor({9, 4, 7}),
                                                                        torch::tensor({7, 7, 3})); }, x, y);
    for (int64_t b = 0; b < 3; ++b) {
      const at::Tensor xb = x[b].slice(0, 0, xl[b]), yb = y[b].slice(0, 0, yl[b]);
      const sdtw::reference::Mask mask = itakura ? sdtw::reference::itakura_mask(xl[b], yl[b], 2.5)
                                                 : sdtw::reference::sakoe_chiba_mask(xl[b], yl[b], 1);
      const sdtw::reference::Matrix D = to_matrix((xb.unsqueeze(1) - yb.unsqueeze(0)).pow(2).sum(-1));
      const auto ref = sdtw::reference::soft_dtw_with_alignment(sdtw::reference::apply_mask(D, mask),
                                                                {0.4, std::nullopt});
      const at::Tensor E = to_tensor(ref.E);
      EXPECT_NEAR(r.values[b].item<double>(), ref.value, 1e-12 * std::abs(ref.value)) << itakura << " " << b;
      const at::Tensor gx = 2.0 * (xb * E.sum(1, true) - E.mm(yb)), gy = 2.0 * (yb * E.sum(0).unsqueeze(1) - E.t().mm(xb));
      EXPECT_LT(rel_l2(r.grad_x[b].slice(0, 0, xl[b]), gx), 1e-9) << itakura << " " << b;
      EXPECT_LT(rel_l2(r.grad_y[b].slice(0, 0, yl[b]), gy), 1e-9) << itakura << " " << b;
    }
  }
  SoftDtwOptions both = opts(0.4, GetParam());
  both.bandwidth = 2;
  both.sakoe_chiba_radius = 1;
  EXPECT_THROW(sdtw::nn::soft_dtw(x, y, both), c10::ValueError);
}

TEST_P(FusedOrNot, UnbatchedNonContiguousAndReductions) {
  torch::manual_seed(3);
  const at::Tensor x = randn({3, 2, 6}).transpose(1, 2), y = randn({3, 2, 5}).transpose(1, 2);
  const SoftDtwOptions o = opts(0.5, GetParam());
  const at::Tensor v = sdtw::nn::soft_dtw(x, y, o);
  EXPECT_TRUE(torch::allclose(v, sdtw::nn::soft_dtw(x.contiguous(), y.contiguous(), o)));
  const at::Tensor v0 = sdtw::nn::soft_dtw(x[0], y[0], o);
  EXPECT_EQ(v0.dim(), 0);
  EXPECT_TRUE(torch::allclose(v0, v[0]));
  SoftDtwOptions mean = o, sum = o;
  mean.reduction = "mean";
  sum.reduction = "sum";
  EXPECT_TRUE(torch::allclose(sdtw::nn::soft_dtw(x, y, mean), v.mean()));
  EXPECT_TRUE(torch::allclose(sdtw::nn::SoftDTW(sum)(x, y), v.sum()));
}

INSTANTIATE_TEST_SUITE_P(Modes, FusedOrNot, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "fused" : "unfused"; });

TEST(TorchCpu, Float32ValuesAndHalfInputs) {
  torch::manual_seed(4);
  const at::Tensor x = randn({2, 7, 3}), y = randn({2, 5, 3});
  const at::Tensor v64 = sdtw::nn::soft_dtw(x, y, opts(0.1));
  const at::Tensor v32 = sdtw::nn::soft_dtw(x.to(torch::kFloat), y.to(torch::kFloat), opts(0.1));
  EXPECT_EQ(v32.scalar_type(), torch::kFloat);
  EXPECT_LT(rel_l2(v32, v64), 1e-6);
  const at::Tensor vb = sdtw::nn::soft_dtw(x.to(torch::kBFloat16), y.to(torch::kBFloat16), opts(0.1));
  EXPECT_EQ(vb.scalar_type(), torch::kFloat);
}

// The C++ front promotes an integer target as Python's does: both call sdtw::soft_dtw_loss.
TEST(TorchCpu, IntegerTargetIsPromoted) {
  torch::manual_seed(5);
  const at::Tensor x = randn({2, 6, 3}).requires_grad_(), same = x.detach().clone().requires_grad_();
  const at::Tensor y = torch::randint(-3, 4, {2, 5, 3});
  const at::Tensor values = sdtw::nn::soft_dtw(x, y, opts(0.5));
  const at::Tensor expected = sdtw::nn::soft_dtw(same, y.to(torch::kDouble), opts(0.5));
  EXPECT_TRUE(torch::equal(values, expected));
  values.sum().backward();
  expected.sum().backward();
  EXPECT_TRUE(torch::equal(x.grad(), same.grad()));
  EXPECT_EQ(sdtw::nn::soft_dtw(y, y.to(torch::kInt), opts(0.5)).scalar_type(), torch::kFloat) << "torch's default dtype";
}

TEST(TorchCpu, CostTensorAndAlignment) {
  torch::manual_seed(5);
  const at::Tensor x = randn({2, 6, 3}), y = randn({2, 5, 3});
  const at::Tensor D = sdtw::ops::pairwise_cost(x, y);
  EXPECT_TRUE(torch::allclose(D, torch::cdist(x, y).pow(2)));
  EXPECT_TRUE(torch::allclose(sdtw::nn::soft_dtw_cost(D, opts(0.2)), sdtw::nn::soft_dtw(x, y, opts(0.2))));
  const at::Tensor E = sdtw::nn::alignment(x, y, opts(0.2));
  ASSERT_EQ(E.sizes(), (std::vector<int64_t>{2, 6, 5}));
  at::Tensor Dg = D.clone().requires_grad_(true);
  sdtw::nn::soft_dtw_cost(Dg, opts(0.2)).sum().backward();
  EXPECT_TRUE(torch::allclose(E, Dg.grad()));
  EXPECT_TRUE(torch::allclose(E, sdtw::nn::alignment_from_cost(D, opts(0.2))));
  EXPECT_NEAR(E[0][0][0].item<double>(), 1.0, 1e-12);
  EXPECT_NEAR(E[1][5][4].item<double>(), 1.0, 1e-12);
}

// Every named cost is fused by default; on the CPU the named costs other than squared Euclidean
// run their cost tensor, so fused, fused=true and fused=false give the same values and gradients,
// those of soft-DTW on the pairwise cost.
TEST(TorchCpu, NamedCostsFusedByDefault) {
  torch::manual_seed(6);
  const at::Tensor x = randn({2, 6, 3}), y = randn({2, 5, 3});
  for (const std::string dist : {"l1", "euclidean", "cosine", "negative_dot"}) {
    const at::Tensor xr = x.clone().requires_grad_(true);
    const at::Tensor want = sdtw::ops::soft_dtw_cost(sdtw::ops::pairwise_cost(xr, y, dist), 0.3);
    want.sum().backward();
    for (const std::optional<bool> fused : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
      SoftDtwOptions o = opts(0.3, fused);
      o.dist = dist;
      const at::Tensor xg = x.clone().requires_grad_(true);
      const at::Tensor values = sdtw::nn::soft_dtw(xg, y, o);
      values.sum().backward();
      EXPECT_TRUE(torch::allclose(values, want, 1e-12, 1e-12)) << dist;
      EXPECT_TRUE(torch::allclose(xg.grad(), xr.grad(), 1e-12, 1e-12)) << dist;
    }
  }
}

TEST(TorchCpu, OperatorsThroughTheDispatcher) {
  const at::Tensor x = randn({2, 5, 3}), y = randn({2, 4, 3});
  auto [values, state] = sdtw::ops::sqeuclidean_forward(x, y, 1.0);
  EXPECT_EQ(state.sizes(), (std::vector<int64_t>{2, 5, 4}));
  auto [gx, gy] = sdtw::ops::sqeuclidean_backward(torch::ones_like(values), x, y, state, 1.0);
  const auto ref = reference(x, y, 1.0, std::nullopt);
  EXPECT_LT(rel_l2(gx, ref.grad_x), 1e-9);
  EXPECT_LT(rel_l2(gy, ref.grad_y), 1e-9);
}

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TorchCpu, BadInputsNameTheArgument) {
  const at::Tensor x = randn({2, 5, 3}), y = randn({2, 4, 3});
  expect_error([&] { sdtw::nn::soft_dtw(x, y.to(torch::kFloat)); }, "same dtype");
  expect_error([&] { sdtw::nn::soft_dtw(x, randn({3, 4, 3})); }, "same batch size");
  expect_error([&] { sdtw::nn::soft_dtw(x, randn({2, 4, 2})); }, "same number of features");
  expect_error([&] { sdtw::nn::soft_dtw(randn({2, 0, 3}), y); }, "x must have at least one time step");
  expect_error([&] { sdtw::nn::soft_dtw(x, y, opts(-1.0)); }, "gamma must be finite and >= 0 (got -1)");
  expect_error([&] { sdtw::nn::soft_dtw(x[0], y); }, "both be batched");
  SoftDtwOptions band = opts(1.0);
  band.bandwidth = 3;
  expect_error([&] { sdtw::nn::soft_dtw(randn({2, 9, 3}), y, band); }, "bandwidth 3");
  expect_error([&] { sdtw::nn::soft_dtw(x, y, opts(1.0), torch::tensor({5, 6})); }, "x_lengths[1] = 6");
  SoftDtwOptions bad_dist = opts(1.0);
  bad_dist.dist = "dot";
  expect_error([&] { sdtw::nn::SoftDTW m(bad_dist); }, "'negative_dot'");
  SoftDtwOptions bad_reduction;
  bad_reduction.reduction = "max";
  expect_error([&] { sdtw::nn::soft_dtw(x, y, bad_reduction); }, "reduction");
  SoftDtwOptions checked;
  checked.check_inputs = true;
  at::Tensor nan = y.clone();
  nan[1][2][0] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { sdtw::nn::soft_dtw(x, nan, checked); },
               "y has a non-finite value (nan) at batch index 1, time step 2, feature 0 (check_inputs=True)");
  EXPECT_TRUE(torch::isfinite(sdtw::nn::soft_dtw(x, nan, checked, std::nullopt, torch::tensor({4, 2}))).all().item<bool>())
      << "a NaN past y_lengths is padding";
}

// As in torch's own losses, a NaN in the data gives that pair a NaN value; the others are untouched.
TEST(TorchCpu, NaNStaysInItsPair) {
  const at::Tensor x = randn({3, 5, 3}), y = randn({3, 4, 3});
  at::Tensor nan = x.clone();
  nan[1][2][0] = std::numeric_limits<double>::quiet_NaN();
  const at::Tensor clean = sdtw::nn::soft_dtw(x, y), values = sdtw::nn::soft_dtw(nan, y);
  EXPECT_TRUE(std::isnan(values[1].item<double>()));
  EXPECT_EQ(values[0].item<double>(), clean[0].item<double>());
  EXPECT_EQ(values[2].item<double>(), clean[2].item<double>());
}

TEST(TorchCpu, RetainGraphAndModulePrint) {
  const at::Tensor x = randn({2, 5, 3}).requires_grad_(true), y = randn({2, 4, 3});
  const at::Tensor out = sdtw::nn::soft_dtw(x, y).sum();
  const auto g1 = torch::autograd::grad({out}, {x}, {}, /*retain_graph=*/true);
  const auto g2 = torch::autograd::grad({out}, {x});
  EXPECT_TRUE(torch::allclose(g1[0], g2[0]));
  std::ostringstream s;
  s << *sdtw::nn::SoftDTW(opts(0.5));
  EXPECT_NE(s.str().find("gamma=0.5"), std::string::npos);
}

}  // namespace
