// pytorch-softdtw-cuda's compute_softdtw_cuda and compute_softdtw_backward_cuda, rewritten in
// CUDA C++. The control flow follows the Numba originals line for line (same thread layout, same
// pass count, same clamping of J, same bounds and band tests, same in-place -inf rewrite of R),
// and array accesses go through Numba-style 3-D views (64-bit shape and strides, negative indices
// wrapped) so that the per-cell work is the original's, not a tuned variant of it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "sdtw/baselines/maghoumi/cell.hpp"
#include "sdtw/baselines/maghoumi/kernels.hpp"

namespace sdtw::baselines::maghoumi::kernels {
namespace {

constexpr int kMaxBlockThreads = 1024;  // CUDA's limit on threads per block

// A Numba device array as the kernels see it: data, shape and strides (in elements here).
template <typename T>
struct Array3 {
  T* data;
  std::int64_t shape[3];
  std::int64_t strides[3];

  __device__ static std::int64_t wrap(std::int64_t idx, std::int64_t dim) { return idx < 0 ? idx + dim : idx; }
  __device__ T& operator()(std::int64_t a, std::int64_t b, std::int64_t c) const {
    return data[wrap(a, shape[0]) * strides[0] + wrap(b, shape[1]) * strides[1] + wrap(c, shape[2]) * strides[2]];
  }
};

template <typename T>
Array3<T> contiguous3(T* data, std::int64_t d0, std::int64_t d1, std::int64_t d2) {
  return {data, {d0, d1, d2}, {d1 * d2, d2, 1}};
}

// One block per pair (b = blockIdx.x), thread tid owns row I = tid; pass p handles the cells with
// I + J == p. n_passes = 2 max(N, M) - 1 as in the original (more than the N + M - 1 needed when
// N != M; the extra passes only synchronise).
template <typename T>
__global__ void forward_kernel(Array3<const T> D, double gamma, double bandwidth, std::int64_t max_i,
                               std::int64_t max_j, std::int64_t n_passes, Array3<T> R) {
  const std::int64_t b = blockIdx.x;
  const std::int64_t tid = threadIdx.x;
  const std::int64_t I = tid;
  const double inv_gamma = 1.0 / gamma;
  for (std::int64_t p = 0; p < n_passes; ++p) {
    const std::int64_t J = max(std::int64_t{0}, min(p - tid, max_j - 1));
    const std::int64_t i = I + 1;
    const std::int64_t j = J + 1;
    if (I + J == p && (I < max_i && J < max_j)) {
      if (!cell::outside_band(i, j, bandwidth)) {
        R(b, i, j) = cell::forward<T>(R(b, i - 1, j - 1), R(b, i - 1, j), R(b, i, j - 1), D(b, i - 1, j - 1), gamma,
                                      inv_gamma);
      }
    }
    __syncthreads();
  }
}

template <typename T>
__global__ void backward_kernel(Array3<const T> D, Array3<T> R, double inv_gamma, double bandwidth,
                                std::int64_t max_i, std::int64_t max_j, std::int64_t n_passes, Array3<T> E) {
  const std::int64_t k = blockIdx.x;
  const std::int64_t tid = threadIdx.x;
  const std::int64_t I = tid;
  for (std::int64_t p = 0; p < n_passes; ++p) {
    const std::int64_t rev_p = n_passes - p - 1;
    const std::int64_t J = max(std::int64_t{0}, min(rev_p - tid, max_j - 1));
    const std::int64_t i = I + 1;
    const std::int64_t j = J + 1;
    if (I + J == rev_p && (I < max_i && J < max_j)) {
      if (cell::is_inf(R(k, i, j))) R(k, i, j) = static_cast<T>(-HUGE_VAL);
      if (!cell::outside_band(i, j, bandwidth)) {
        E(k, i, j) = cell::backward<T>(R(k, i, j), R(k, i + 1, j), R(k, i, j + 1), R(k, i + 1, j + 1), D(k, i + 1, j),
                                       D(k, i, j + 1), D(k, i + 1, j + 1), E(k, i + 1, j), E(k, i, j + 1),
                                       E(k, i + 1, j + 1), inv_gamma);
      }
    }
    __syncthreads();
  }
}

template <typename T>
const void* kernel_symbol(Direction direction) {
  return direction == Direction::forward ? reinterpret_cast<const void*>(&forward_kernel<T>)
                                         : reinterpret_cast<const void*>(&backward_kernel<T>);
}

// After a launch: out-of-resources means the pair does not fit in one block on this device.
LaunchResult finish_launch(LaunchResult result) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaErrorLaunchOutOfResources) {
    result.status = Status::not_supported;
    result.error = err;
  } else if (err != cudaSuccess) {
    result.status = Status::cuda_error;
    result.error = err;
  }
  return result;
}

}  // namespace

