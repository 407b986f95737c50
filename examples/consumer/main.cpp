// Soft-DTW of random series through the installed reference (gradient checked against central
// differences) and, when sdtw::torch is installed, through LibTorch (checked against the
// reference); with sdtw::kernels, the workspace of the same problem (host code: no GPU needed).
// Exits 1 on a mismatch.
#include <sdtw/reference.hpp>
#ifdef SDTW_CONSUMER_WITH_KERNELS
#include <sdtw/kernels/soft_dtw.hpp>
#endif
#ifdef SDTW_CONSUMER_WITH_TORCH
#include <sdtw/torch/soft_dtw.hpp>
#include <torch/torch.h>
#endif

#include <cmath>
#include <cstdio>

int main() {
  using sdtw::reference::Matrix;
  const sdtw::reference::Options options{0.5, std::nullopt};
  const Matrix x = Matrix::Random(7, 3), y = Matrix::Random(5, 3);
  const auto result = sdtw::reference::soft_dtw_sqeuclidean(x, y, options);

  const double h = 1e-6;
  Matrix xp = x, xm = x;
  xp(2, 1) += h;
  xm(2, 1) -= h;
  const double fd = (sdtw::reference::soft_dtw_sqeuclidean(xp, y, options).value -
                     sdtw::reference::soft_dtw_sqeuclidean(xm, y, options).value) / (2 * h);
  bool ok = std::abs(fd - result.grad.x(2, 1)) < 1e-6;
  std::printf("reference: sdtw %.12f, d/dx[2,1] %.9f (central difference %.9f)\n", result.value,
              result.grad.x(2, 1), fd);

#ifdef SDTW_CONSUMER_WITH_TORCH
  auto opts = torch::TensorOptions().dtype(torch::kFloat64);
  auto xt = torch::from_blob(const_cast<double*>(x.data()), {7, 3}, opts).clone().requires_grad_(true);
  auto yt = torch::from_blob(const_cast<double*>(y.data()), {5, 3}, opts).clone();
  sdtw::nn::SoftDtwOptions torch_options;
  torch_options.gamma = options.gamma;
  auto value = sdtw::nn::soft_dtw(xt, yt, torch_options);
  value.backward();
  const double grad = xt.grad()[2][1].item<double>();
  std::printf("torch:     sdtw %.12f, d/dx[2,1] %.9f\n", value.item<double>(), grad);
  ok = ok && std::abs(value.item<double>() - result.value) < 1e-9 && std::abs(grad - result.grad.x(2, 1)) < 1e-9;
#endif
#ifdef SDTW_CONSUMER_WITH_KERNELS
  sdtw::kernels::Problem problem;
  problem.n = 7;
  problem.m = 5;
  problem.dim = 3;
  const std::size_t workspace = sdtw::kernels::workspace_bytes<float>(problem);
  std::printf("kernels:   workspace %zu bytes for 7 x 5 cells\n", workspace);
  ok = ok && workspace >= 4 * 7 * 5;  // at least the 4 bytes of state per cell
#endif
  std::printf("%s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
