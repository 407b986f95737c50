// The C++ half of the front-agreement test: sdtw::nn::SoftDTW on fixed inputs (lengths, NaN in
// the padding, bands, normalize, every reduction, every dist) with its values and gradients
// written, with the inputs and options, to $SDTW_FRONT_CASES for
// tests/python/test_front_agreement.py, which runs sdtw_torch.SoftDTW on them and wants the same.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "sdtw/torch/soft_dtw.hpp"

namespace {

using sdtw::nn::SoftDtwOptions;

// A (B, N, D) batch with step `past` of pair `pair` set to NaN, beyond that pair's length.
at::Tensor with_nan_padding(at::Tensor t, int64_t pair, int64_t past) {
  t[pair][past][0] = std::numeric_limits<double>::quiet_NaN();
  return t;
}

c10::IValue optional_int(const std::optional<int64_t>& v) { return v ? c10::IValue(*v) : c10::IValue(); }
c10::IValue optional_bool(const std::optional<bool>& v) { return v ? c10::IValue(*v) : c10::IValue(); }

TEST(FrontAgreement, CppModuleOnEveryOption) {
  torch::manual_seed(31);
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  const at::Tensor x = with_nan_padding(torch::randn({3, 7, 2}, f64), 1, 5);
  const at::Tensor y = with_nan_padding(torch::randn({3, 5, 2}, f64), 2, 3);
  const at::Tensor x_lengths = torch::tensor({7, 4, 6}, torch::kLong), y_lengths = torch::tensor({5, 3, 2}, torch::kLong);

  c10::impl::GenericList cases(c10::AnyType::get());
  for (const std::optional<int64_t> bandwidth : {std::optional<int64_t>(), std::optional<int64_t>(4)})
    for (const bool normalize : {false, true})
      for (const std::string reduction : {"none", "mean", "sum"})
        for (const auto& [dist, fused] : std::vector<std::pair<std::string, std::optional<bool>>>{
                 {"sqeuclidean", std::nullopt}, {"sqeuclidean", false}, {"cosine", std::nullopt}, {"L1", false}}) {
          SoftDtwOptions o;
          o.gamma = 0.3;
          o.bandwidth = bandwidth;
          o.normalize = normalize;
          o.dist = dist;
          o.fused = fused;
          o.reduction = reduction;
          sdtw::nn::SoftDTW module(o);
          const at::Tensor xg = x.clone().requires_grad_(true), yg = y.clone().requires_grad_(true);
          const at::Tensor values = module(xg, yg, x_lengths, y_lengths);
          values.sum().backward();
          const std::string name = dist + (normalize ? " normalize " : " ") + reduction;
          ASSERT_TRUE(torch::isfinite(values).all().item<bool>()) << name;
          ASSERT_TRUE(torch::isfinite(xg.grad()).all().item<bool>()) << name << ": NaN padding reached x.grad";
          EXPECT_TRUE((xg.grad()[1].slice(0, 4) == 0).all().item<bool>()) << name << ": x.grad past x_lengths";

          c10::impl::GenericDict c(c10::StringType::get(), c10::AnyType::get());
          c.insert("gamma", o.gamma);
          c.insert("bandwidth", optional_int(bandwidth));
          c.insert("normalize", normalize);
          c.insert("dist", dist);
          c.insert("fused", optional_bool(fused));
          c.insert("reduction", reduction);
          c.insert("values", values.detach());
          c.insert("grad_x", xg.grad());
          c.insert("grad_y", yg.grad());
          cases.push_back(c);
        }

  c10::impl::GenericDict file(c10::StringType::get(), c10::AnyType::get());
  file.insert("x", x);
  file.insert("y", y);
  file.insert("x_lengths", x_lengths);
  file.insert("y_lengths", y_lengths);
  file.insert("cases", cases);
  const char* path = std::getenv("SDTW_FRONT_CASES");
  if (path == nullptr) return;  // run alone: the checks above only
  const std::vector<char> bytes = torch::pickle_save(file);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

}  // namespace
