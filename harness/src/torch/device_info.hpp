#pragma once
// Device and library versions for the results metadata, and the results directory's slug.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/point.hpp"

namespace sdtw::bench {

// {"torch", "cuda_available", "gpu", "driver", "cuda_runtime", "cuda_driver_api", "compute_capability",
//  "gpu_memory_mib", "torch_cuda", "intra_op_threads"}; GPU fields are null without a device.
nlohmann::json device_metadata();
std::string gpu_name();  // "" without a usable GPU
// gpu_slug(gpu_name()), "cpu" without a GPU.
std::string device_slug();

// Memory of the point's device: the GPU's total for cuda, the host's physical memory for cpu;
// 0 when unknown.
double memory_capacity_bytes(const std::string& device);
// estimate_peak_bytes (core/memory_estimate.hpp) with the kernels' workspace formula and this
// process's intra-op threads.
double point_peak_estimate(const Point& p);
// The entries of CUDA_VISIBLE_DEVICES (indices or UUIDs); empty when it is unset or empty.
std::vector<std::string> cuda_visible_devices();
// The GPUs this process may use, counted without initialising CUDA (a --gpus parent never does:
// its workers own the GPUs): CUDA_VISIBLE_DEVICES' entries when set, else the NVIDIA driver's
// /proc/driver/nvidia/gpus; 0 without a driver.
int visible_gpu_count();
// The GPU this process was given (first CUDA_VISIBLE_DEVICES entry), else "0" for a cuda point
// and "" for a cpu point: the row's `gpu` column.
std::string gpu_of(const Point& p);

}  // namespace sdtw::bench
