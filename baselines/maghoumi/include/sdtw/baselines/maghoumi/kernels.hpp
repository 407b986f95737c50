#pragma once
// The two CUDA kernels of pytorch-softdtw-cuda behind raw device pointers and a stream.
// No torch, no allocation, no host sync: the caller owns every buffer (the torch layer allocates
// them exactly as the original's PyTorch code does).
//
// Scheme (as the original): one thread block per pair, one thread per row, max(N, M) threads per
// block, 2 max(N, M) - 1 anti-diagonal passes separated by __syncthreads(). A pair therefore has
// to fit in one block: max(N, M) <= 1024 and <= what the compiled kernel can launch with (its
// registers may allow fewer threads). Launches that do not fit are refused with
// Status::not_supported instead of running; a launch that fails with
// cudaErrorLaunchOutOfResources is reported the same way.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace sdtw::baselines::maghoumi::kernels {

enum class Status { ok, not_supported, cuda_error };

struct LaunchResult {
  Status status = Status::ok;
  cudaError_t error = cudaSuccess;  // the CUDA error behind not_supported or cuda_error, if any
  int threads = 0;                  // threads per block the launch needs: max(N, M)
  int max_threads = 0;              // the most this kernel can launch with on the current device
};

// What the compiled kernel needs on the current device (cudaFuncGetAttributes).
struct KernelInfo {
  int max_threads_per_block = 0;
  int num_regs = 0;
  std::size_t local_bytes = 0;
};

enum class Direction { forward, backward };

template <typename T>
cudaError_t kernel_info(Direction direction, KernelInfo* info);

// Whether a pair of lengths N, M can be launched in this direction on the current device
// (status ok or not_supported; cuda_error when the attributes cannot be queried).
template <typename T>
LaunchResult check_launch(Direction direction, std::int64_t n, std::int64_t m);

// Element strides of a 3-D array (the original's kernels index Numba arrays, which carry strides).
using Strides3 = std::array<std::int64_t, 3>;

// R: B x (N+2) x (M+2), contiguous, filled by the caller with +inf except R[:, 0, 0] = 0.
// D: B x N x M with strides d_strides. gamma is used as given (the torch layer passes the
// float32-rounded value the original passes). bandwidth <= 0 disables pruning.
template <typename T>
LaunchResult forward(const T* D, const Strides3& d_strides, T* R, std::int64_t batch, std::int64_t n,
                     std::int64_t m, double gamma, double bandwidth, cudaStream_t stream);

// D_padded, R, E: B x (N+2) x (M+2), contiguous, prepared as the original prepares them:
// D_padded zero with D in [1..N, 1..M]; R from forward() with R[:, :, M+1] = R[:, N+1, :] = -inf
// and R[:, N+1, M+1] = R[:, N, M]; E zero with E[:, N+1, M+1] = 1. R is modified in place
// (+inf cells become -inf), as in the original. E[:, 1..N, 1..M] is dR[N,M]/dD on return.
template <typename T>
LaunchResult backward(const T* D_padded, T* R, T* E, std::int64_t batch, std::int64_t n, std::int64_t m,
                      double inv_gamma, double bandwidth, cudaStream_t stream);

const char* status_name(Status status);

}  // namespace sdtw::baselines::maghoumi::kernels
