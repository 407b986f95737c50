// The CUDA back end: launches the kernels on the tensors' device and torch's current stream, and
// turns "does not fit in one block" into NotSupported.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "detail.hpp"
#include "sdtw/baselines/maghoumi.hpp"
#include "sdtw/baselines/maghoumi/kernels.hpp"

namespace sdtw::baselines::maghoumi::detail {
namespace {

const char* direction_name(kernels::Direction d) { return d == kernels::Direction::forward ? "forward" : "backward"; }

void raise_unless_ok(const kernels::LaunchResult& r, kernels::Direction direction, long n, long m) {
  if (r.status == kernels::Status::ok) return;
  std::ostringstream msg;
  if (r.status == kernels::Status::not_supported) {
    msg << "maghoumi: max(N, M) = " << std::max(n, m) << " (N = " << n << ", M = " << m
        << ") needs one thread per row in one block, but the " << direction_name(direction)
        << " kernel can launch at most " << r.max_threads << " threads per block on this device";
    if (r.error != cudaSuccess) msg << " (" << cudaGetErrorName(r.error) << ")";
    throw NotSupported(msg.str());
  }
  msg << "maghoumi: " << direction_name(direction) << " kernel: " << cudaGetErrorName(r.error) << ": "
      << cudaGetErrorString(r.error);
  throw std::runtime_error(msg.str());
}

template <typename T>
long max_length_for() {
  long best = 1 << 30;
  for (auto dir : {kernels::Direction::forward, kernels::Direction::backward}) {
    const kernels::LaunchResult r = kernels::check_launch<T>(dir, 1, 1);
    raise_unless_ok(r, dir, 1, 1);
    best = std::min<long>(best, r.max_threads);
  }
  return best;
}

}  // namespace

void cuda_forward(const at::Tensor& D, at::Tensor& R, double gamma, double bandwidth) {
  const c10::cuda::CUDAGuard guard(D.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const long n = D.size(1), m = D.size(2);
  AT_DISPATCH_FLOATING_TYPES(D.scalar_type(), "maghoumi_cuda_forward", [&] {
    const auto r = kernels::forward<scalar_t>(D.data_ptr<scalar_t>(), {D.stride(0), D.stride(1), D.stride(2)},
                                              R.data_ptr<scalar_t>(), D.size(0), n, m, gamma, bandwidth, stream);
    raise_unless_ok(r, kernels::Direction::forward, n, m);
  });
}

void cuda_backward(const at::Tensor& D_padded, at::Tensor& R, at::Tensor& E, double inv_gamma, double bandwidth) {
  const c10::cuda::CUDAGuard guard(R.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const long n = R.size(1) - 2, m = R.size(2) - 2;
  AT_DISPATCH_FLOATING_TYPES(R.scalar_type(), "maghoumi_cuda_backward", [&] {
    const auto r = kernels::backward<scalar_t>(D_padded.data_ptr<scalar_t>(), R.data_ptr<scalar_t>(),
                                               E.data_ptr<scalar_t>(), R.size(0), n, m, inv_gamma, bandwidth, stream);
    raise_unless_ok(r, kernels::Direction::backward, n, m);
  });
}

void cuda_require_supported(long n, long m, at::ScalarType dtype, const at::Device& device, bool with_backward) {
  const c10::cuda::CUDAGuard guard(device);
  AT_DISPATCH_FLOATING_TYPES(dtype, "maghoumi_cuda_check", [&] {
    raise_unless_ok(kernels::check_launch<scalar_t>(kernels::Direction::forward, n, m), kernels::Direction::forward,
                    n, m);
    if (with_backward)
      raise_unless_ok(kernels::check_launch<scalar_t>(kernels::Direction::backward, n, m),
                      kernels::Direction::backward, n, m);
  });
}

long cuda_max_length(at::ScalarType dtype) {
  long result = 0;
  AT_DISPATCH_FLOATING_TYPES(dtype, "maghoumi_cuda_max_length", [&] { result = max_length_for<scalar_t>(); });
  return result;
}

std::string cuda_report() {
  std::ostringstream out;
  const char* sep = "";
  auto one = [&](const char* type, kernels::Direction dir, cudaError_t err, const kernels::KernelInfo& info) {
    out << sep << type << " " << direction_name(dir) << ": ";
    if (err != cudaSuccess)
      out << cudaGetErrorName(err);
    else
      out << info.num_regs << " registers, " << info.local_bytes << " B local, max " << info.max_threads_per_block
          << " threads/block";
    sep = "; ";
  };
  for (auto dir : {kernels::Direction::forward, kernels::Direction::backward}) {
    kernels::KernelInfo f, d;
    one("float32", dir, kernels::kernel_info<float>(dir, &f), f);
    one("float64", dir, kernels::kernel_info<double>(dir, &d), d);
  }
  return out.str();
}

}  // namespace sdtw::baselines::maghoumi::detail
