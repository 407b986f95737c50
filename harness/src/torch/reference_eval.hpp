#pragma once
// The float64 reference on tensors: values and (optionally) gradients of B pairs.
#include <ATen/ATen.h>

#include <cstdint>
#include <optional>

namespace sdtw::bench {

struct ReferenceOutput {
  at::Tensor values;  // B, float64, CPU
  at::Tensor grad_x;  // B x N x D (undefined without gradient)
  at::Tensor grad_y;  // B x M x D
};

ReferenceOutput reference_eval(const at::Tensor& x, const at::Tensor& y, double gamma, std::optional<int64_t> band,
                               bool normalize, bool with_gradient);

}  // namespace sdtw::bench
