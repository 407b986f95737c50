// The PyTorch half of pytorch-softdtw-cuda in LibTorch: the cost tensor, the autograd function and
// the SoftDTW module, each doing the tensor operations the original does, in its order, so that the
// caching allocator sees the same allocations (and the peak memory is the original's).
#include <torch/autograd.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "detail.hpp"
#include "sdtw/baselines/maghoumi.hpp"

namespace sdtw::baselines::maghoumi {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

[[noreturn]] void no_cuda_kernels() {
  throw NotSupported(
      "maghoumi: CUDA input, but this build has no CUDA kernels (CUDA or a CUDA-enabled LibTorch was not found)");
}

// Refuses shapes the one-block-per-pair kernels cannot launch, before anything is allocated.
void require_supported(long n, long m, at::ScalarType dtype, const at::Device& device, bool with_backward) {
  if (!device.is_cuda()) return;
#ifdef SDTW_MAGHOUMI_WITH_CUDA
  detail::cuda_require_supported(n, m, dtype, device, with_backward);
#else
  (void)n, (void)m, (void)dtype, (void)with_backward;
  no_cuda_kernels();
#endif
}

void check_dtype(const at::Tensor& t, const char* name) {
  if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kDouble) {
    std::ostringstream msg;
    msg << "maghoumi: " << name << " must be float32 or float64 (got " << t.scalar_type() << ")";
    throw std::invalid_argument(msg.str());
  }
}

// _SoftDTWCUDA and _SoftDTW of the original, one class dispatching on D's device.
class SoftDtwFunction : public torch::autograd::Function<SoftDtwFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& D, double gamma, double bandwidth) {
    const at::Device dev = D.device();
    // gamma = torch.cuda.FloatTensor([gamma]), bandwidth likewise: float32, on D's device.
    const auto f32 = at::TensorOptions().dtype(at::kFloat).device(dev);
    at::Tensor gamma_t = at::tensor({static_cast<float>(gamma)}, f32);
    at::Tensor bandwidth_t = at::tensor({static_cast<float>(bandwidth)}, f32);

    const long B = D.size(0), N = D.size(1), M = D.size(2);
    at::Tensor R = at::ones({B, N + 2, M + 2}, D.options()) * INFINITY;
    R.select(1, 0).select(1, 0).fill_(0);

    const double g = gamma_t.item<double>();  // a device-to-host copy on CUDA, as in the original
    const double bw = bandwidth_t.item<double>();
    if (dev.is_cuda()) {
#ifdef SDTW_MAGHOUMI_WITH_CUDA
      detail::cuda_forward(D.detach(), R, g, bw);
#else
      no_cuda_kernels();
#endif
    } else {
      detail::cpu_forward(D.detach(), R, g, bw);
    }
    ctx->save_for_backward({D, R, gamma_t, bandwidth_t});
    return R.select(1, N).select(1, M);  // R[:, -2, -2]
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor& grad_output = grad_outputs[0];
    const auto opts = at::TensorOptions().dtype(grad_output.scalar_type()).device(grad_output.device());
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& D = saved[0];
    at::Tensor R = saved[1];
    const long B = D.size(0), N = D.size(1), M = D.size(2);

    at::Tensor D_ = at::zeros({B, N + 2, M + 2}, opts);
    D_.slice(1, 1, N + 1).slice(2, 1, M + 1).copy_(D);

    R.select(2, M + 1).fill_(-INFINITY);                                          // R[:, :, -1] = -inf
    R.select(1, N + 1).fill_(-INFINITY);                                          // R[:, -1, :] = -inf
    R.select(1, N + 1).select(1, M + 1).copy_(R.select(1, N).select(1, M));  // R[:, -1, -1] = R[:, -2, -2]

    at::Tensor E = at::zeros({B, N + 2, M + 2}, opts);
    E.select(1, N + 1).select(1, M + 1).fill_(1);

