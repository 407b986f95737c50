#include "torch/runner.hpp"

#include <c10/util/Exception.h>

#include <chrono>

#include "core/memory_estimate.hpp"
#include "torch/device_info.hpp"
#include "torch/implementation.hpp"
#include "torch/inputs.hpp"
#include "torch/timing.hpp"
#include "torch/verify.hpp"

namespace sdtw::bench {

namespace {
bool looks_like_oom(const std::string& what) {
  return what.find("out of memory") != std::string::npos || what.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos ||
         what.find("std::bad_alloc") != std::string::npos;
}
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
}  // namespace

Result run_point(const Point& p, const Settings& s, const std::string& sweep_name) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r;
  r.point = p;
  r.sweep = sweep_name;
  r.gpu = gpu_of(p);
  auto finish = [&](Result& res) -> Result {
    res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  const Implementation* impl = find_implementation(p.impl);
  if (!impl) {
    r.disposition = disposition::not_supported;
    r.message = "no implementation named " + p.impl + " in this binary";
    return finish(r);
  }
  if (const auto sup = impl->supports(p); !sup.ok) {
    r.disposition = disposition::not_supported;
    r.message = sup.reason;
    return finish(r);
  }
  // Refused before allocating: an allocator's message would name only the one request that failed.
  const double estimate = point_peak_estimate(p), capacity = memory_capacity_bytes(p.device);
  const std::string where = p.device == "cuda" ? "of GPU memory" : "of host memory";
  if (const std::string why = exceeds_capacity(p, estimate, capacity); !why.empty()) {
    r.disposition = disposition::out_of_memory;
    r.message = why + " (not allocated)";
    return finish(r);
  }
  const Tolerance tol = impl->tolerance(p);
  r.value_tol = tol.value_rel;
  r.grad_tol = tol.grad_rel_l2;
  try {
    r.seed = point_seed(p, s.seed);
    const Inputs in = make_inputs(p, *r.seed);
    const Measurement m = measure(*impl, p, in.x, in.y, s);
    r.reps = s.reps;
    r.warmup = m.warmup_steps;
    r.time_ms_median = m.median_ms;
    r.time_ms_p10 = m.p10_ms;
    r.time_ms_p90 = m.p90_ms;
    r.step_peak_mb = m.step_peak_mib;
    r.abs_peak_mb = m.abs_peak_mib;
    const Verification v = verify(p, in.x, in.y, m, tol, s);
    r.verified = v.verified;
    r.value_err = v.value_err;
    r.grad_err = v.grad_err;
    r.disposition = v.ok ? disposition::passed : disposition::failed;
    r.message = v.message;
  } catch (const NotSupported& e) {
    r.disposition = disposition::not_supported;
    r.message = first_line(e.what());
  } catch (const c10::OutOfMemoryError& e) {
    r.disposition = disposition::out_of_memory;
    r.message = first_line(e.what_without_backtrace());
  } catch (const std::bad_alloc& e) {
    r.disposition = disposition::out_of_memory;
    r.message = "std::bad_alloc";
  } catch (const c10::Error& e) {
    r.disposition = looks_like_oom(e.what()) ? disposition::out_of_memory : disposition::error;
    r.message = first_line(e.what_without_backtrace());
  } catch (const std::exception& e) {
    r.disposition = looks_like_oom(e.what()) ? disposition::out_of_memory : disposition::error;
    r.message = first_line(e.what());
  }
  if (r.disposition == disposition::out_of_memory)
    r.message += " (estimated peak " + format_bytes(estimate) + " of " + format_bytes(capacity) + " " + where + ")";
  if (r.disposition != disposition::passed && r.disposition != disposition::failed) {
    r.time_ms_median.reset();
    r.time_ms_p10.reset();
    r.time_ms_p90.reset();
    r.step_peak_mb.reset();
    r.abs_peak_mb.reset();
  }
  try {
    release_device_memory(p);
  } catch (const std::exception& e) {
    // A sticky device error: the row says so; later points will report their own errors.
    if (r.message.empty()) r.message = std::string("after the point: ") + first_line(e.what());
  }
  return finish(r);
}

}  // namespace sdtw::bench
