// sdtw_torch on CUDA against the float64 reference. Each test skips itself (GTEST_SKIP, by name)
// when torch sees no CUDA device.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "sdtw/torch/ops.hpp"
#include "sdtw/torch/soft_dtw.hpp"
#include "test_support.hpp"

using namespace sdtw_torch_test;
using sdtw::nn::SoftDtwOptions;

namespace {

#define SKIP_WITHOUT_CUDA()                                                              \
  do {                                                                                   \
    if (!torch::cuda::is_available()) GTEST_SKIP() << "needs a CUDA device (none found)"; \
  } while (0)

SoftDtwOptions opts(double gamma, bool fused) {
  SoftDtwOptions o;
  o.gamma = gamma;
  o.fused = fused;
  return o;
}

class CudaModes : public ::testing::TestWithParam<std::tuple<bool, at::ScalarType>> {};

TEST_P(CudaModes, MatchesReference) {
  SKIP_WITHOUT_CUDA();
  ASSERT_TRUE(sdtw::ops::built_with_cuda()) << "sdtw_torch was built without its CUDA implementations";
  const auto [fused, dtype] = GetParam();
  const double tol = dtype == torch::kDouble ? 1e-10 : 1e-4;
  torch::manual_seed(1);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 40}, {33, 1}, {64, 64}, {130, 70}}) {
    const at::Tensor x = torch::randn({3, n, 4}, torch::kDouble), y = torch::randn({3, m, 4}, torch::kDouble);
    const auto opt = torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, opts(0.1, fused)); }, x.to(opt),
                       y.to(opt));
    const auto ref = reference(x.to(dtype), y.to(dtype), 0.1, std::nullopt);
    EXPECT_EQ(r.values.scalar_type(), dtype);
    EXPECT_LT(rel_l2(r.values, ref.values), tol) << n << " " << m;
    EXPECT_LT(rel_l2(r.grad_x, ref.grad_x), tol) << n << " " << m;
    EXPECT_LT(rel_l2(r.grad_y, ref.grad_y), tol) << n << " " << m;
  }
}

TEST_P(CudaModes, LengthsOnTheDeviceBandwidthNormalize) {
  SKIP_WITHOUT_CUDA();
  const auto [fused, dtype] = GetParam();
  const double tol = dtype == torch::kDouble ? 1e-10 : 1e-4;
  torch::manual_seed(2);
  const at::Tensor x = torch::randn({3, 50, 3}, torch::kDouble), y = torch::randn({3, 45, 3}, torch::kDouble);
  const std::vector<long> xl{50, 20, 7}, yl{45, 25, 9};
  const auto opt = torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
  const at::Tensor xlt = torch::tensor(std::vector<int64_t>(xl.begin(), xl.end())).to(torch::kCUDA);
  const at::Tensor ylt = torch::tensor(std::vector<int64_t>(yl.begin(), yl.end())).to(torch::kCUDA);
  for (int variant = 0; variant < 3; ++variant) {
    SoftDtwOptions o = opts(0.3, fused);
    if (variant == 1) o.bandwidth = 10;
    if (variant == 2) o.normalize = true;
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, o, xlt, ylt); }, x.to(opt), y.to(opt));
    const auto ref = reference(x.to(dtype), y.to(dtype), 0.3, variant == 1 ? std::optional<long>(10) : std::nullopt,
                               xl, yl, variant == 2);
    EXPECT_LT(rel_l2(r.values, ref.values), variant == 2 ? 10 * tol : tol) << variant;  // divergence: a difference
    EXPECT_LT(rel_l2(r.grad_x, ref.grad_x), tol) << variant;
    EXPECT_LT(rel_l2(r.grad_y, ref.grad_y), tol) << variant;
  }
}

