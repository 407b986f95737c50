#include "torch/verify.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "torch/reference_eval.hpp"

namespace sdtw::bench {

double value_error(const at::Tensor& values, const at::Tensor& ref) {
  const auto v = values.to(at::kDouble);
  const auto r = ref.to(at::kDouble);
  const double diff = (v - r).abs().max().item<double>();
  const double scale = r.abs().max().item<double>();
  if (!std::isfinite(diff)) return std::numeric_limits<double>::infinity();
  return scale > 0 ? diff / scale : diff;
}

double rel_l2_error(const at::Tensor& grad, const at::Tensor& ref) {
  const auto g = grad.to(at::kDouble);
  const auto r = ref.to(at::kDouble);
  const double diff = (g - r).norm().item<double>();
  const double scale = r.norm().item<double>();
  if (!std::isfinite(diff)) return std::numeric_limits<double>::infinity();
  return scale > 0 ? diff / scale : diff;
}

Verification verify(const Point& p, const at::Tensor& x_host, const at::Tensor& y_host, const Measurement& m,
                    const Tolerance& tol, const Settings& s) {
  Verification v;
  if (!s.verify) {
    v.verified = "off";
    return v;
  }
  const int64_t per_pair = p.n * p.m;
  const int64_t k = std::min<int64_t>(p.batch, s.verify_max_cells / std::max<int64_t>(per_pair, 1));
  if (k < 1) {
    v.verified = "skipped (N*M > verify_max_cells)";
    return v;
  }
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < k; ++i) idx.push_back(i * p.batch / k);
  const auto index = at::tensor(idx, at::kLong);
  const auto ref = reference_eval(x_host.index_select(0, index), y_host.index_select(0, index), p.gamma, p.bandwidth,
                                  p.normalize, /*with_gradient=*/true);
  v.ran = true;
  v.verified = std::to_string(k) + "/" + std::to_string(p.batch) + (k < p.batch ? " (subsample)" : "");
  if (!m.values.defined() || m.values.numel() != p.batch) {
    v.ok = false;
    v.message = "implementation returned " + std::to_string(m.values.defined() ? m.values.numel() : 0) +
                " values for B=" + std::to_string(p.batch);
    return v;
  }
  v.value_err = value_error(m.values.index_select(0, index), ref.values);
  if (!m.grad_x.defined() || !m.grad_y.defined()) {
    v.ok = false;
    v.message = "no gradient reached x or y";
    return v;
  }
  v.grad_err = std::max(rel_l2_error(m.grad_x.index_select(0, index), ref.grad_x),
                        rel_l2_error(m.grad_y.index_select(0, index), ref.grad_y));
  char buf[256];
  if (!(*v.value_err <= tol.value_rel)) {
    v.ok = false;
    std::snprintf(buf, sizeof buf, "value error %.3g > %.3g; ", *v.value_err, tol.value_rel);
    v.message += buf;
  }
  if (!(*v.grad_err <= tol.grad_rel_l2)) {
    v.ok = false;
    std::snprintf(buf, sizeof buf, "gradient rel-L2 error %.3g > %.3g", *v.grad_err, tol.grad_rel_l2);
    v.message += buf;
  }
  return v;
}

}  // namespace sdtw::bench
