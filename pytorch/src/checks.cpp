#include "checks.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace sdtw::ops::detail {
namespace {

struct HostLengths {
  at::Tensor x, y;  // int64 on the CPU, or undefined when absent or on the device
};

c10::optional<at::Tensor> check_lengths(const c10::optional<at::Tensor>& lengths, const char* name, const Pair& p,
                                        int64_t full, at::Tensor& host) {
  if (!lengths.has_value() || !lengths->defined()) return c10::nullopt;
  at::Tensor l = *lengths;
  TORCH_CHECK_TYPE(at::isIntegralType(l.scalar_type(), /*includeBool=*/false), name,
                   " must be an integer tensor (got ", l.scalar_type(), ")");
  if (p.unbatched) {
    TORCH_CHECK_VALUE(l.numel() == 1, name, " must hold one length for unbatched inputs (got shape ", l.sizes(),
                      ")");
    l = l.reshape({1});
  } else {
    TORCH_CHECK_VALUE(l.dim() == 1 && l.size(0) == p.batch, name, " must have shape (B,) = (", p.batch,
                      ",) (got shape ", l.sizes(), ")");
  }
  const at::Device device = p.a.device();
  TORCH_CHECK(l.is_cpu() || l.device() == device, name, " must be on the CPU or on the device of the inputs (",
              device, "), but it is on ", l.device());
  if (l.is_cpu() || device.is_cpu()) {
    host = l.to(at::kCPU, at::kLong).contiguous();
    const int64_t* v = host.data_ptr<int64_t>();
    for (int64_t b = 0; b < host.numel(); ++b)
      TORCH_CHECK_VALUE(v[b] >= 1 && v[b] <= full, name, "[", b, "] = ", v[b], " is out of range [1, ", full, "]");
  }
  return l.to(device, at::kLong).contiguous();
}

// A problem whose memory floor on the CPU exceeds the machine's memory is refused before anything
// is allocated, naming the sizes instead of the allocator's one request. `what` says what the floor counts.
void check_cpu_memory(const Pair& p, double floor, const char* what) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  TORCH_CHECK(floor <= memory, "soft-DTW on the CPU of B = ", p.batch, " pairs with N = ", p.n, ", M = ", p.m,
              " needs at least ", floor / GiB, " GiB (", what, "), more than this machine's ", memory / GiB,
              " GiB of memory: use fewer pairs or shorter series (nothing was allocated)");
}

double cells(const Pair& p) { return static_cast<double>(p.batch) * static_cast<double>(p.n) * static_cast<double>(p.m); }

// Whether a pair of n x m cells keeps a path under the constraint, else ValueError naming it.
void check_path(const Constraint& c, int64_t n, int64_t m, const std::string& which) {
  if (c.kind == ConstraintKind::band) {
    TORCH_CHECK_VALUE(std::llabs(n - m) <= c.radius, "bandwidth ", c.radius, " leaves no alignment path for ", which,
                      ": it must be >= |N - M| = ", std::llabs(n - m));
    return;
  }
  TORCH_CHECK_VALUE(c.kind == ConstraintKind::none || kernels::has_path(c, static_cast<int>(n), static_cast<int>(m)),
                    describe(c), " leaves no alignment path for ", which);
}

void check_common(Pair& p, double gamma, const Constraint& constraint, const c10::optional<at::Tensor>& x_lengths,
                  const c10::optional<at::Tensor>& y_lengths, Values values) {
  check_gamma(gamma);
  // The forward holds the float64 cost, E and the reference's E, and one pair's D, R and E.
  if (values == Values::check && p.a.is_cpu())
    check_cpu_memory(p, (3.0 * cells(p) + (p.batch > 0 ? 3.0 * cells(p) / static_cast<double>(p.batch) : 0.0)) *
                            sizeof(double),
                     "three float64 (B, N, M) tensors and one pair's working state");
  HostLengths host;
  p.x_len = check_lengths(x_lengths, "x_lengths", p, p.n, host.x);
  p.y_len = check_lengths(y_lengths, "y_lengths", p, p.m, host.y);

  // Lengths on the device are not read (that would sync): the kernels clamp them to [1, N] and a
  // pair whose lengths leave no path in the constraint gets an infinite value. check_inputs=True
  // checks them on the host (input_checks.cpp).
  const bool device_lengths = (p.x_len && !host.x.defined()) || (p.y_len && !host.y.defined());
  if (constraint.kind == ConstraintKind::none) return;
  if (!p.x_len && !p.y_len) {
    check_path(constraint, p.n, p.m, "N = " + std::to_string(p.n) + ", M = " + std::to_string(p.m));
  } else if (!device_lengths && values == Values::check) {
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t n = p.x_len ? host.x.data_ptr<int64_t>()[b] : p.n;
      const int64_t m = p.y_len ? host.y.data_ptr<int64_t>()[b] : p.m;
      check_path(constraint, n, m,
                 "pair " + std::to_string(b) + " (x_lengths = " + std::to_string(n) + ", y_lengths = " +
                     std::to_string(m) + ")");
    }
  }
}

