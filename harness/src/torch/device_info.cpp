#include "torch/device_info.hpp"

#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/memory_estimate.hpp"
#include "core/metadata.hpp"
#include "torch/implementation.hpp"

#ifdef SDTW_BENCH_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

#ifdef SDTW_BENCH_HAVE_OURS
// sdtw_torch's size of the CUDA state (kernels::workspace_bytes); -1 when built without CUDA.
extern "C" int64_t sdtw_torch_cuda_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth,
                                               int is_double);
// The checkpointed mode's workspace at the band memory="checkpoint" picks with free_bytes free (the
// least any band needs when none fits); -1 when built without CUDA.
extern "C" int64_t sdtw_torch_cuda_checkpoint_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim,
                                                          int64_t bandwidth, int is_double, double free_bytes);
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

double memory_capacity_bytes(const std::string& device) {
  if (device == "cuda") {
#ifdef SDTW_BENCH_HAVE_CUDA
    if (cuda_usable()) return static_cast<double>(at::cuda::getDeviceProperties(0)->totalGlobalMem);
#endif
    return 0;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

double point_peak_estimate(const Point& p) {
  double state = -1;
#ifdef SDTW_BENCH_HAVE_OURS
  if (p.device == "cuda") {
    const int64_t band = p.bandwidth ? *p.bandwidth : -1;
    const int is_double = p.dtype == "float64";
    // The checkpointed band as memory="checkpoint" picks it on an empty device of this capacity.
    const double capacity = memory_capacity_bytes("cuda");
    auto ws = [&](int64_t n, int64_t m) {
      return static_cast<double>(
          p.impl == "ours_checkpoint"
              ? sdtw_torch_cuda_checkpoint_state_bytes(p.batch, n, m, p.dim, band, is_double, capacity)
              : sdtw_torch_cuda_state_bytes(p.batch, n, m, p.dim, band, is_double));
    };
    state = ws(p.n, p.m);
    if (state >= 0 && p.normalize) state += ws(p.n, p.n) + ws(p.m, p.m);
  }
#endif
  return estimate_peak_bytes(p, state, at::get_num_threads());
}

std::vector<std::string> cuda_visible_devices() {
  std::vector<std::string> out;
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!v || !*v) return out;
  const std::string s(v);
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

int visible_gpu_count() {
  const std::vector<std::string> visible = cuda_visible_devices();
  if (!visible.empty()) return static_cast<int>(visible.size());
  // Set but empty hides every GPU from CUDA; only unset leaves them all visible.
  if (std::getenv("CUDA_VISIBLE_DEVICES")) return 0;
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", ec), end; !ec && it != end; it.increment(ec))
    ++count;
  return count;
}

std::string gpu_of(const Point& p) {
  const auto visible = cuda_visible_devices();
  if (!visible.empty()) return visible.front();
  return p.device == "cuda" ? "0" : "";
}

nlohmann::json device_metadata() {
  nlohmann::json j;
  j["torch"] = TORCH_VERSION;
  j["intra_op_threads"] = at::get_num_threads();
  j["cuda_available"] = cuda_usable();
  // The schema's keys (docs/DESIGN.md §5): empty text on a machine without a usable GPU.
  j["gpu"] = "";
  j["gpu_count"] = 0;
  j["driver"] = "";
  j["cuda"] = "";
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
    j["gpu_count"] = at::cuda::device_count();
    j["compute_capability"] = std::to_string(prop->major) + "." + std::to_string(prop->minor);
    j["gpu_memory_mib"] = static_cast<double>(prop->totalGlobalMem) / (1024.0 * 1024.0);
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) j["cuda"] = j["cuda_runtime"] = cuda_version_text(v);
    if (cudaDriverGetVersion(&v) == cudaSuccess) j["cuda_driver_api"] = cuda_version_text(v);
    if (auto d = capture("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0")) j["driver"] = *d;
  }
#endif
  return j;
}

}  // namespace sdtw::bench
