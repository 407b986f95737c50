#include "torch/timing.hpp"

#include <algorithm>
#include <chrono>

#ifdef SDTW_BENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace sdtw::bench {

namespace {

struct StepOutput {
  at::Tensor values, gx, gy;
};

StepOutput step(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host,
                double* ms) {
  const at::Device dev = p.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  // Fresh leaf copies (copy=true also on the CPU, where .to() would otherwise alias).
  at::Tensor x = x_host.to(dev, x_host.scalar_type(), /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
  at::Tensor y = y_host.to(dev, y_host.scalar_type(), false, true).requires_grad_(true);
  StepOutput out;
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") {
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    const auto stream = at::cuda::getCurrentCUDAStream();
    start.record(stream);
    out.values = impl.forward(x, y, p);
    out.values.sum().backward();
    stop.record(stream);
    stop.synchronize();
    *ms = static_cast<double>(start.elapsed_time(stop));
    out.gx = x.grad();
    out.gy = y.grad();
    return out;
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  out.values = impl.forward(x, y, p);
  out.values.sum().backward();
  const auto t1 = std::chrono::steady_clock::now();
  *ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  out.gx = x.grad();
  out.gy = y.grad();
  return out;
}

}  // namespace

Measurement measure(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host,
                    int warmup, int reps) {
  Measurement m;
  double ms = 0;
  for (int i = 0; i < warmup; ++i) step(impl, p, x_host, y_host, &ms);
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") {
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::resetPeakStats(0);
  }
#endif
  StepOutput last;
  for (int i = 0; i < reps; ++i) {
    last = StepOutput{};  // the previous step's tensors are freed before the next step allocates
    last = step(impl, p, x_host, y_host, &ms);
    m.times_ms.push_back(ms);
  }
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
    // Index 0 is StatType::AGGREGATE (all pools) in every LibTorch version.
    m.peak_mib = static_cast<double>(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);
  }
#endif
  auto sorted = m.times_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  m.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  m.min_ms = sorted.front();
  m.max_ms = sorted.back();
  m.values = last.values.detach().to(at::kCPU);
  if (last.gx.defined()) m.grad_x = last.gx.to(at::kCPU);
  if (last.gy.defined()) m.grad_y = last.gy.to(at::kCPU);
  return m;
}

void release_device_memory(const Point& p) {
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") {
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
#else
  (void)p;
#endif
}

}  // namespace sdtw::bench