void check_floating(const at::Tensor& t, const char* name) {
  // D reaches the operators from soft_dtw_cost or from a callable dist: name both.
  const char* whose = std::string(name) == "D" ? " (the cost: soft_dtw_cost's D, or what a callable dist returned)" : "";
  TORCH_CHECK_TYPE(at::isFloatingType(t.scalar_type()), name, whose, " must be a floating-point tensor (got ",
                   t.scalar_type(), ")");
}

}  // namespace

Constraint operator_constraint(int64_t bandwidth, int64_t sakoe_chiba_radius, double itakura_max_slope) {
  TORCH_CHECK_VALUE(bandwidth >= -1, "bandwidth must be >= 0, or -1 for no band (got ", bandwidth, ")");
  TORCH_CHECK_VALUE(sakoe_chiba_radius >= -1, "sakoe_chiba_radius must be >= 0, or -1 for none (got ",
                    sakoe_chiba_radius, ")");
  TORCH_CHECK_VALUE(itakura_max_slope == 0.0 || (itakura_max_slope > 0.0 && std::isfinite(itakura_max_slope)),
                    "itakura_max_slope must be finite and > 0, or 0 for none (got ", itakura_max_slope, ")");
  const int given = (bandwidth >= 0) + (sakoe_chiba_radius >= 0) + (itakura_max_slope > 0.0);
  TORCH_CHECK_VALUE(given <= 1, "bandwidth (", bandwidth, "), sakoe_chiba_radius (", sakoe_chiba_radius,
                    ") and itakura_max_slope (", itakura_max_slope, ") are three constraints: give at most one");
  if (bandwidth >= 0) return {ConstraintKind::band, bandwidth};
  if (sakoe_chiba_radius >= 0) return {ConstraintKind::sakoe_chiba, sakoe_chiba_radius};
  if (itakura_max_slope > 0.0) return {ConstraintKind::itakura, 0, itakura_max_slope};
  return {};
}

std::string describe(const Constraint& c) {
  std::ostringstream s;
  switch (c.kind) {
    case ConstraintKind::band: s << "bandwidth " << c.radius; break;
    case ConstraintKind::sakoe_chiba: s << "global_constraint='sakoe_chiba' with sakoe_chiba_radius=" << c.radius; break;
    case ConstraintKind::itakura: s << "global_constraint='itakura' with itakura_max_slope=" << c.max_slope; break;
    default: s << "no constraint";
  }
  return s.str();
}

void check_gamma(double gamma) {
  // gamma = 0 is exact DTW (the hard min), whose alignment is one optimal path.
  TORCH_CHECK_VALUE(std::isfinite(gamma) && gamma >= 0.0, "gamma must be finite and >= 0 (got ", gamma, ")");
}

at::ScalarType compute_dtype(at::ScalarType input) {
  return input == at::kDouble ? at::kDouble : at::kFloat;
}

at::Tensor unbatch(const at::Tensor& t, const Pair& p) { return p.unbatched ? t.squeeze(0) : t; }

