#pragma once
// Device and library versions for the results metadata, and the results directory's slug.
#include <nlohmann/json.hpp>

#include <string>

namespace sdtw::bench {

// {"torch", "cuda_available", "gpu", "driver", "cuda_runtime", "cuda_driver_api", "compute_capability",
//  "gpu_memory_mib", "torch_cuda", "intra_op_threads"}; GPU fields are null without a device.
nlohmann::json device_metadata();
std::string gpu_name();  // "" without a usable GPU
// gpu_slug(gpu_name()), "cpu" without a GPU.
std::string device_slug();

}  // namespace sdtw::bench
