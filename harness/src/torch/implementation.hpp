#pragma once
// The implementation registry: name -> object that says whether it can run a point and computes
// per-pair soft-DTW values with autograd. Timing, verification and dispositions are generic
// (runner.hpp), so every implementation is measured the same way.
#include <ATen/ATen.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/point.hpp"

namespace sdtw::bench {

// Thrown by forward() when the implementation cannot run a point (a limit found at run time).
class NotSupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Support {
  bool ok = true;
  std::string reason;  // why not, when !ok
};

// Verification tolerance: max |v - v_ref| / max |v_ref| over the verified pairs, and the relative
// L2 error of the gradient (the worse of x and y).
struct Tolerance {
  double value_rel = 1e-5;
  double grad_rel_l2 = 1e-4;
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual bool built() const = 0;  // compiled into this binary
  // Cheap checks before any allocation: built, device present, dtype, known limits.
  virtual Support supports(const Point& p) const = 0;
  // Values (B) of x (B,N,D) and y (B,M,D) on the point's device and dtype, differentiable.
  virtual at::Tensor forward(const at::Tensor& x, const at::Tensor& y, const Point& p) const = 0;
  virtual Tolerance tolerance(const Point& p) const { (void)p; return {}; }
};

const std::vector<std::unique_ptr<Implementation>>& registry();
const Implementation* find_implementation(const std::string& name);  // nullptr when unknown

// Factories, one per file.
std::unique_ptr<Implementation> make_reference_cpu();
std::unique_ptr<Implementation> make_ours(const std::string& name);  // ours_fused, ours_unfused, ours_checkpoint, ours_cpu
std::unique_ptr<Implementation> make_maghoumi();

// True when this binary can use a CUDA device now.
bool cuda_usable();
// The common checks: the point's device exists; returns !ok with a reason otherwise.
Support device_support(const Point& p);
// For the implementations outside the library: !ok naming the point's library-only options (dist,
// constraint, warp, subsequence) and the implementation, when any is set.
Support library_options_refused(const Point& p, const std::string& impl);

}  // namespace sdtw::bench
