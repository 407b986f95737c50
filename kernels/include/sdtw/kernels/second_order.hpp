#pragma once
// The second order of soft-DTW on the device: the Hessian-vector product H G in cost space, which
// is the backward of the expected alignment E(D) (H is symmetric) and the derivative of the loss's
// backward. Raw device pointers, one stream, caller-provided workspace; nothing here allocates,
// synchronises with the host, or knows about torch.
//
// On the first order's strips (Mensch & Blondel 2018's recursions): the forward saves each cell's
// softmin weights, in float64 for a float64 cost and in float32 for a float32 one; a forward sweep
// takes the directional derivative R_dot of R over them and a backward sweep E and E_dot, both in
// float64 (kernels/src/hessian_product.cuh). The workspace holds the weights and R_dot, 24 bytes a
// cell of the rows padded to 32, and the strips' ring: alignment_backward_workspace_bytes says how much.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels {

struct SecondOrderProblem {
  int64_t batch = 1;
  int64_t n = 1;  // rows of each cost matrix (the padded length)
  int64_t m = 1;  // columns of each cost matrix
  double gamma = 1.0;
  int64_t bandwidth = -1;  // Sakoe-Chiba: keep |i - j| <= bandwidth; < 0 keeps every cell
  // Optional per-pair lengths on the device (batch entries), as in Problem: not read on the host,
  // one out of [1, n] is clamped into it, and a pair left with no path in the band gets NaN.
  const int64_t* x_len = nullptr;
  const int64_t* y_len = nullptr;
  Constraint constraint = {};  // as in Problem: at most one of bandwidth and constraint
};

// Bytes of workspace alignment_backward needs (16-byte alignment is enough). Bad parameters
// (shape, gamma, bandwidth) throw std::invalid_argument naming them.
std::size_t alignment_backward_workspace_bytes(const SecondOrderProblem& problem);

// E_dot (batch x n x m, row-major) = H_b G_b for each pair b, H_b the Hessian of sdtw_b in its
// cost block D_b (batch x n x m, In = float or double) and G_b the direction
// (batch x n x m, float64). Entries beyond a pair's lengths are 0. A pair whose value is not
// finite (in In), or whose G has a non-finite entry inside its lengths, gets NaN in E_dot inside its lengths.
// Throws std::invalid_argument for bad parameters or pointers, CudaError for a failed launch.
template <typename In>
void alignment_backward(const SecondOrderProblem& problem, const In* D, const double* G, double* E_dot,
                        void* workspace, cudaStream_t stream);

}  // namespace sdtw::kernels
