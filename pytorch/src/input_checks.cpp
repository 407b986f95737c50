// check_inputs=true: the data checks that the operators leave out, because they read the data on
// the host (a synchronisation on CUDA). By default a non-finite value propagates to its pair's
// result, as in torch's own losses; with check_inputs a non-finite value inside the lengths, or a
// length on the device out of range or out of the band, is an error naming the argument, the
// batch index and the position. Run after the operator, which has named bad shapes and devices.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "checks.hpp"
#include "ops_internal.hpp"

namespace sdtw::ops::detail {
namespace {

// Lengths as host int64 values, one per pair; range-checked only for lengths on the device (the
// operator has checked those on the CPU).
std::vector<int64_t> host_lengths(const c10::optional<at::Tensor>& lengths, const char* name, int64_t full) {
  if (!lengths || !lengths->defined()) return {};
  const at::Tensor host = lengths->to(at::kCPU, at::kLong).contiguous().reshape({-1});
  const std::vector<int64_t> v(host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel());
  if (!lengths->is_cpu())
    for (std::size_t b = 0; b < v.size(); ++b)
      TORCH_CHECK_VALUE(v[b] >= 1 && v[b] <= full, name, "[", b, "] = ", v[b], " is out of range [1, ", full, "]");
  return v;
}

bool on_device(const c10::optional<at::Tensor>& lengths) {
  return lengths && lengths->defined() && !lengths->is_cpu();
}

// Lengths on the device are not read by the operator: every pair must keep a path in the constraint.
void check_device_lengths(const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                          int64_t n, int64_t m, const Constraint& constraint) {
  if (!on_device(x_lengths) && !on_device(y_lengths)) return;
  const std::vector<int64_t> xs = host_lengths(x_lengths, "x_lengths", n), ys = host_lengths(y_lengths, "y_lengths", m);
  if (constraint.kind == ConstraintKind::none) return;
  const std::size_t pairs = std::max(xs.size(), ys.size());
  for (std::size_t b = 0; b < pairs; ++b) {
    const int64_t xl = xs.empty() ? n : xs[b], yl = ys.empty() ? m : ys[b];
    if (constraint.kind == ConstraintKind::band) {
      const int64_t gap = std::llabs(xl - yl);
      TORCH_CHECK_VALUE(gap <= constraint.radius, "bandwidth ", constraint.radius, " is narrower than |x_lengths[", b,
                        "] - y_lengths[", b, "]| = ", gap, ": no alignment fits the band");
    } else {
      TORCH_CHECK_VALUE(kernels::has_path(constraint, static_cast<int>(xl), static_cast<int>(yl)), describe(constraint),
                        " leaves no alignment path for x_lengths[", b, "] = ", xl, ", y_lengths[", b, "] = ", yl);
    }
  }
}

// The first non-finite value of t (B, R, C) or (R, C) inside the lengths of its rows (and, for
// a cost tensor, of its columns); `axes` names a row and a column.
void check_finite(const at::Tensor& t, const char* name, const char* const axes[2],
                  const c10::optional<at::Tensor>& row_lengths, const c10::optional<at::Tensor>& column_lengths) {
  if (!at::isFloatingType(t.scalar_type())) return;
  const bool batched = t.dim() == 3;
  at::Tensor bad = at::isfinite(t.detach()).logical_not();
  if (!batched) bad = bad.unsqueeze(0);
  const auto inside = [&](const at::Tensor& lengths, int64_t steps) {
    const at::Tensor index = at::arange(steps, bad.options().dtype(at::kLong));
    return index.unsqueeze(0) < lengths.to(bad.device()).reshape({-1, 1});  // (B, steps)
  };
  if (row_lengths && row_lengths->defined()) bad = bad & inside(*row_lengths, bad.size(1)).unsqueeze(2);
  if (column_lengths && column_lengths->defined()) bad = bad & inside(*column_lengths, bad.size(2)).unsqueeze(1);
  const at::Tensor where = bad.nonzero();
  if (where.size(0) == 0) return;
  const at::Tensor first = where[0].cpu();
  const int64_t b = first[0].item<int64_t>(), i = first[1].item<int64_t>(), j = first[2].item<int64_t>();
  const double value = (batched ? t[b][i][j] : t[i][j]).item<double>();
  TORCH_CHECK_VALUE(false, name, " has a non-finite value (", value, ") at ",
                    batched ? "batch index " + std::to_string(b) + ", " : std::string(), axes[0], " ", i, ", ",
                    axes[1], " ", j, " (check_inputs=True)");
}

const char* const kSeries[2] = {"time step", "feature"};
const char* const kCost[2] = {"row", "column"};

}  // namespace

void check_finite_series(const at::Tensor& x, const at::Tensor& y, const c10::optional<at::Tensor>& x_lengths,
                         const c10::optional<at::Tensor>& y_lengths, int64_t bandwidth,
                         int64_t sakoe_chiba_radius, double itakura_max_slope) {
  check_device_lengths(x_lengths, y_lengths, x.size(-2), y.size(-2),
                       operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope));
  check_finite(x, "x", kSeries, x_lengths, c10::nullopt);
  check_finite(y, "y", kSeries, y_lengths, c10::nullopt);
}

void check_finite_cost(const at::Tensor& D, const c10::optional<at::Tensor>& x_lengths,
                       const c10::optional<at::Tensor>& y_lengths, int64_t bandwidth, int64_t sakoe_chiba_radius,
                       double itakura_max_slope) {
  check_device_lengths(x_lengths, y_lengths, D.size(-2), D.size(-1),
                       operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope));
  check_finite(D, "D", kCost, x_lengths, y_lengths);
}

}  // namespace sdtw::ops::detail