const char* status_name(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::not_supported: return "not_supported";
    case Status::cuda_error: return "cuda_error";
  }
  return "unknown";
}

template <typename T>
cudaError_t kernel_info(Direction direction, KernelInfo* info) {
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel_symbol<T>(direction));
  if (err != cudaSuccess) return err;
  info->max_threads_per_block = attr.maxThreadsPerBlock;
  info->num_regs = attr.numRegs;
  info->local_bytes = attr.localSizeBytes;
  return cudaSuccess;
}

template <typename T>
LaunchResult check_launch(Direction direction, std::int64_t n, std::int64_t m) {
  LaunchResult result;
  const std::int64_t threads = std::max(n, m);
  result.threads = static_cast<int>(std::min<std::int64_t>(threads, 1 << 30));
  KernelInfo info;
  const cudaError_t err = kernel_info<T>(direction, &info);
  if (err != cudaSuccess) {
    result.status = Status::cuda_error;
    result.error = err;
    return result;
  }
  result.max_threads = std::min(info.max_threads_per_block, kMaxBlockThreads);
  if (threads < 1 || threads > result.max_threads) result.status = Status::not_supported;
  return result;
}

template <typename T>
LaunchResult forward(const T* D, const Strides3& d_strides, T* R, std::int64_t batch, std::int64_t n,
                     std::int64_t m, double gamma, double bandwidth, cudaStream_t stream) {
  LaunchResult result = check_launch<T>(Direction::forward, n, m);
  if (result.status != Status::ok || batch == 0) return result;
  const std::int64_t threads = std::max(n, m);
  const Array3<const T> d{D, {batch, n, m}, {d_strides[0], d_strides[1], d_strides[2]}};
  forward_kernel<T><<<static_cast<unsigned>(batch), static_cast<unsigned>(threads), 0, stream>>>(
      d, gamma, bandwidth, n, m, 2 * threads - 1, contiguous3(R, batch, n + 2, m + 2));
  return finish_launch(result);
}

template <typename T>
LaunchResult backward(const T* D_padded, T* R, T* E, std::int64_t batch, std::int64_t n, std::int64_t m,
                      double inv_gamma, double bandwidth, cudaStream_t stream) {
  LaunchResult result = check_launch<T>(Direction::backward, n, m);
  if (result.status != Status::ok || batch == 0) return result;
  const std::int64_t threads = std::max(n, m);
  backward_kernel<T><<<static_cast<unsigned>(batch), static_cast<unsigned>(threads), 0, stream>>>(
      contiguous3(D_padded, batch, n + 2, m + 2), contiguous3(R, batch, n + 2, m + 2), inv_gamma, bandwidth, n, m,
      2 * threads - 1, contiguous3(E, batch, n + 2, m + 2));
  return finish_launch(result);
}

#define SDTW_MAGHOUMI_INSTANTIATE(T)                                                                                  \
  template cudaError_t kernel_info<T>(Direction, KernelInfo*);                                                        \
  template LaunchResult check_launch<T>(Direction, std::int64_t, std::int64_t);                                        \
  template LaunchResult forward<T>(const T*, const Strides3&, T*, std::int64_t, std::int64_t, std::int64_t, double,   \
                                   double, cudaStream_t);                                                             \
  template LaunchResult backward<T>(const T*, T*, T*, std::int64_t, std::int64_t, std::int64_t, double, double,       \
                                    cudaStream_t);
SDTW_MAGHOUMI_INSTANTIATE(float)
SDTW_MAGHOUMI_INSTANTIATE(double)
#undef SDTW_MAGHOUMI_INSTANTIATE

}  // namespace sdtw::baselines::maghoumi::kernels
