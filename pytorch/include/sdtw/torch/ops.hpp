#pragma once
// The low-level sdtw operators (torch.ops.sdtw.* in Python), called through the dispatcher so
// that CPU and CUDA tensors reach their implementations. No autograd here: the forward returns the
// soft-DTW values and an opaque `state` that the backward of the same inputs consumes.
//
//   cost_forward(D, gamma, bandwidth, x_lengths, y_lengths) -> (values, state)
//   cost_backward(dvalues, D, state, gamma, bandwidth, x_lengths, y_lengths) -> dvalues * d values / d D
//   sqeuclidean_forward(x, y, gamma, bandwidth, x_lengths, y_lengths) -> (values, state)
//   sqeuclidean_backward(dvalues, x, y, state, gamma, bandwidth, x_lengths, y_lengths) -> (grad_x, grad_y)
//   fused_forward(x, y, dist, gamma, bandwidth, x_lengths, y_lengths, ...) -> (values, state)
//   fused_backward(dvalues, x, y, dist, state, gamma, bandwidth, x_lengths, y_lengths) -> (grad_x, grad_y)
//   fused_values(x, y, dist, gamma, bandwidth, x_lengths, y_lengths) -> values (no state kept)
//     the fused mode of a named cost ("l1", "euclidean", "cosine", "negative_dot"; CUDA only)
//   alignment_backward(G, D, gamma, bandwidth, x_lengths, y_lengths) -> H G, H the Hessian of soft-DTW
//     in D (the backward of E(D); float64 on CPU and CUDA)
//   pairwise_cost(x, y, dist) -> D   (a differentiable composite of torch ops)
//   soft_dtw_cost(D, gamma, bandwidth, x_lengths, y_lengths) -> values            (differentiable in D)
//   soft_dtw_sqeuclidean(x, y, gamma, bandwidth, x_lengths, y_lengths) -> values  (differentiable in x, y)
//   soft_dtw_loss, soft_dtw_cost_loss, alignment, alignment_from_cost: the front's operators, with
//   every option (below)
//
// Shapes: D is (B, N, M) or (N, M); x is (B, N, d) or (N, d), y is (B, M, d) or (M, d); values
// are (B,) or (). bandwidth -1 keeps every cell, k >= 0 keeps |i - j| <= k. sakoe_chiba_radius
// r >= 0 keeps tslearn's Sakoe-Chiba band (along the shorter series' index k, the longer one's
// k - r .. k + |N - M| + r, from each pair's lengths), itakura_max_slope s > 0 tslearn's Itakura
// parallelogram; -1 and 0 mean absent, and at most one of the three is given. x_lengths, y_lengths:
// optional integer tensors of shape (B,), each in [1, N] (resp. [1, M]); padding is ignored.
// dtypes: float32/float64 (and float16/bfloat16, computed in float32); values come back in float32,
// or float64 for float64 inputs; gradients in the dtype of the input they belong to.
// The state is a float64 (B, N, M) tensor on CPU and the kernels' uint8 workspace on CUDA, where
// the backward overwrites it: call the backward of one forward once (the autograd layer,
// autograd.cpp, recomputes the forward for a second backward, e.g. retain_graph=True).
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <tuple>

