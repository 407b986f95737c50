#include "torch/device_info.hpp"

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "core/metadata.hpp"
#include "torch/implementation.hpp"

#ifdef SDTW_BENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace sdtw::bench {

namespace {
[[maybe_unused]] std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

std::string gpu_name() {
#ifdef SDTW_BENCH_HAVE_CUDA
  if (cuda_usable()) return at::cuda::getDeviceProperties(0)->name;
#endif
  return "";
}

std::string device_slug() { return gpu_slug(gpu_name()); }

nlohmann::json device_metadata() {
  nlohmann::json j;
  j["torch"] = TORCH_VERSION;
  j["intra_op_threads"] = at::get_num_threads();
  j["cuda_available"] = cuda_usable();
  j["gpu"] = nullptr;
  j["driver"] = nullptr;
  j["cuda_runtime"] = nullptr;
  j["cuda_driver_api"] = nullptr;
  j["compute_capability"] = nullptr;
  j["gpu_memory_mib"] = nullptr;
#ifdef SDTW_BENCH_HAVE_CUDA
#ifdef CUDART_VERSION
  j["cuda_build"] = cuda_version_text(CUDART_VERSION);
#endif
  if (cuda_usable()) {
    const auto* prop = at::cuda::getDeviceProperties(0);
    j["gpu"] = prop->name;
    j["compute_capability"] = std::to_string(prop->major) + "." + std::to_string(prop->minor);
    j["gpu_memory_mib"] = static_cast<double>(prop->totalGlobalMem) / (1024.0 * 1024.0);
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) j["cuda_runtime"] = cuda_version_text(v);
    if (cudaDriverGetVersion(&v) == cudaSuccess) j["cuda_driver_api"] = cuda_version_text(v);
    if (auto d = capture("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0")) j["driver"] = *d;
  }
#endif
  return j;
}

}  // namespace sdtw::bench
