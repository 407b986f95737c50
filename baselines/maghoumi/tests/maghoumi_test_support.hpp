#pragma once
// Shared by the CPU and GPU tests: run the baseline (value and gradient of a weighted sum) and the
// float64 reference on the same inputs, and compare.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <optional>
#include <ostream>
#include <vector>

#include "sdtw/baselines/maghoumi.hpp"
#include "sdtw/reference.hpp"

namespace sdtw::baselines::maghoumi::testing {

struct Case {
  long B, N, M, d;
  double gamma;
  double bandwidth;  // <= 0: none
  bool normalize;
};

inline std::ostream& operator<<(std::ostream& os, const Case& c) {
  return os << "B=" << c.B << " N=" << c.N << " M=" << c.M << " d=" << c.d << " gamma=" << c.gamma
            << " bandwidth=" << c.bandwidth << (c.normalize ? " normalize" : "");
}

// Small shapes: N != M both ways, bands, normalize, gamma from 1 to 1/4 (all exact in float32,
// so the original's float32 rounding of gamma does not enter the comparison).
inline std::vector<Case> small_cases() {
  return {
      {3, 16, 16, 3, 1.0, 0, false},  {2, 12, 17, 4, 0.5, 0, false},  {2, 23, 9, 2, 1.0, 0, false},
      {2, 32, 32, 2, 1.0, 5, false},  {2, 20, 24, 3, 0.25, 6, false}, {3, 16, 16, 3, 1.0, 0, true},
      {2, 24, 24, 2, 0.5, 4, true},   {2, 64, 64, 2, 1.0, 0, false},  {1, 1, 1, 2, 1.0, 0, false},
      {2, 1, 7, 2, 1.0, 0, false},
  };
}

struct Outcome {
  std::vector<double> values, grad_x, grad_y;
};

inline std::vector<double> to_vector(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kCPU, at::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

struct Inputs {
  at::Tensor x, y, w;  // w: weights of the loss sum_b w_b sdtw_b, so grad_output is not all ones
};

// Standard normal inputs (as in the project's accuracy table), generated in float64 and rounded
// to dtype, on device.
inline Inputs make_inputs(const Case& c, at::ScalarType dtype, const at::Device& device, std::uint64_t seed) {
  torch::manual_seed(seed);
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  Inputs in;
  in.x = torch::randn({c.B, c.N, c.d}, opts).to(device, dtype);
  in.y = torch::randn({c.B, c.M, c.d}, opts).to(device, dtype);
  in.w = (torch::rand({c.B}, opts) + 0.5).to(device, dtype);
  return in;
}

inline Outcome run_baseline(const Case& c, const Inputs& in) {
  const at::Tensor x = in.x.detach().clone().set_requires_grad(true);
  const at::Tensor y = in.y.detach().clone().set_requires_grad(true);
  const SoftDTW sdtw{c.gamma, c.bandwidth, c.normalize};
  const at::Tensor out = sdtw.forward(x, y);
  (out * in.w).sum().backward();
  return {to_vector(out), to_vector(x.grad()), to_vector(y.grad())};
}

// The float64 reference on the same (rounded) inputs, with the gradients of sum_b w_b sdtw_b.
inline Outcome run_reference(const Case& c, const Inputs& in, std::optional<double> gamma = std::nullopt) {
  const std::vector<double> x = to_vector(in.x), y = to_vector(in.y), w = to_vector(in.w);
  reference::BatchShape shape;
  shape.batch = c.B;
  shape.n = c.N;
  shape.m = c.M;
  shape.dim = c.d;
  reference::Options options;
  options.gamma = gamma.value_or(c.gamma);
  if (c.bandwidth > 0) options.bandwidth = static_cast<long>(c.bandwidth);
  const auto r = reference::soft_dtw_sqeuclidean_batch(x.data(), y.data(), shape, options, true, c.normalize);
  Outcome o{r.values, r.grad_x, r.grad_y};
  for (long b = 0; b < c.B; ++b) {
    for (long k = 0; k < c.N * c.d; ++k) o.grad_x[b * c.N * c.d + k] *= w[b];
    for (long k = 0; k < c.M * c.d; ++k) o.grad_y[b * c.M * c.d + k] *= w[b];
  }
  return o;
}

// ||a - b|| / ||b|| (the project's accuracy metric), or ||a - b|| when b is zero.
inline double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    num += (a[k] - b[k]) * (a[k] - b[k]);
    den += b[k] * b[k];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// max_k |a_k - b_k| / max(|b_k|, 1): relative for values of size >= 1, absolute below.
inline double max_rel(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    worst = std::max(worst, std::abs(a[k] - b[k]) / std::max(std::abs(b[k]), 1.0));
  return worst;
}

struct Tolerance {
  double value;  // max_rel on the B values
  double grad;   // rel_l2 on grad_x and on grad_y
};

inline void expect_close(const Outcome& got, const Outcome& want, const Tolerance& tol, const std::string& what) {
  ASSERT_EQ(got.values.size(), want.values.size()) << what;
  ASSERT_EQ(got.grad_x.size(), want.grad_x.size()) << what;
  ASSERT_EQ(got.grad_y.size(), want.grad_y.size()) << what;
  const double ev = max_rel(got.values, want.values);
  const double ex = rel_l2(got.grad_x, want.grad_x), ey = rel_l2(got.grad_y, want.grad_y);
  std::cout << "  " << what << ": value " << ev << ", grad_x " << ex << ", grad_y " << ey << "\n";
  EXPECT_LE(ev, tol.value) << what;
  EXPECT_LE(ex, tol.grad) << what;
  EXPECT_LE(ey, tol.grad) << what;
}

}  // namespace sdtw::baselines::maghoumi::testing
