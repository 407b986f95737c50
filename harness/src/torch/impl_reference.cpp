// reference_cpu: the float64 Eigen reference (sdtw::reference batch API) wrapped as an autograd
// function, pairs spread over torch's intra-op threads. Its gradient is computed in the forward
// and only scaled in the backward.
#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <sdtw/reference/batch.hpp>
#include <sdtw/reference/hard_dtw.hpp>
#include <sdtw/reference/sqeuclidean.hpp>

#include "torch/implementation.hpp"
#include "torch/reference_eval.hpp"

namespace sdtw::bench {
namespace {

// gamma = 0, which the batch API refuses: the reference's hard DTW on the squared Euclidean cost of
// each pair, its path's gradient through the cost. normalize changes nothing here: DTW(x, x) = 0 with
// a zero gradient (a zero-cost path exists, and every zero-cost cell has x_i = x_j).
void hard_dtw_pairs(const double* x, const double* y, int64_t n, int64_t m, int64_t dim, std::optional<int64_t> band,
                    int64_t count, double* values, double* grad_x, double* grad_y) {
  for (int64_t b = 0; b < count; ++b) {
    const reference::SqEuclideanCost cost(Eigen::Map<const reference::Matrix>(x + b * n * dim, n, dim),
                                          Eigen::Map<const reference::Matrix>(y + b * m * dim, m, dim));
    const auto h = reference::hard_dtw(cost.compute(), band ? std::optional<long>(*band) : std::nullopt);
    values[b] = h.value;
    if (!grad_x) continue;
    reference::Matrix E = reference::Matrix::Zero(n, m);
    for (const auto& [i, j] : h.path) E(i, j) = 1.0;
    const reference::Gradients g = cost.jacobian_product(E);
    std::copy(g.x.data(), g.x.data() + n * dim, grad_x + b * n * dim);
    std::copy(g.y.data(), g.y.data() + m * dim, grad_y + b * m * dim);
  }
}

}  // namespace

ReferenceOutput reference_eval(const at::Tensor& x, const at::Tensor& y, double gamma, std::optional<int64_t> band,
                               bool normalize, bool with_gradient) {
  const at::Tensor xd = x.detach().to(at::kCPU, at::kDouble).contiguous();
  const at::Tensor yd = y.detach().to(at::kCPU, at::kDouble).contiguous();
  const int64_t B = xd.size(0), N = xd.size(1), M = yd.size(1), D = xd.size(2);
  ReferenceOutput out;
  out.values = at::empty({B}, xd.options());
  if (with_gradient) {
    out.grad_x = at::zeros_like(xd);
    out.grad_y = at::zeros_like(yd);
  }
  reference::Options opt;
  opt.gamma = gamma;
  if (band) opt.bandwidth = static_cast<long>(*band);
  const double* xp = xd.data_ptr<double>();
  const double* yp = yd.data_ptr<double>();
  double* vp = out.values.data_ptr<double>();
  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    if (gamma == 0.0) {
      hard_dtw_pairs(xp + begin * N * D, yp + begin * M * D, N, M, D, band, end - begin, vp + begin,
                     with_gradient ? out.grad_x.data_ptr<double>() + begin * N * D : nullptr,
                     with_gradient ? out.grad_y.data_ptr<double>() + begin * M * D : nullptr);
      return;
    }
    reference::BatchShape shape;
    shape.batch = static_cast<long>(end - begin);
    shape.n = static_cast<long>(N);
    shape.m = static_cast<long>(M);
    shape.dim = static_cast<long>(D);
    const auto r = reference::soft_dtw_sqeuclidean_batch(xp + begin * N * D, yp + begin * M * D, shape, opt,
                                                          with_gradient, normalize);
    std::copy(r.values.begin(), r.values.end(), vp + begin);
    if (with_gradient) {
      std::copy(r.grad_x.begin(), r.grad_x.end(), out.grad_x.data_ptr<double>() + begin * N * D);
      std::copy(r.grad_y.begin(), r.grad_y.end(), out.grad_y.data_ptr<double>() + begin * M * D);
    }
  });
  return out;
}

namespace {

struct ReferenceFunction : public torch::autograd::Function<ReferenceFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y,
                            double gamma, std::optional<int64_t> band, bool normalize) {
    const bool grad = x.requires_grad() || y.requires_grad();
    auto r = reference_eval(x, y, gamma, band, normalize, grad);
    if (grad) ctx->save_for_backward({r.grad_x.to(x.scalar_type()), r.grad_y.to(y.scalar_type())});
    return r.values.to(x.scalar_type());
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const auto g = grad_out[0].view({-1, 1, 1});
    return {saved[0] * g, saved[1] * g, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

class ReferenceCpu final : public Implementation {
 public:
  std::string name() const override { return "reference_cpu"; }
  std::string description() const override { return "float64 Eigen reference (sdtw::reference), CPU, pairs in parallel"; }
  bool built() const override { return true; }
  Support supports(const Point& p) const override {
    if (p.device != "cpu") return {false, "reference_cpu runs on the CPU only"};
    return library_options_refused(p, name());
  }
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y, const Point& p) const override {
    return ReferenceFunction::apply(x, y, p.gamma, p.bandwidth, p.normalize);
  }
  Tolerance tolerance(const Point& p) const override {
    // Same algorithm as the verifier; only the output's rounding to the point's dtype differs.
    if (p.dtype == "float64") return {1e-12, 1e-10};
    return {1e-6, 1e-6};
  }
};

}  // namespace

std::unique_ptr<Implementation> make_reference_cpu() { return std::make_unique<ReferenceCpu>(); }

}  // namespace sdtw::bench