Pair check_xy(const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK_VALUE(x.defined() && (x.dim() == 2 || x.dim() == 3), "x must have shape (B, N, D) or (N, D) (got ",
                    x.defined() ? x.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK_VALUE(y.defined() && (y.dim() == 2 || y.dim() == 3), "y must have shape (B, M, D) or (M, D) (got ",
                    y.defined() ? y.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK_VALUE(x.dim() == y.dim(), "x and y must both be batched (3-D) or both unbatched (2-D) (got x: ",
                    x.sizes(), ", y: ", y.sizes(), ")");
  check_floating(x, "x");
  check_floating(y, "y");
  TORCH_CHECK_TYPE(x.scalar_type() == y.scalar_type(), "x and y must have the same dtype (x: ", x.scalar_type(),
                   ", y: ", y.scalar_type(), ")");
  TORCH_CHECK(x.device() == y.device(), "x and y must be on the same device (x: ", x.device(), ", y: ", y.device(),
              ")");
  Pair p;
  p.unbatched = x.dim() == 2;
  p.a = p.unbatched ? x.unsqueeze(0) : x;
  p.b = p.unbatched ? y.unsqueeze(0) : y;
  TORCH_CHECK_VALUE(p.a.size(0) == p.b.size(0), "x and y must have the same batch size (x: ", p.a.size(0),
                    ", y: ", p.b.size(0), ")");
  TORCH_CHECK_VALUE(p.a.size(2) == p.b.size(2), "x and y must have the same number of features (x: ", p.a.size(2),
                    ", y: ", p.b.size(2), ")");
  p.batch = p.a.size(0);
  p.n = p.a.size(1);
  p.m = p.b.size(1);
  p.dim = p.a.size(2);
  TORCH_CHECK_VALUE(p.n >= 1, "x must have at least one time step (got shape ", x.sizes(), ")");
  TORCH_CHECK_VALUE(p.m >= 1, "y must have at least one time step (got shape ", y.sizes(), ")");
  TORCH_CHECK_VALUE(p.dim >= 1, "x and y must have at least one feature (got x: ", x.sizes(), ")");
  if (p.a.is_cpu())
    check_cpu_memory(p, cells(p) * static_cast<double>(at::elementSize(compute_dtype(x.scalar_type()))),
                     "the (B, N, M) cost");
  return p;
}

Pair check_sqeuclidean(const at::Tensor& x, const at::Tensor& y, double gamma, const Constraint& constraint,
                       const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths,
                       Values values) {
  Pair p = check_xy(x, y);
  check_common(p, gamma, constraint, x_lengths, y_lengths, values);
  return p;
}

Pair check_cost(const at::Tensor& D, double gamma, const Constraint& constraint, const c10::optional<at::Tensor>& x_lengths,
                const c10::optional<at::Tensor>& y_lengths, Values values) {
  TORCH_CHECK_VALUE(D.defined() && (D.dim() == 2 || D.dim() == 3), "D must have shape (B, N, M) or (N, M) (got ",
                    D.defined() ? D.sizes() : at::IntArrayRef{}, ")");
  check_floating(D, "D");
  Pair p;
  p.unbatched = D.dim() == 2;
  p.a = p.unbatched ? D.unsqueeze(0) : D;
  p.batch = p.a.size(0);
  p.n = p.a.size(1);
  p.m = p.a.size(2);
  TORCH_CHECK_VALUE(p.n >= 1 && p.m >= 1, "D must have at least one row and one column (got shape ", D.sizes(),
                    ")");
  check_common(p, gamma, constraint, x_lengths, y_lengths, values);
  return p;
}

namespace {

at::Tensor check_set(const at::Tensor& t, const char* name, const char* shape) {
  TORCH_CHECK_VALUE(t.defined() && t.dim() == 3 && t.size(0) >= 1 && t.size(1) >= 1 && t.size(2) >= 1, name,
                    " must have shape ", shape, " with every size >= 1 (got ", t.defined() ? t.sizes() : at::IntArrayRef{},
                    ")");
  check_floating(t, name);
  return t;
}

at::Tensor check_index(const at::Tensor& index, const char* name, const at::Tensor& set, int64_t pairs) {
  TORCH_CHECK_VALUE(index.defined() && index.dim() == 1 && index.size(0) == pairs, name,
                    " must have shape (P,) like the other index (P = ", pairs, ") (got ",
                    index.defined() ? index.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK_TYPE(index.scalar_type() == at::kLong, name, " must be an int64 tensor (got ", index.scalar_type(), ")");
  TORCH_CHECK(index.device() == set.device(), name, " must be on ", set.device(), " (got ", index.device(), ")");
  if (index.is_cpu() && index.numel() > 0) {
    const auto [lo, hi] = at::aminmax(index);
    TORCH_CHECK_INDEX(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < set.size(0), name, " holds an index out of [0, ",
                      set.size(0), ")");
  }
  return index.contiguous();
}

}  // namespace

PairSets check_pair_sets(const at::Tensor& X, const at::Tensor& Y, const at::Tensor& x_index,
                         const at::Tensor& y_index, double gamma, const Constraint& constraint,
                         const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths) {
  PairSets s;
  s.X = check_set(X, "X", "(B1, N, D)");
  s.Y = check_set(Y, "Y", "(B2, M, D)");
  TORCH_CHECK_TYPE(X.scalar_type() == Y.scalar_type(), "X and Y must have the same dtype (X: ", X.scalar_type(),
                   ", Y: ", Y.scalar_type(), ")");
  TORCH_CHECK(X.device() == Y.device(), "X and Y must be on the same device (X: ", X.device(), ", Y: ", Y.device(), ")");
  TORCH_CHECK_VALUE(X.size(2) == Y.size(2), "X and Y must have the same number of features D (X: ", X.size(2),
                    ", Y: ", Y.size(2), ")");
  s.pairs = x_index.defined() && x_index.dim() == 1 ? x_index.size(0) : -1;
  s.x_index = check_index(x_index, "x_index", X, s.pairs);
  s.y_index = check_index(y_index, "y_index", Y, s.pairs);
  // Each set's lengths are checked as those of a batch of that set; the constraint per pair is the
  // caller's to check (the kernels give a pair with no path in the band an infinite value).
  Pair px, py;
  px.a = X;
  px.batch = X.size(0);
  py.a = Y;
  py.batch = Y.size(0);
  at::Tensor host;
  s.x_len = check_lengths(x_lengths, "x_lengths", px, X.size(1), host);
  s.y_len = check_lengths(y_lengths, "y_lengths", py, Y.size(1), host);
  check_gamma(gamma);
  if (!s.x_len && !s.y_len)
    check_path(constraint, X.size(1), Y.size(1), "N = " + std::to_string(X.size(1)) + ", M = " + std::to_string(Y.size(1)));
  return s;
}

at::Tensor check_cost_gradient(const at::Tensor& G, const Pair& p) {
  TORCH_CHECK_VALUE(G.defined() && G.numel() == p.batch * p.n * p.m, "G must have the shape of the cost of x and y (",
                    p.batch, ", ", p.n, ", ", p.m, ") (got ", G.defined() ? G.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK(G.device() == p.a.device(), "G must be on ", p.a.device(), " (got ", G.device(), ")");
  return G.reshape({p.batch, p.n, p.m});
}

at::Tensor check_dvalues(const at::Tensor& dvalues, const Pair& p, at::ScalarType compute) {
  TORCH_CHECK_VALUE(dvalues.defined() && dvalues.numel() == p.batch,
                    "dvalues must hold one number per pair (B = ", p.batch, ") (got shape ",
                    dvalues.defined() ? dvalues.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK(dvalues.device() == p.a.device(), "dvalues must be on ", p.a.device(), " (got ", dvalues.device(),
              ")");
  // Any stride, 0 included (the backward of a sum): the kernels read it in place, no copy.
  return dvalues.reshape({p.batch}).to(compute);
}

at::Tensor cells_of_pairs(const at::Tensor& pairs, const Pair& p) {
  at::Tensor cells = pairs.view({p.batch, 1, 1}).expand({p.batch, p.n, p.m});
  if (p.x_len) cells = cells & (at::arange(p.n, p.x_len->options()).view({1, -1, 1}) < p.x_len->view({-1, 1, 1}));
  if (p.y_len) cells = cells & (at::arange(p.m, p.y_len->options()).view({1, 1, -1}) < p.y_len->view({-1, 1, 1}));
  return cells;
}

}  // namespace sdtw::ops::detail
