#pragma once
// Verification of a measured point against the float64 reference: the values and gradients of
// the last timed step, on every pair or, when B*N*M is over the budget, on evenly spaced pairs
// (recorded as "k/B (subsample)"). A pair bigger than the budget alone is not verified.
#include <optional>
#include <string>

#include "core/config.hpp"
#include "torch/implementation.hpp"
#include "torch/timing.hpp"

namespace sdtw::bench {

struct Verification {
  bool ran = false;
  bool ok = true;
  std::string verified;  // "32/32", "4/32 (subsample)", "skipped (...)", "off"
  std::optional<double> value_err, grad_err;
  std::string message;  // what failed, with the numbers
};

// Errors of a result against reference output; pairs: the indices of x/y the result rows are for.
double value_error(const at::Tensor& values, const at::Tensor& ref);      // max |v-r| / max |r|
double rel_l2_error(const at::Tensor& grad, const at::Tensor& ref_grad);  // ||g-r|| / ||r||

Verification verify(const Point& p, const at::Tensor& x_host, const at::Tensor& y_host, const Measurement& m,
                    const Tolerance& tol, const Settings& s);

}  // namespace sdtw::bench
