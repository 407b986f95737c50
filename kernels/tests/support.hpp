#pragma once
// Test support: device buffers, fresh random inputs (seed printed for replay), error norms, and
// the skip that names why a GPU test did not run.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sdtw/reference.hpp"

namespace sdtw::kernels::testing {

inline bool has_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define SDTW_REQUIRE_GPU() \
  if (!::sdtw::kernels::testing::has_gpu()) GTEST_SKIP() << "no CUDA device: GPU test not run"

#define SDTW_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (cudaMalloc(&ptr_, bytes() > 0 ? bytes() : 1) != cudaSuccess) ptr_ = nullptr;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr_); }
  T* get() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return count_ * sizeof(T); }
  void upload(const std::vector<T>& host) { cudaMemcpy(ptr_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice); }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost);
    return host;
  }
  // Fills every byte with 0xff: NaN for floating point, so an unwritten element shows.
  void poison() { cudaMemset(ptr_, 0xff, bytes()); }

 private:
  void* ptr_ = nullptr;
  std::size_t count_;
};

// A fixed seed, so that a red run is the code's doing; SDTW_FRESH_SEEDS=1 draws a fresh one per call
// (the `fuzz` ctest entry) and SDTW_TEST_SEED replays the seed a run printed.
inline std::mt19937_64 seeded_rng(const char* what) {
  constexpr uint64_t kFixedSeed = 20261126;
  const char* replay = std::getenv("SDTW_TEST_SEED");
  const char* fresh = std::getenv("SDTW_FRESH_SEEDS");
  const uint64_t seed = replay ? std::strtoull(replay, nullptr, 10)
                        : fresh && std::strcmp(fresh, "1") == 0 ? std::random_device{}()
                                                                : kFixedSeed;
  std::printf("[ seed     ] %s: %llu\n", what, static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

template <typename T>
std::vector<T> normal(std::mt19937_64& rng, std::size_t count) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<T> v(count);
  for (auto& e : v) e = static_cast<T>(dist(rng));
  return v;
}

template <typename T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// ||a - b|| / ||b||, infinite when a has a NaN or Inf; 0 for two zero vectors.
template <typename T>
double relative_l2(const std::vector<T>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!std::isfinite(static_cast<double>(a[k]))) return std::numeric_limits<double>::infinity();
    num += (a[k] - b[k]) * (a[k] - b[k]);
    den += b[k] * b[k];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// max |a - b| / (|b| + 1), infinite when a has a NaN or Inf: a relative error that stays meaningful
// where b is 0 (a cost at coincident rows).
template <typename T>
double max_scaled_error(const std::vector<T>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!std::isfinite(static_cast<double>(a[k]))) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(a[k] - b[k]) / (std::abs(b[k]) + 1.0));
  }
  return worst;
}

template <typename T>
double max_relative(const std::vector<T>& a, const std::vector<double>& b) {
  double worst = 0;
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (!std::isfinite(static_cast<double>(a[k]))) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(a[k] - b[k]) / std::max(std::abs(b[k]), 1e-300));
  }
  return worst;
}

}  // namespace sdtw::kernels::testing
