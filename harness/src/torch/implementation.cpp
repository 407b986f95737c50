#include "implementation.hpp"

#include <torch/cuda.h>

namespace sdtw::bench {

const std::vector<std::unique_ptr<Implementation>>& registry() {
  static const auto impls = [] {
    std::vector<std::unique_ptr<Implementation>> v;
    v.push_back(make_ours("ours_fused"));
    v.push_back(make_ours("ours_unfused"));
    v.push_back(make_ours("ours_checkpoint"));
    v.push_back(make_ours("ours_cpu"));
    v.push_back(make_reference_cpu());
    v.push_back(make_maghoumi());
    return v;
  }();
  return impls;
}

const Implementation* find_implementation(const std::string& name) {
  for (const auto& i : registry())
    if (i->name() == name) return i.get();
  return nullptr;
}

bool cuda_usable() {
#ifdef SDTW_BENCH_HAVE_CUDA
  static const bool ok = torch::cuda::is_available();
  return ok;
#else
  return false;
#endif
}

Support device_support(const Point& p) {
  if (p.device == "cuda" && !cuda_usable()) {
#ifdef SDTW_BENCH_HAVE_CUDA
    return {false, "no CUDA device"};
#else
    return {false, "built without CUDA"};
#endif
  }
  if (p.device != "cuda" && p.device != "cpu") return {false, "unknown device " + p.device};
  return {};
}

Support library_options_refused(const Point& p, const std::string& impl) {
  const std::string set = p.problem.set_options();
  if (set.empty()) return {};
  return {false, impl + " does not take " + set + " (the library's options: use ours_cpu on the CPU, ours_fused or "
                 "ours_unfused on CUDA)"};
}

}  // namespace sdtw::bench
