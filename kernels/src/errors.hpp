#pragma once
// The host side's errors: std::invalid_argument for a bad argument (naming it, its value and the
// constraint), CudaError for a failed CUDA call, each message starting "sdtw::kernels: ".
#include <cuda_runtime_api.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels::detail {

[[noreturn]] inline void reject(const std::string& what) { throw std::invalid_argument("sdtw::kernels: " + what); }

// Every launch validates: the message is built only when a check fails.
template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream msg;
  (msg << ... << parts);
  reject(msg.str());
}

inline void require(const void* ptr, const char* name) {
  if (!ptr) reject(std::string(name) + " must not be null");
}

inline void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throw CudaError(code, std::string("sdtw::kernels: ") + what + ": " + cudaGetErrorString(code));
}

}  // namespace sdtw::kernels::detail
