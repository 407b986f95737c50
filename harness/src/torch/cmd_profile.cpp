// `sdtw-bench profile`: one point, one implementation, N repetitions inside NVTX ranges, for
// Nsight Systems (nsys profile --capture-range=cudaProfilerApi) and Nsight Compute
// (ncu --profile-from-start off --nvtx --nvtx-include "sdtw.forward/").
#include <chrono>
#include <cstdio>
#include <iostream>

#include "torch/commands.hpp"
#include "torch/implementation.hpp"
#include "torch/inputs.hpp"

#ifdef SDTW_BENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#endif

namespace sdtw::bench {

namespace {
// An NVTX range for the scope (a no-op without CUDA).
struct Range {
  explicit Range(const char* name) {
#ifdef SDTW_BENCH_HAVE_CUDA
    nvtxRangePushA(name);
#else
    (void)name;
#endif
  }
  ~Range() {
#ifdef SDTW_BENCH_HAVE_CUDA
    nvtxRangePop();
#endif
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};
void sync(const Point& p) {
#ifdef SDTW_BENCH_HAVE_CUDA
  if (p.device == "cuda") c10::cuda::device_synchronize();
#else
  (void)p;
#endif
}
}  // namespace

void register_profile(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "profile", "One point, one implementation, N repetitions; each phase in an NVTX range (sdtw.rep, sdtw.inputs, "
                 "sdtw.forward = cost + forward recursion, sdtw.backward = backward recursion + gradient of the cost, "
                 "sdtw.gradient = gradients read back). Timed reps are inside cudaProfilerStart/Stop");
  static Point p;
  static int64_t reps = 10, warmup = 2;
  static double band = -1;
  static uint64_t seed = 0;
  p.impl = "ours_fused";
  p.device = "";
  p.batch = 32;
  p.n = 512;
  p.m = 0;
  p.dim = 64;
  cmd->add_option("--impl", p.impl, "Implementation (default ours_fused)")->check(CLI::IsMember(known_implementations()));
  cmd->add_option("--device", p.device, "cpu or cuda (default: the implementation's)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("-B,--batch", p.batch, "Pairs (default 32)")->check(integer_at_least(1));
  cmd->add_option("-N", p.n, "Length of x (default 512)")->check(integer_at_least(1));
  auto* m_option = cmd->add_option("-M", p.m, "Length of y (default N)")->check(integer_at_least(1));
  cmd->add_option("-D,--dim", p.dim, "Features (default 64)")->check(integer_at_least(1));
  cmd->add_option("--gamma", p.gamma, "Gamma >= 0, 0 for exact DTW (default 1)")->check(finite_non_negative());
  add_bandwidth_option(cmd, band);
  cmd->add_flag("--normalize", p.normalize, "Divergence");
  cmd->add_option("--dtype", p.dtype, "float32 or float64")->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_option("--reps", reps, "Profiled repetitions (default 10)")->check(integer_at_least(1));
  cmd->add_option("--warmup", warmup, "Unprofiled repetitions first (default 2)")->check(integer_at_least(0));
  cmd->add_option("--seed", seed, "Input seed (default 0)")->check(integer_at_least(0));
  cmd->callback([m_option] {
    if (p.device.empty()) p.device = default_device(p.impl);
    if (m_option->count() == 0) p.m = p.n;
    p.bandwidth = band_of(band);
    check_point_runs(p, "-B, -N, -M or -D");
    const Implementation* impl = find_implementation(p.impl);
    const Inputs in = make_inputs(p, seed);
    const at::Device dev = p.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    std::printf("profile: %s, %ld warm-up + %ld reps%s\n", describe(p).c_str(), static_cast<long>(warmup),
                static_cast<long>(reps),
#ifdef SDTW_BENCH_HAVE_CUDA
                ""
#else
                " (built without CUDA: no NVTX ranges)"
#endif
    );
    for (int64_t i = 0; i < warmup + reps; ++i) {
#ifdef SDTW_BENCH_HAVE_CUDA
      if (i == warmup && p.device == "cuda") cudaProfilerStart();
#endif
      sync(p);
      const auto t0 = std::chrono::steady_clock::now();
      {
        Range rep("sdtw.rep");
        at::Tensor x, y, v;
        {
          Range r("sdtw.inputs");
          x = in.x.to(dev, in.x.scalar_type(), false, true).requires_grad_(true);
          y = in.y.to(dev, in.y.scalar_type(), false, true).requires_grad_(true);
        }
        {
          Range r("sdtw.forward");
          v = impl->forward(x, y, p);
          sync(p);
        }
        {
          Range r("sdtw.backward");
          v.sum().backward();
          sync(p);
        }
        {
          Range r("sdtw.gradient");
          (void)x.grad().sum().item<double>();
          (void)y.grad().sum().item<double>();
        }
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (i >= warmup)
        std::printf("rep %ld: %.3f ms (wall, synchronized per phase)\n", static_cast<long>(i - warmup + 1), ms);
    }
#ifdef SDTW_BENCH_HAVE_CUDA
    if (p.device == "cuda") cudaProfilerStop();
#endif
  });
}

}  // namespace sdtw::bench
