#pragma once
// Internal: the two back ends of the autograd function. Each runs one kernel on buffers that the
// autograd function has allocated and prepared the original's way (see maghoumi.hpp).
#include <ATen/ATen.h>

#include <string>

namespace sdtw::baselines::maghoumi::detail {

// D: B x N x M; R: B x (N+2) x (M+2) contiguous, +inf but R[:, 0, 0] = 0. Fills R.
void cpu_forward(const at::Tensor& D, at::Tensor& R, double gamma, double bandwidth);
// D_padded, R, E: B x (N+2) x (M+2) contiguous, prepared as for kernels::backward. Fills E.
void cpu_backward(const at::Tensor& D_padded, at::Tensor& R, at::Tensor& E, double inv_gamma, double bandwidth);

#ifdef SDTW_MAGHOUMI_WITH_CUDA
void cuda_forward(const at::Tensor& D, at::Tensor& R, double gamma, double bandwidth);
void cuda_backward(const at::Tensor& D_padded, at::Tensor& R, at::Tensor& E, double inv_gamma, double bandwidth);
// Throws NotSupported unless max(n, m) fits the forward kernel (and the backward one when asked).
void cuda_require_supported(long n, long m, at::ScalarType dtype, const at::Device& device, bool with_backward);
long cuda_max_length(at::ScalarType dtype);
std::string cuda_report();
#endif

}  // namespace sdtw::baselines::maghoumi::detail
