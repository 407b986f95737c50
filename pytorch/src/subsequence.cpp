// Subsequence soft-DTW (sdtw/reference/variants.hpp's definition, with its warp penalty) as a
// composite of torch ops: the recursion runs along the anti-diagonals, each one a (B, N) tensor
// indexed by the row i, so autograd, CPU and CUDA come from the ops, with no host synchronisation.
// It is O(N + M) small ops per call: the fused kernels have no free start, and this is the
// direct, differentiable form of the definition.
#include <ATen/ATen.h>

#include <limits>
#include <tuple>
#include <vector>

#include "checks.hpp"
#include "ops_internal.hpp"

namespace sdtw::ops::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// softmin_gamma over `dim`, computed around the minimum (detached: the value does not depend on
// it). Where every argument is +inf the result is +inf with a zero (not NaN) gradient. At gamma = 0
// the hard min, whose gradient goes to the first minimum (torch.min's documented choice).
at::Tensor softmin(const at::Tensor& t, int64_t dim, double gamma) {
  if (gamma == 0.0) return std::get<0>(t.min(dim));
  const at::Tensor m = std::get<0>(t.min(dim, /*keepdim=*/true)).detach();
  const at::Tensor none = m == kInf;
  const at::Tensor shift = m.masked_fill(none, 0.0);
  const at::Tensor s = ((shift - t) / gamma).exp().sum(dim, /*keepdim=*/true).masked_fill(none, 1.0);
  return (shift - gamma * s.log()).masked_fill(none, kInf).squeeze(dim);
}

// D (B, N, M) as its anti-diagonals (B, N + M - 1, N): entry (d, i) is cell (i, d - i), +inf off the
// matrix (a forbidden cell, so the recursion needs no bounds of its own).
at::Tensor diagonals(const at::Tensor& D) {
  const int64_t B = D.size(0), N = D.size(1), M = D.size(2), K = N + M - 1;
  const auto index = D.options().dtype(at::kLong);
  const at::Tensor i = at::arange(N, index).unsqueeze(0), j = at::arange(K, index).unsqueeze(1) - i;
  const at::Tensor off = (j < 0) | (j >= M);
  const at::Tensor flat = (i * M + j.clamp(0, M - 1)).reshape({-1});
  return D.reshape({B, N * M}).index_select(1, flat).reshape({B, K, N}).masked_fill(off, kInf);
}

// R of every cell, as diagonals (B, N + M - 1, N) like `diagonals`. Row 0's cells start a path from
// R(-1, j - 1) = 0 by the diagonal; the vertical move out of row -1 is barred.
at::Tensor subsequence_R(const at::Tensor& D, double gamma, double warp) {
  const int64_t B = D.size(0), N = D.size(1), K = N + D.size(2) - 1;
  const at::Tensor cost = diagonals(D);
  const at::Tensor start = at::zeros({B, 1}, D.options()), barred = at::full({B, 1}, kInf, D.options());
  at::Tensor before = at::full({B, N}, kInf, D.options()), last = before;  // diagonals d - 2 and d - 1
  std::vector<at::Tensor> R;
  R.reserve(K);
  for (int64_t d = 0; d < K; ++d) {
    const at::Tensor diag = at::cat({start, before.narrow(1, 0, N - 1)}, 1);
    const at::Tensor up = at::cat({barred, last.narrow(1, 0, N - 1)}, 1) + warp;
    const at::Tensor left = last + warp;
    before = last;
    last = cost.select(1, d) + softmin(at::stack({diag, up, left}, 2), 2, gamma);
    R.push_back(last);
  }
  return at::stack(R, 1);
}

// Each pair's last row R(n_b - 1, j), j < M, from the diagonals; +inf past the pair's m_b. Lengths
// on the device are not checked on the host (check_inputs does): clamped, a bad one cannot index
// out of R.
at::Tensor last_row(const at::Tensor& R, const Pair& p) {
  const auto index = R.options().dtype(at::kLong);
  const at::Tensor row =
      (p.x_len ? p.x_len->to(index).clamp(1, p.n) : at::full({p.batch}, p.n, index)).sub(1).unsqueeze(1);
  const at::Tensor j = at::arange(p.m, index).unsqueeze(0);
  const at::Tensor r = R.reshape({p.batch, -1}).gather(1, (row + j) * p.n + row);
  return p.y_len ? r.masked_fill(j >= p.y_len->to(index).unsqueeze(1), kInf) : r;
}

// The cost in its compute dtype with each pair's padding read as 0: the recursion computes every
// cell, and a NaN there would turn the zero gradient flowing through padding into NaN.
at::Tensor padding_cleared(const Pair& p) {
  at::Tensor D = p.a.to(compute_dtype(p.a.scalar_type()));
  if (!p.x_len && !p.y_len) return D;
  const auto index = D.options().dtype(at::kLong);
  at::Tensor outside = at::zeros({p.batch, p.n, p.m}, D.options().dtype(at::kBool));
  if (p.x_len) outside = outside | (at::arange(p.n, index).view({1, -1, 1}) >= p.x_len->view({-1, 1, 1}));
  if (p.y_len) outside = outside | (at::arange(p.m, index).view({1, 1, -1}) >= p.y_len->view({-1, 1, 1}));
  return D.masked_fill(outside, 0.0);
}

struct SubsequenceEnds {
  at::Tensor values, row;  // (B,), (B, M)
  Pair pair;
};

SubsequenceEnds subsequence_ends(const at::Tensor& D, double gamma, double warp,
                                 const c10::optional<at::Tensor>& x_lengths,
                                 const c10::optional<at::Tensor>& y_lengths) {
  const Pair p = check_cost(D, gamma, operator_constraint(-1, -1, 0.0), x_lengths, y_lengths, Values::check);
  const at::Tensor row = last_row(subsequence_R(padding_cleared(p), gamma, warp), p);
  return {softmin(row, 1, gamma), row, p};
}

}  // namespace

at::Tensor subsequence_soft_dtw(const at::Tensor& D, double gamma, double warp,
                                const c10::optional<at::Tensor>& x_lengths,
                                const c10::optional<at::Tensor>& y_lengths) {
  const SubsequenceEnds e = subsequence_ends(D, gamma, warp, x_lengths, y_lengths);
  return unbatch(e.values, e.pair);
}

std::tuple<at::Tensor, at::Tensor> subsequence_end_of_cost(const at::Tensor& D, double gamma, double warp,
                                                           const c10::optional<at::Tensor>& x_lengths,
                                                           const c10::optional<at::Tensor>& y_lengths) {
  const SubsequenceEnds e = subsequence_ends(D, gamma, warp, x_lengths, y_lengths);
  const at::Tensor value = e.values.unsqueeze(1);
  // d value / d R(n_b - 1, j); NaN for a pair with no finite path, as in the reference.
  const at::Tensor end =
      gamma > 0.0 ? ((value - e.row) / gamma).exp()
                  : at::zeros_like(e.row)
                        .scatter(1, e.row.argmin(1, /*keepdim=*/true), 1.0)
                        .masked_fill(value == kInf, std::numeric_limits<double>::quiet_NaN());
  const at::Tensor expected = (end * at::arange(e.pair.m, end.options())).sum(1);
  return {unbatch(end, e.pair), unbatch(expected, e.pair)};
}

}  // namespace sdtw::ops::detail
