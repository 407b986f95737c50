#include "torch/timing.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/percentile.hpp"

#ifdef SDTW_BENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>

// The cuBLAS (and cuBLASLt) workspace pool; declared in ATen/cuda/CUDAContextLight.h, or in a
// header split out of it in newer LibTorch, so declared here for either layout.
namespace at::cuda {
void clearCublasWorkspaces();
}
#endif

namespace sdtw::bench {

namespace {

struct StepOutput {
  at::Tensor values, gx, gy;
};

#ifdef SDTW_BENCH_HAVE_CUDA
// Two CUDA events made once per point: an at::cuda::CUDAEvent is created lazily by its first
// record(), which for the stop event would put cudaEventCreate inside the timed region.
class EventPair {
 public:
  EventPair() {
    C10_CUDA_CHECK(cudaEventCreate(&start_));
    C10_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start(cudaStream_t s) { C10_CUDA_CHECK(cudaEventRecord(start_, s)); }
  // Records the stop event, waits for it and returns the milliseconds between the two.
  double stop(cudaStream_t s) {
    C10_CUDA_CHECK(cudaEventRecord(stop_, s));
    C10_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};
#else
struct EventPair {};
#endif

StepOutput step(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host,
                EventPair* events, double* ms) {
  const at::Device dev = p.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  // Fresh leaf copies (copy=true also on the CPU, where .to() would otherwise alias).
  at::Tensor x = x_host.to(dev, x_host.scalar_type(), /*non_blocking=*/false, /*copy=*/true).requires_grad_(true);
  at::Tensor y = y_host.to(dev, y_host.scalar_type(), false, true).requires_grad_(true);
  StepOutput out;
#ifdef SDTW_BENCH_HAVE_CUDA
  if (events) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    events->start(stream);
    out.values = impl.forward(x, y, p);
    out.values.sum().backward();
    *ms = events->stop(stream);
    out.gx = x.grad();
    out.gy = y.grad();
    return out;
  }
#else
  (void)events;
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

#ifdef SDTW_BENCH_HAVE_CUDA
// The caching allocator's allocated bytes now and at their peak (index 0 is StatType::AGGREGATE, all
// pools, in every LibTorch version).
int64_t allocated_now() { return c10::cuda::CUDACachingAllocator::getDeviceStats(0).allocated_bytes[0].current; }
int64_t allocated_peak() { return c10::cuda::CUDACachingAllocator::getDeviceStats(0).allocated_bytes[0].peak; }
#endif

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

Measurement measure(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host,
                    const Settings& s) {
  Measurement m;
  double ms = 0;
  std::optional<EventPair> cuda_events;  // only for CUDA points: a CPU point needs no device
  const bool cuda = p.device == "cuda";
#ifdef SDTW_BENCH_HAVE_CUDA
  if (cuda) {
    // The caching allocator exists only once a CUDA tensor has been made: before that its statistics
    // calls fail with "Invalid device argument" (the first point of a process otherwise).
    (void)at::empty({1}, at::TensorOptions().device(at::kCUDA));
    cuda_events.emplace();
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::resetPeakStats(0);  // the absolute peak counts from here
  }
#endif
  EventPair* events = cuda_events ? &*cuda_events : nullptr;
  const auto warm_from = std::chrono::steady_clock::now();
  const auto warmed = [&] {
    return std::chrono::steady_clock::now() - warm_from >= std::chrono::milliseconds(s.warmup_min_ms);
  };
  for (; m.warmup_steps < s.warmup || !warmed(); ++m.warmup_steps) step(impl, p, x_host, y_host, events, &ms);
  int64_t absolute = 0, own = 0;
#ifdef SDTW_BENCH_HAVE_CUDA
  if (cuda) {
    c10::cuda::device_synchronize();
    absolute = allocated_peak();
  }
#endif
  StepOutput last;
  for (int i = 0; i < s.reps; ++i) {
    last = StepOutput{};  // the previous step's tensors are freed before the next step allocates
#ifdef SDTW_BENCH_HAVE_CUDA
    int64_t before = 0;
    if (cuda) {
      c10::cuda::device_synchronize();
      before = allocated_now();
      c10::cuda::CUDACachingAllocator::resetPeakStats(0);
    }
#endif
    last = step(impl, p, x_host, y_host, events, &ms);
    m.times_ms.push_back(ms);
#ifdef SDTW_BENCH_HAVE_CUDA
    if (cuda) {
      c10::cuda::device_synchronize();
      const int64_t peak = allocated_peak();
      absolute = std::max(absolute, peak);
      own = std::max(own, peak - before);
    }
#endif
  }
  if (cuda) {
    m.step_peak_mib = static_cast<double>(own) / kMiB;
    m.abs_peak_mib = static_cast<double>(absolute) / kMiB;
  }
  m.median_ms = nearest_rank(m.times_ms, 0.5);
  m.p10_ms = nearest_rank(m.times_ms, 0.1);
  m.p90_ms = nearest_rank(m.times_ms, 0.9);
  m.values = last.values.detach().to(at::kCPU);
  if (last.gx.defined()) m.grad_x = last.gx.to(at::kCPU);
  if (last.gy.defined()) m.grad_y = last.gy.to(at::kCPU);
  return m;
}

void release_device_memory(const Point& p) {
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") {
    c10::cuda::device_synchronize();
    // cuBLAS workspaces (torch allocates one per thread and stream, 32 MiB each on Hopper, from
    // the caching allocator) outlive the point whose matmuls created them and would count in
    // every later point's peak: free them, so a peak holds only what its implementation allocates.
    at::cuda::clearCublasWorkspaces();
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
#else
  (void)p;
#endif
}

}  // namespace sdtw::bench
