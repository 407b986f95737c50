#pragma once
// Helpers for the sdtw_torch C++ tests: the float64 reference on one pair, relative errors.
#include <torch/torch.h>

#include "sdtw/reference/sqeuclidean.hpp"

namespace sdtw_torch_test {

inline sdtw::reference::Matrix to_matrix(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kDouble).contiguous();
  sdtw::reference::Matrix m(c.size(0), c.size(1));
  std::copy(c.data_ptr<double>(), c.data_ptr<double>() + c.numel(), m.data());
  return m;
}

inline at::Tensor to_tensor(const sdtw::reference::Matrix& m) {
  return torch::from_blob(const_cast<double*>(m.data()), {m.rows(), m.cols()}, torch::kDouble).clone();
}

inline double rel_l2(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor bd = b.to(at::kCPU, at::kDouble);
  return (a.to(at::kCPU, at::kDouble) - bd).norm().item<double>() / std::max(bd.norm().item<double>(), 1e-300);
}

struct Reference {
  at::Tensor values, grad_x, grad_y;  // float64, CPU
};

// The float64 reference pair by pair, on the first x_len[b] / y_len[b] rows (zero gradient below).
inline Reference reference(const at::Tensor& x, const at::Tensor& y, double gamma, std::optional<long> bandwidth,
                           const std::vector<long>& x_len = {}, const std::vector<long>& y_len = {},
                           bool normalize = false) {
  const int64_t B = x.size(0);
  Reference r{torch::zeros({B}, torch::kDouble), torch::zeros(x.sizes(), torch::kDouble),
              torch::zeros(y.sizes(), torch::kDouble)};
  sdtw::reference::Options options{gamma, bandwidth};
  for (int64_t b = 0; b < B; ++b) {
    const long n = x_len.empty() ? x.size(1) : x_len[b], m = y_len.empty() ? y.size(1) : y_len[b];
    const auto xb = to_matrix(x[b].slice(0, 0, n)), yb = to_matrix(y[b].slice(0, 0, m));
    const auto res = normalize ? sdtw::reference::soft_dtw_divergence(xb, yb, options)
                               : sdtw::reference::soft_dtw_sqeuclidean(xb, yb, options);
    r.values[b] = res.value;
    r.grad_x[b].slice(0, 0, n).copy_(to_tensor(res.grad.x));
    r.grad_y[b].slice(0, 0, m).copy_(to_tensor(res.grad.y));
  }
  return r;
}

struct Result {
  at::Tensor values, grad_x, grad_y;
};

template <typename F>
Result run(F&& f, const at::Tensor& x, const at::Tensor& y) {
  at::Tensor xg = x.detach().clone().requires_grad_(true), yg = y.detach().clone().requires_grad_(true);
  at::Tensor v = f(xg, yg);
  v.sum().backward();
  return {v.detach(), xg.grad(), yg.grad()};
}

}  // namespace sdtw_torch_test