    const double inv_gamma = 1.0 / saved[2].item<double>();
    const double bw = saved[3].item<double>();
    if (R.is_cuda()) {
#ifdef SDTW_MAGHOUMI_WITH_CUDA
      detail::cuda_backward(D_, R, E, inv_gamma, bw);
#else
      no_cuda_kernels();
#endif
    } else {
      detail::cpu_backward(D_, R, E, inv_gamma, bw);
    }
    E = E.slice(1, 1, N + 1).slice(2, 1, M + 1);
    return {grad_output.view({-1, 1, 1}).expand_as(E) * E, at::Tensor(), at::Tensor()};
  }
};

bool needs_backward(const at::Tensor& a, const at::Tensor& b) {
  return at::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad());
}

}  // namespace

at::Tensor distance_matrix(const at::Tensor& x, const at::Tensor& y) {
  const long n = x.size(1), m = y.size(1), d = x.size(2);
  const at::Tensor xe = x.unsqueeze(2).expand({-1, n, m, d});
  const at::Tensor ye = y.unsqueeze(1).expand({-1, n, m, d});
  return at::pow(xe - ye, 2).sum(3);
}

at::Tensor soft_dtw_from_cost(const at::Tensor& D, double gamma, double bandwidth) {
  if (D.dim() != 3) throw std::invalid_argument("maghoumi: D must be B x N x M");
  check_dtype(D, "D");
  require_supported(D.size(1), D.size(2), D.scalar_type(), D.device(), needs_backward(D, D));
  return SoftDtwFunction::apply(D, gamma, bandwidth);
}

at::Tensor SoftDTW::forward(const at::Tensor& X, const at::Tensor& Y) const {
  if (X.dim() != 3 || Y.dim() != 3) throw std::invalid_argument("maghoumi: x and y must be B x N x d and B x M x d");
  if (X.size(0) != Y.size(0)) throw std::invalid_argument("maghoumi: x and y must have the same batch size");
  if (X.size(2) != Y.size(2)) throw std::invalid_argument("maghoumi: x and y must have the same feature dimension");
  if (X.device() != Y.device()) throw std::invalid_argument("maghoumi: x and y must be on the same device");
  check_dtype(X, "x");
  check_dtype(Y, "y");
  if (X.scalar_type() != Y.scalar_type()) throw std::invalid_argument("maghoumi: x and y must have the same dtype");
  const long N = X.size(1), M = Y.size(1);
  require_supported(N, M, X.scalar_type(), X.device(), needs_backward(X, Y));

  if (normalize) {
    if (N != M)
      throw std::invalid_argument(
          "maghoumi: normalize needs N == M (the original stacks cat([Y, X, Y]) and torch.cat refuses otherwise)");
    const at::Tensor x = at::cat({X, X, Y});
    const at::Tensor y = at::cat({Y, X, Y});
    const at::Tensor D = distance_matrix(x, y);
    const at::Tensor out = SoftDtwFunction::apply(D, gamma, bandwidth);
    const std::vector<at::Tensor> parts = at::split(out, X.size(0));
    return parts[0] - 1.0 / 2 * (parts[1] + parts[2]);
  }
  const at::Tensor D_xy = distance_matrix(X, Y);
  return SoftDtwFunction::apply(D_xy, gamma, bandwidth);
}

bool cuda_compiled() {
#ifdef SDTW_MAGHOUMI_WITH_CUDA
  return true;
#else
  return false;
#endif
}

long max_cuda_length(at::ScalarType dtype) {
#ifdef SDTW_MAGHOUMI_WITH_CUDA
  return detail::cuda_max_length(dtype);
#else
  (void)dtype;
  return 0;
#endif
}

std::string cuda_kernel_report() {
#ifdef SDTW_MAGHOUMI_WITH_CUDA
  return detail::cuda_report();
#else
  return "maghoumi: built without CUDA kernels";
#endif
}

}  // namespace sdtw::baselines::maghoumi
