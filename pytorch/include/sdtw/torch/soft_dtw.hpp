#pragma once
// Soft-DTW for LibTorch users: functions with autograd and a torch::nn module.
//
//   sdtw::nn::SoftDTW loss(sdtw::nn::SoftDtwOptions{.gamma = 0.1});
//   at::Tensor values = loss(x, y);            // x (B, N, d), y (B, M, d) -> (B,)
//   values.mean().backward();
//
// The same keywords and meanings as the Python module sdtw_torch.SoftDTW: both hand their options to
// the operator sdtw::soft_dtw_loss (sdtw/torch/ops.hpp), which validates them and names the bad one.
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

namespace sdtw::nn {

struct SoftDtwOptions {
  double gamma = 1.0;  // >= 0; smaller is closer to DTW, 0 is exact DTW (gradient: one optimal path)
  // Sakoe-Chiba band |i - j| <= bandwidth. Absent: no band (<= 0 too, as in softdtw-cuda-torch and
  // pytorch-softdtw-cuda). Must be >= |N - M| (per pair when lengths are given).
  std::optional<int64_t> bandwidth;
  // tslearn's global constraints, from each pair's lengths: "sakoe_chiba" (along the shorter
  // series' index k, the longer one's k - radius .. k + |N - M| + radius; radius 0 with N == M is
  // the diagonal alone) or "itakura" (the parallelogram of slopes itakura_max_slope and its
  // inverse). A radius or slope alone implies its constraint, as in tslearn; not with bandwidth.
  std::optional<std::string> global_constraint;
  std::optional<int64_t> sakoe_chiba_radius;  // default 1
  std::optional<double> itakura_max_slope;    // default 2
  // The divergence sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2 (three separate calls: N != M is fine).
  bool normalize = false;
  std::string dist = "sqeuclidean";  // see sdtw::ops::pairwise_cost for the others
  // Absent or true: fused, no N x M cost tensor (on CUDA every named dist; on the CPU "sqeuclidean", the
  // others computing their cost tensor, as false does). False: the cost-tensor path.
  // true with another dist is an error.
  std::optional<bool> fused;
  std::string reduction = "none";  // "none": (B,) (or () unbatched); "mean", "sum": over the batch
  // Parallel Tacotron 2's warp penalty (finite), added to every vertical and horizontal move; exact
  // through soft-DTW of the cost + 2 warp minus warp (N + M). Not fused (fused true is an error).
  double warp = 0.0;
  // Subsequence soft-DTW: x aligned to any stretch of y (free start and end along y), the value the
  // softmin over the last row. A composite of torch ops; no band, constraint, normalize nor fused.
  bool subsequence = false;
  // false: a non-finite value in pair b gives pair b a non-finite loss and gradient, as torch's own
  // losses do, with no extra work on the GPU. true: an error naming the argument, batch index and
  // position of the first non-finite value (and lengths on the device checked), at the cost of a
  // host synchronisation.
  bool check_inputs = false;
  // The CUDA backward's memory: "full" keeps 4.25 bytes per DP cell (the fastest); "checkpoint"
  // keeps R's float64 rows every S rows and one band of S rows' state, and recomputes each band's
  // forward once (memory about B m (8 n / S + 4.25 S) bytes; dist "sqeuclidean" fused, or a cost
  // tensor; bandwidth but no global_constraint; no double backward). "auto": full when it fits in
  // 90 % of the device's free memory, else checkpoint with the tallest band that fits; an error
  // naming both modes' bytes when neither does. The CPU keeps its own path in every mode.
  std::string memory = "auto";
};

// Soft-DTW between x (B, N, d) and y (B, M, d) (or unbatched (N, d), (M, d)), differentiable in x and y.
at::Tensor soft_dtw(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& options = {},
                    const std::optional<at::Tensor>& x_lengths = std::nullopt,
                    const std::optional<at::Tensor>& y_lengths = std::nullopt);

// Soft-DTW of a precomputed cost tensor D (B, N, M) (or (N, M)), differentiable in D. Uses gamma,
// bandwidth, the constraint, reduction, warp and subsequence; normalize must be false; dist and fused do
// not apply.
at::Tensor soft_dtw_cost(const at::Tensor& D, const SoftDtwOptions& options = {},
                         const std::optional<at::Tensor>& x_lengths = std::nullopt,
                         const std::optional<at::Tensor>& y_lengths = std::nullopt);

// The expected alignment E = d sdtw(x, y) / d D (B, N, M), entries in [0, 1], zero in padding and
// outside the band; for options.dist. Differentiable on CPU and CUDA tensors (its backward is the
// Hessian-vector product alignment_backward). At gamma = 0 it is the hard path: the 0/1 indicator of
// one optimal DTW path, whose derivative in the cost is 0.
at::Tensor alignment(const at::Tensor& x, const at::Tensor& y, const SoftDtwOptions& options = {},
                     const std::optional<at::Tensor>& x_lengths = std::nullopt,
                     const std::optional<at::Tensor>& y_lengths = std::nullopt);

// The same for a precomputed cost tensor D.
at::Tensor alignment_from_cost(const at::Tensor& D, const SoftDtwOptions& options = {},
                               const std::optional<at::Tensor>& x_lengths = std::nullopt,
                               const std::optional<at::Tensor>& y_lengths = std::nullopt);

// Where the subsequence alignment of x in y ends (options' gamma, dist and warp): the end's weights
// (B, M), d value / d R over each pair's last row (one-hot on the first optimal column at gamma = 0),
// and the expected end column (B,), 0-based. Differentiable.
std::tuple<at::Tensor, at::Tensor> subsequence_end(const at::Tensor& x, const at::Tensor& y,
                                                   const SoftDtwOptions& options = {},
                                                   const std::optional<at::Tensor>& x_lengths = std::nullopt,
                                                   const std::optional<at::Tensor>& y_lengths = std::nullopt);

class SoftDTWImpl : public torch::nn::Module {
 public:
  explicit SoftDTWImpl(SoftDtwOptions options = {});
  at::Tensor forward(const at::Tensor& x, const at::Tensor& y,
                     const std::optional<at::Tensor>& x_lengths = std::nullopt,
                     const std::optional<at::Tensor>& y_lengths = std::nullopt);
  void pretty_print(std::ostream& stream) const override;

  SoftDtwOptions options;
};
TORCH_MODULE(SoftDTW);

}  // namespace sdtw::nn
