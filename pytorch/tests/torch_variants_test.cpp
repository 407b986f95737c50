// The warp penalty and subsequence soft-DTW through the C++ front (sdtw::nn) against the float64
// reference sdtw::reference::soft_dtw_variant.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>

#include "sdtw/reference/variants.hpp"
#include "sdtw/torch/soft_dtw.hpp"
#include "test_support.hpp"

using namespace sdtw_torch_test;
using sdtw::nn::SoftDtwOptions;

namespace {

at::Tensor randn(std::vector<int64_t> shape) { return torch::randn(shape, torch::kDouble); }

SoftDtwOptions variant(double gamma, double warp, bool subsequence) {
  SoftDtwOptions o;
  o.gamma = gamma;
  o.warp = warp;
  o.subsequence = subsequence;
  return o;
}

at::Tensor sqdist(const at::Tensor& x, const at::Tensor& y) {
  return (x.unsqueeze(1) - y.unsqueeze(0)).pow(2).sum(-1);
}

std::string label(int64_t n, int64_t m, double gamma, double warp, bool subsequence) {
  return std::to_string(n) + "x" + std::to_string(m) + " gamma " + std::to_string(gamma) + " warp " +
         std::to_string(warp) + (subsequence ? " subsequence" : "");
}

TEST(TorchVariants, SeriesValuesAndGradientsMatchTheReference) {
  torch::manual_seed(5);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 6}, {5, 1}, {4, 4}, {5, 8}, {9, 3}})
    for (bool subsequence : {false, true})
      for (double gamma : {0.0, 0.1, 1.0})
        for (double warp : {0.0, 0.6, -0.4}) {
          const at::Tensor x = randn({2, n, 3}), y = randn({2, m, 3});
          const auto r = run(
              [&](auto a, auto b) { return sdtw::nn::soft_dtw(a, b, variant(gamma, warp, subsequence)); }, x, y);
          for (int64_t b = 0; b < 2; ++b) {
            const auto ref = sdtw::reference::soft_dtw_variant(to_matrix(sqdist(x[b], y[b])),
                                                               {gamma, warp, subsequence});
            const at::Tensor E = to_tensor(ref.E);
            const at::Tensor gx = 2.0 * (x[b] * E.sum(1, true) - E.mm(y[b]));
            const at::Tensor gy = 2.0 * (y[b] * E.sum(0).unsqueeze(1) - E.t().mm(x[b]));
            const std::string what = label(n, m, gamma, warp, subsequence);
            EXPECT_NEAR(r.values[b].item<double>(), ref.value, 1e-10 * std::max(1.0, std::abs(ref.value))) << what;
            EXPECT_LT(rel_l2(r.grad_x[b], gx), 1e-9) << what;
            EXPECT_LT(rel_l2(r.grad_y[b], gy), 1e-9) << what;
          }
        }
}

TEST(TorchVariants, CostTensorWithLengths) {
  torch::manual_seed(6);
  const at::Tensor D = torch::rand({2, 6, 7}, torch::kDouble) * 3;
  const at::Tensor xl = torch::tensor({6, 3}), yl = torch::tensor({4, 7});
  for (bool subsequence : {false, true}) {
    at::Tensor Dg = D.clone().requires_grad_(true);
    const at::Tensor v = sdtw::nn::soft_dtw_cost(Dg, variant(0.3, 0.5, subsequence), xl, yl);
    v.sum().backward();
    for (int64_t b = 0; b < 2; ++b) {
      const int64_t n = xl[b].item<int64_t>(), m = yl[b].item<int64_t>();
      const auto ref = sdtw::reference::soft_dtw_variant(to_matrix(D[b].slice(0, 0, n).slice(1, 0, m)),
                                                         {0.3, 0.5, subsequence});
      EXPECT_NEAR(v[b].item<double>(), ref.value, 1e-10 * std::abs(ref.value)) << subsequence;
      EXPECT_LT(rel_l2(Dg.grad()[b].slice(0, 0, n).slice(1, 0, m), to_tensor(ref.E)), 1e-9) << subsequence;
      at::Tensor padding = Dg.grad()[b].clone();
      padding.slice(0, 0, n).slice(1, 0, m).zero_();
      EXPECT_EQ(padding.count_nonzero().item<int64_t>(), 0) << subsequence;
    }
  }
}

TEST(TorchVariants, SubsequenceEndIsTheReferences) {
  torch::manual_seed(7);
  const at::Tensor x = randn({2, 4, 2}), y = randn({2, 9, 2});
  for (double gamma : {0.0, 0.2, 1.0}) {
    const auto [end, expected_end] = sdtw::nn::subsequence_end(x, y, variant(gamma, 0.3, true));
    ASSERT_EQ(end.sizes(), (std::vector<int64_t>{2, 9}));
    for (int64_t b = 0; b < 2; ++b) {
      const auto ref = sdtw::reference::soft_dtw_variant(to_matrix(sqdist(x[b], y[b])), {gamma, 0.3, true});
      const at::Tensor ref_end = torch::from_blob(const_cast<double*>(ref.end.data()), {9}, torch::kDouble);
      EXPECT_LT(rel_l2(end[b], ref_end), 1e-10) << gamma;
      EXPECT_NEAR(expected_end[b].item<double>(), ref.expected_end, 1e-9) << gamma;
    }
  }
}

TEST(TorchVariants, BadOptionsAreValueErrors) {
  const at::Tensor x = randn({1, 4, 2}), y = randn({1, 6, 2});
  const auto fails = [&](SoftDtwOptions o, const std::string& needle) {
    try {
      sdtw::nn::soft_dtw(x, y, o);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const c10::ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails(variant(1.0, std::numeric_limits<double>::infinity(), false), "warp must be finite (got inf)");
  SoftDtwOptions fused = variant(1.0, 0.5, false);
  fused.fused = true;
  fails(fused, "fused=True does not apply with warp != 0 (got warp=0.5");
  SoftDtwOptions band = variant(1.0, 0.0, true);
  band.bandwidth = 2;
  fails(band, "subsequence=True takes no band or global constraint (got bandwidth 2)");
  SoftDtwOptions normalize = variant(1.0, 0.0, true);
  normalize.normalize = true;
  fails(normalize, "normalize=True does not apply with subsequence=True");
  EXPECT_THROW(sdtw::nn::SoftDTW{band}, c10::ValueError);
}

}  // namespace
