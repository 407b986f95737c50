#pragma once
// Maghoumi's pytorch-softdtw-cuda (MIT), reimplemented faithfully in LibTorch + CUDA C++ as the
// baseline the paper compares with. It is a baseline: it does what the original does, at the
// original's cost, and is not to be made faster or more accurate.
//
//   sdtw::baselines::maghoumi::SoftDTW sdtw{/*gamma=*/1.0, /*bandwidth=*/0.0, /*normalize=*/false};
//   at::Tensor loss = sdtw.forward(x, y);   // x: B x N x d, y: B x M x d  ->  B values, with autograd
//   loss.sum().backward();
//
// What it reproduces:
// - the cost: x.unsqueeze(2).expand(B, N, M, d), y.unsqueeze(1).expand(B, N, M, d),
//   (x - y).pow(2).sum(3), so the B x N x M x d difference is materialised (and kept for autograd);
// - R allocated as ones(B, N+2, M+2) * inf, R[:, 0, 0] = 0, the forward kernel, the value R[:, N, M]
//   (a view of R); saved tensors D, R, gamma and bandwidth (one-element float32 tensors);
// - the backward: D padded into zeros(B, N+2, M+2), R rewritten in place (last row and column -inf,
//   R[:, N+1, M+1] = R[:, N, M]), E = zeros(B, N+2, M+2) with E[:, N+1, M+1] = 1, the linear-space
//   kernel, and grad_output.view(-1, 1, 1).expand_as(E) * E on the interior of E;
// - gamma and bandwidth are rounded to float32 first (the original stores them in FloatTensors);
// - bandwidth <= 0 disables the Sakoe-Chiba band (the original's None becomes 0); otherwise cells
//   with |i - j| > bandwidth are skipped, and the value is +inf when |N - M| > bandwidth;
// - normalize: x = cat(X, X, Y), y = cat(Y, X, Y) in one batch of 3B pairs, then
//   out_xy - 1/2 (out_xx + out_yy); this needs N == M, as torch.cat does in the original.
//
// Where it departs from the original, on purpose:
// - CUDA inputs longer than one block can hold throw NotSupported: the original prints a warning
//   and falls back to its CPU code (length > 1024) or dies with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
//   (too few registers for max(N, M) threads). Here both are reported as NotSupported, before any
//   allocation when the kernel attributes already say the launch cannot fit.
// - CPU inputs run the GPU kernels' cell arithmetic in loops (the original's Numba CPU path keeps R
//   in float64 and rounds it to float32 through torch.Tensor(); we keep R in the input dtype, so
//   CPU float32 results carry the GPU's float32 errors and CPU float64 results stay float64).
// - CUDA out-of-memory surfaces as torch's own c10::OutOfMemoryError, unchanged.
#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace sdtw::baselines::maghoumi {

// The shape cannot run in this scheme (one thread block per pair); the message says why.
class NotSupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SoftDTW {
  double gamma = 1.0;
  double bandwidth = 0.0;  // Sakoe-Chiba band; <= 0: none
  bool normalize = false;

  // x: B x N x d, y: B x M x d, float32 or float64, both on the CPU or both on one CUDA device.
  // Returns the B soft-DTW values (divergences when normalize), differentiable w.r.t. x and y.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y) const;
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& y) const { return forward(x, y); }
};

// The original's _euclidean_dist_func: the B x N x M squared Euclidean cost through a
// B x N x M x d broadcast difference.
at::Tensor distance_matrix(const at::Tensor& x, const at::Tensor& y);

// The original's _SoftDTWCUDA / _SoftDTW autograd functions on a cost tensor D (B x N x M):
// the B values R[:, N, M], differentiable w.r.t. D.
at::Tensor soft_dtw_from_cost(const at::Tensor& D, double gamma, double bandwidth);

// Whether this build can run the CUDA kernels (CUDA found and LibTorch built with CUDA).
bool cuda_compiled();

// The longest max(N, M) that both kernels can launch for, for this dtype on the current CUDA
// device (0 when not compiled with CUDA). Throws std::runtime_error on a CUDA error.
long max_cuda_length(at::ScalarType dtype);

// A line describing the kernels' resource use on the current device (registers, max threads per
// block, for float32 and float64, forward and backward), for reports.
std::string cuda_kernel_report();

}  // namespace sdtw::baselines::maghoumi