// gamma = 0 through the C++ front on the GPU: the hard path (alignment) is the CPU's on the GPU's own
// cost, exactly, and the values and gradients are that path's.
TEST_P(CudaModes, GammaZeroIsTheCpuHardPath) {
  SKIP_WITHOUT_CUDA();
  const auto [fused, dtype] = GetParam();
  const double tol = dtype == torch::kDouble ? 1e-12 : 1e-5;
  torch::manual_seed(3);
  const auto opt = torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
  const at::Tensor x = torch::randn({3, 70, 4}, torch::kDouble).to(opt);
  const at::Tensor y = torch::randn({3, 45, 4}, torch::kDouble).to(opt);
  const SoftDtwOptions o = opts(0.0, fused);
  const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, o); }, x, y);
  const at::Tensor path = sdtw::nn::alignment(x, y, o);
  const at::Tensor D = sdtw::ops::pairwise_cost(x, y, "sqeuclidean").to(torch::kCPU, torch::kDouble);
  const at::Tensor want_path = sdtw::nn::alignment_from_cost(D, opts(0.0, false));
  EXPECT_TRUE(torch::equal(path.to(torch::kCPU, torch::kDouble), want_path));
  EXPECT_LT(rel_l2(r.values, sdtw::nn::soft_dtw_cost(D, opts(0.0, false))), tol);
  const at::Tensor xd = x.to(torch::kCPU, torch::kDouble), yd = y.to(torch::kCPU, torch::kDouble);
  const at::Tensor gx = 2.0 * (xd * want_path.sum(2, true) - want_path.bmm(yd));
  const at::Tensor gy = 2.0 * (yd * want_path.sum(1).unsqueeze(2) - want_path.transpose(1, 2).bmm(xd));
  EXPECT_LT(rel_l2(r.grad_x, gx), tol);
  EXPECT_LT(rel_l2(r.grad_y, gy), tol);
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaModes,
                         ::testing::Combine(::testing::Values(true, false),
                                            ::testing::Values(torch::kFloat, torch::kDouble)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "fused_" : "unfused_") +
                                  (std::get<1>(info.param) == torch::kFloat ? "float32" : "float64");
                         });

TEST(TorchCuda, GradientAccuracyN2048Gamma001) {
  SKIP_WITHOUT_CUDA();
  torch::manual_seed(3);
  const at::Tensor x = torch::randn({2, 2048, 8}), y = torch::randn({2, 2048, 8});
  SoftDtwOptions o;
  o.gamma = 0.01;
  const auto r = run([&](auto a, auto b) { return sdtw::nn::SoftDTW(o)(a, b); }, x.cuda(), y.cuda());
  const auto ref = run([&](auto a, auto b) { return sdtw::nn::SoftDTW(o)(a, b); }, x.to(torch::kDouble),
                       y.to(torch::kDouble));
  EXPECT_LT(rel_l2(r.grad_x, ref.grad_x), 1e-4);
  EXPECT_LT(rel_l2(r.grad_y, ref.grad_y), 1e-4);
}

TEST(TorchCuda, HalfInputsAndCostTensor) {
  SKIP_WITHOUT_CUDA();
  torch::manual_seed(4);
  const at::Tensor x = torch::randn({2, 40, 8}), y = torch::randn({2, 30, 8});
  for (auto dtype : {torch::kHalf, torch::kBFloat16}) {
    const auto r = run([&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b); }, x.to(dtype).cuda(),
                       y.to(dtype).cuda());
    EXPECT_EQ(r.values.scalar_type(), torch::kFloat);
    EXPECT_EQ(r.grad_x.scalar_type(), dtype);
    const auto ref = reference(x.to(dtype), y.to(dtype), 1.0, std::nullopt);
    EXPECT_LT(rel_l2(r.values, ref.values), 1e-4);
  }
  const at::Tensor D = torch::rand({2, 60, 50}, torch::kDouble);
  SoftDtwOptions o;
  o.gamma = 0.2;
  EXPECT_LT(rel_l2(sdtw::nn::alignment_from_cost(D.to(torch::kCUDA, torch::kFloat), o),
                   sdtw::nn::alignment_from_cost(D, o)),
            1e-4);
}

TEST(TorchCuda, RetainGraphAndDeviceMismatch) {
  SKIP_WITHOUT_CUDA();
  const at::Tensor x = torch::randn({2, 64, 4}, torch::kCUDA).requires_grad_(true);
  const at::Tensor out = sdtw::nn::soft_dtw(x, torch::randn({2, 50, 4}, torch::kCUDA)).sum();
  const auto g1 = torch::autograd::grad({out}, {x}, {}, /*retain_graph=*/true);
  const auto g2 = torch::autograd::grad({out}, {x});
  EXPECT_TRUE(torch::allclose(g1[0], g2[0]));
  try {
    sdtw::nn::soft_dtw(x, torch::randn({2, 50, 4}));
    ADD_FAILURE() << "x on CUDA and y on the CPU must be rejected";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("same device"), std::string::npos) << e.what();
  }
}

}  // namespace