namespace sdtw::ops {

std::tuple<at::Tensor, at::Tensor> cost_forward(const at::Tensor& D, double gamma, int64_t bandwidth = -1,
                                                const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
at::Tensor cost_backward(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                         int64_t bandwidth = -1, const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                         const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                       int64_t bandwidth = -1,
                                                       const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                       const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward(const at::Tensor& dvalues, const at::Tensor& x,
                                                        const at::Tensor& y, const at::Tensor& state, double gamma,
                                                        int64_t bandwidth = -1,
                                                        const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                        const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
std::tuple<at::Tensor, at::Tensor> fused_forward(const at::Tensor& x, const at::Tensor& y, const std::string& dist,
                                                 double gamma, int64_t bandwidth = -1,
                                                 const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                 const c10::optional<at::Tensor>& y_lengths = c10::nullopt, int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
at::Tensor fused_values(const at::Tensor& x, const at::Tensor& y, const std::string& dist, double gamma,
                        int64_t bandwidth = -1, const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                        const c10::optional<at::Tensor>& y_lengths = c10::nullopt, int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
std::tuple<at::Tensor, at::Tensor> fused_backward(const at::Tensor& dvalues, const at::Tensor& x, const at::Tensor& y,
                                                  const std::string& dist, const at::Tensor& state, double gamma,
                                                  int64_t bandwidth = -1,
                                                  const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                  const c10::optional<at::Tensor>& y_lengths = c10::nullopt, int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
at::Tensor alignment_backward(const at::Tensor& G, const at::Tensor& D, double gamma, int64_t bandwidth = -1,
                              const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                              const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);

// The loss operators: soft-DTW values with their autograd in C++ (the state lives on the autograd
// node, freed on return when no input requires a gradient). The backward is itself differentiable
// (create_graph=True: Hessian-vector products, sdtw::alignment_backward); on CUDA the cost loss
// needs a leaf D for it (a computed D is freed after the forward).
at::Tensor soft_dtw_cost(const at::Tensor& D, double gamma, int64_t bandwidth = -1,
                         const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                         const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);
at::Tensor soft_dtw_sqeuclidean(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth = -1,
                                const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
    int64_t sakoe_chiba_radius = -1, double itakura_max_slope = 0.0);

// Pairwise costs (B, N, M) between the rows of x and y, differentiable: "sqeuclidean" (aliases
// "sq_euclidean", "squared_euclidean"), "euclidean", "cosine" (1 - cosine similarity), "l1"
// (aliases "manhattan", "cityblock"), "negative_dot" (-<x_i, y_j>). Computed in float32 for float16/bfloat16 inputs, autocast or not.
at::Tensor pairwise_cost(const at::Tensor& x, const at::Tensor& y, const std::string& dist = "sqeuclidean");

// The loss with every option of sdtw::nn::SoftDtwOptions (and of sdtw_torch.SoftDTW): validated and
// named here; bandwidth absent, <= 0 or >= 2^62: no band, else its floor. global_constraint
// "sakoe_chiba" or "itakura" with tslearn's sakoe_chiba_radius (default 1) and itakura_max_slope
// (default 2); either value alone implies its constraint, as in tslearn; not with bandwidth.
// memory: "auto" (default), "full" or "checkpoint", the CUDA backward's state (sdtw::nn::SoftDtwOptions::memory).
// Differentiable in x and y (in D); x and
// y past their lengths are read as zero, so non-finite padding leaves the gradient finite.
// check_inputs: the first non-finite value inside the lengths (and lengths on the device out of
// range or out of the band) is a ValueError naming it, at the cost of a host synchronisation.
// warp (finite): Parallel Tacotron 2's penalty added to every vertical and horizontal move, computed
// exactly as soft-DTW of the cost + 2 warp minus warp (n + m) per pair. subsequence: free start and
// end along y (R(-1, j) = 0, value the softmin over the pair's last row), a composite of torch ops; no
// band, constraint or normalize with it. Either one makes fused default to false (true is an error).
at::Tensor soft_dtw_loss(const at::Tensor& x, const at::Tensor& y,
                         const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                         const c10::optional<at::Tensor>& y_lengths = c10::nullopt, double gamma = 1.0,
                         c10::optional<double> bandwidth = c10::nullopt, bool normalize = false,
                         const std::string& dist = "sqeuclidean", c10::optional<bool> fused = c10::nullopt,
                         const std::string& reduction = "none", bool check_inputs = false,
    const c10::optional<std::string>& global_constraint = c10::nullopt,
    c10::optional<int64_t> sakoe_chiba_radius = c10::nullopt, c10::optional<double> itakura_max_slope = c10::nullopt,
    double warp = 0.0, bool subsequence = false, const std::string& memory = "auto");
// The loss of a cost tensor D; with the self-costs D_xx (N, N) and D_yy (M, M), the divergence
// sdtw(D) - (sdtw(D_xx) + sdtw(D_yy)) / 2.
at::Tensor soft_dtw_cost_loss(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                              const c10::optional<at::Tensor>& y_lengths = c10::nullopt, double gamma = 1.0,
                              c10::optional<double> bandwidth = c10::nullopt, const std::string& reduction = "none",
                              const c10::optional<at::Tensor>& D_xx = c10::nullopt,
                              const c10::optional<at::Tensor>& D_yy = c10::nullopt, bool check_inputs = false,
    const c10::optional<std::string>& global_constraint = c10::nullopt,
    c10::optional<int64_t> sakoe_chiba_radius = c10::nullopt, c10::optional<double> itakura_max_slope = c10::nullopt,
    double warp = 0.0, bool subsequence = false, const std::string& memory = "auto");
// The expected alignment E = d sdtw / d D, of x and y for dist or of D; differentiable.
at::Tensor alignment(const at::Tensor& x, const at::Tensor& y,
                     const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                     const c10::optional<at::Tensor>& y_lengths = c10::nullopt, double gamma = 1.0,
                     c10::optional<double> bandwidth = c10::nullopt, const std::string& dist = "sqeuclidean",
                     bool check_inputs = false,
    const c10::optional<std::string>& global_constraint = c10::nullopt,
    c10::optional<int64_t> sakoe_chiba_radius = c10::nullopt, c10::optional<double> itakura_max_slope = c10::nullopt);
at::Tensor alignment_from_cost(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                               const c10::optional<at::Tensor>& y_lengths = c10::nullopt, double gamma = 1.0,
                               c10::optional<double> bandwidth = c10::nullopt, bool check_inputs = false,
    const c10::optional<std::string>& global_constraint = c10::nullopt,
    c10::optional<int64_t> sakoe_chiba_radius = c10::nullopt, c10::optional<double> itakura_max_slope = c10::nullopt);

// Where the subsequence alignment of x (or D's rows) in y ends: the end's weights (B, M) (or (M,)),
// d value / d R over each pair's last row (0 past its length; one-hot on the first optimal column at
// gamma = 0; NaN where no path is finite), and the expected end column sum_j j end_j (B,), 0-based.
// Differentiable, a composite of torch ops.
std::tuple<at::Tensor, at::Tensor> subsequence_end(const at::Tensor& x, const at::Tensor& y,
                                                   const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                   const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
                                                   double gamma = 1.0, const std::string& dist = "sqeuclidean",
                                                   double warp = 0.0);
std::tuple<at::Tensor, at::Tensor> subsequence_end_from_cost(const at::Tensor& D,
                                                             const c10::optional<at::Tensor>& x_lengths = c10::nullopt,
                                                             const c10::optional<at::Tensor>& y_lengths = c10::nullopt,
                                                             double gamma = 1.0, double warp = 0.0);

// Whether this build has the CUDA implementations.
bool built_with_cuda();

}  // namespace sdtw::ops
