#pragma once
// Production soft-DTW kernels: raw device pointers, one stream, caller-provided workspace.
// Nothing here allocates, synchronises with the host, or knows about torch.
//
// Forward and backward are one persistent launch each; the fused squared-Euclidean mode's backward
// adds a gradient launch (one per 65535 pairs) for double and for float problems with more strips
// than the device holds at once, and the other fused costs' backward always does. Every call is
// capturable in a CUDA graph. The workspace holds the saved state between forward and backward
// (the normalised softmin weights of each cell, 4 bytes per cell for float, 16 for double) and a
// small scratch area; keep it alive and untouched between the forward and the backward of one
// problem.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sdtw/kernels/constraint.hpp"

namespace sdtw::kernels {

struct Problem {
  int64_t batch = 1;
  int64_t n = 1;    // rows of x / of each cost matrix (the padded length)
  int64_t m = 1;    // rows of y / columns of each cost matrix
  int64_t dim = 1;  // features per row (fused modes only)
  // >= 0. gamma = 0 is exact DTW: the value is the min over paths and E the 0/1 alignment of one
  // optimal path (ties: the diagonal, then up, then left, as the reference's hard DTW).
  // A NaN cost in the band makes the value of a pair with a path in the band NaN, as does a -inf
  // cost at gamma = 0.
  double gamma = 1.0;
  int64_t bandwidth = -1;  // Sakoe-Chiba: keep |i - j| <= bandwidth; < 0 keeps every cell
  // Optional per-pair lengths on the device (batch entries). They are not read on the host (that
  // would sync): one out of [1, n] is clamped into it, and a pair whose lengths leave no path in
  // the band gets an infinite value and a NaN gradient. Callers that can, validate them.
  const int64_t* x_len = nullptr;
  const int64_t* y_len = nullptr;
  // Optional pair indices on the device (batch entries), for sqeuclidean_values alone: pair b
  // compares row x_index[b] of x with row y_index[b] of y (and their lengths), so a pairwise
  // matrix needs no gathered copies of its inputs. Not read on the host; callers validate them.
  const int64_t* x_index = nullptr;
  const int64_t* y_index = nullptr;
  // A global constraint (Sakoe-Chiba with tslearn's radius, Itakura), evaluated per row from each
  // pair's own lengths; bandwidth is the other spelling of a band, so at most one of the two is set.
  Constraint constraint = {};
};

// Bad parameters (shape, gamma, bandwidth, constraint, workspace) throw std::invalid_argument naming them.
// A failing CUDA call throws CudaError with the call and the CUDA message.
class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Bytes of workspace one problem needs (T = float or double); 256-byte alignment is enough.
template <typename T>
std::size_t workspace_bytes(const Problem& problem);

// Values alone, with no saved state (inference, pairwise matrices): the workspace holds only the
// borders between strips, O(batch * m) instead of O(batch * n * m). The values are those of the
// forwards below, bit for bit. sqeuclidean_values reads x and y through the pair indices if set.
template <typename T>
std::size_t values_workspace_bytes(const Problem& problem);
template <typename T>
void cost_values(const Problem& problem, const T* D, T* values, void* workspace, cudaStream_t stream);
template <typename T, typename In = T>
void sqeuclidean_values(const Problem& problem, const In* x, const In* y, T* values, void* workspace,
                        cudaStream_t stream);

// Unfused mode: the caller gives the cost tensor D (batch x n x m, row-major).
// values: batch. E: batch x n x m, dvalue[b] * d sdtw_b / d D (zero in padding and off-band).
// dvalue[b] is read at dvalues[b * dvalues_stride]: 0 takes one upstream gradient for every
// pair (the backward of a sum) without a copy.
template <typename T>
void cost_forward(const Problem& problem, const T* D, T* values, void* workspace, cudaStream_t stream);
template <typename T>
void cost_backward(const Problem& problem, const T* dvalues, T* E, void* workspace, cudaStream_t stream,
                   int64_t dvalues_stride = 1);

// Fused squared-Euclidean mode: x is batch x n x dim, y is batch x m x dim; no n x m cost
// tensor exists. grad_x / grad_y (same shapes as x / y) are dvalue[b] * d sdtw_b / d x, y.
// x, y and their gradients are In: T, or for T = float also __nv_bfloat16 or __half, read and
// written as they are (no converted copies) while everything is computed in float.
template <typename T, typename In = T>
void sqeuclidean_forward(const Problem& problem, const In* x, const In* y, T* values, void* workspace,
                         cudaStream_t stream);
template <typename T, typename In = T>
void sqeuclidean_backward(const Problem& problem, const In* x, const In* y, const T* dvalues, In* grad_x,
                          In* grad_y, void* workspace, cudaStream_t stream, int64_t dvalues_stride = 1);

// The fused mode for any cost of x and y that the kernels define (costs.cuh's metrics, with the
// definitions of the reference's NamedCost of the same name). Cost::sqeuclidean runs the
// sqeuclidean_ functions above; the others compute their gradient by a second launch after the
// backward (x, y and the gradients are T). Arguments as for sqeuclidean_forward / _backward /
// _values / _cost; pair indices are for fused_values only.
enum class Cost { sqeuclidean, l1, euclidean, cosine, negative_dot };

// "sqeuclidean", "l1", "euclidean", "cosine", "negative_dot" (the reference's NamedCost names);
// another name throws std::invalid_argument naming it.
Cost cost_named(const std::string& name);

template <typename T>
void fused_values(const Problem& problem, Cost cost, const T* x, const T* y, T* values, void* workspace,
                  cudaStream_t stream);
template <typename T>
void fused_forward(const Problem& problem, Cost cost, const T* x, const T* y, T* values, void* workspace,
                   cudaStream_t stream);
template <typename T>
void fused_backward(const Problem& problem, Cost cost, const T* x, const T* y, const T* dvalues, T* grad_x, T* grad_y,
                    void* workspace, cudaStream_t stream, int64_t dvalues_stride = 1);
// The cost tensor (batch x n x m) by the same code the fused forward runs.
template <typename T>
void fused_cost(const Problem& problem, Cost cost, const T* x, const T* y, T* D, cudaStream_t stream);

// The squared-Euclidean cost tensor D = ||x_i - y_j||^2 (batch x n x m, row-major) from x and y
// as above, by the fused mode's cost policy (direct differences, no cancellation), for callers of
// the unfused mode who want this cost. Only batch, n, m and dim of the problem are read.
template <typename T, typename In = T>
void sqeuclidean_cost(const Problem& problem, const In* x, const In* y, T* D, cudaStream_t stream);

// The gradients of sum_bij G_bij ||x_bi - y_bj||^2 (G batch x n x m, row-major, e.g. the unfused
// mode's E): grad_x = 2 (rowsum(G) x - G y), grad_y = 2 (colsum(G) y - G^T x), in one launch, by
// the fused mode's Jacobian product. Only batch, n, m and dim of the problem are read.
template <typename T, typename In = T>
void sqeuclidean_cost_backward(const Problem& problem, const In* x, const In* y, const T* G, In* grad_x, In* grad_y,
                               cudaStream_t stream);

}  // namespace sdtw::kernels
