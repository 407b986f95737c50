#pragma once
// Runs one problem through the kernels (both modes) and through the float64 reference, so that
// every test states only its shapes and its tolerances.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "sdtw/kernels/checkpoint.hpp"
#include "sdtw/kernels/soft_dtw.hpp"
#include "sdtw/reference/constraints.hpp"
#include "support.hpp"

namespace sdtw::kernels::testing {

struct Case {
  int64_t batch, n, m, dim;
  double gamma;
  int64_t bandwidth = -1;
  bool lengths = false;
  Constraint constraint = {};  // Sakoe-Chiba or Itakura: the reference runs on costs masked by tslearn's masks
};

inline bool masked(const Case& c) {
  return c.constraint.kind == ConstraintKind::sakoe_chiba || c.constraint.kind == ConstraintKind::itakura;
}

inline std::ostream& operator<<(std::ostream& os, const Case& c) {
  os << "B=" << c.batch << " N=" << c.n << " M=" << c.m << " D=" << c.dim << " gamma=" << c.gamma
     << " band=" << c.bandwidth << (c.lengths ? " with lengths" : "")
     << (c.constraint.kind == ConstraintKind::sakoe_chiba ? " sakoe_chiba_radius=" : "")
     << (c.constraint.kind == ConstraintKind::itakura ? " itakura_max_slope=" : "");
  if (c.constraint.kind == ConstraintKind::sakoe_chiba) os << c.constraint.radius;
  if (c.constraint.kind == ConstraintKind::itakura) os << c.constraint.max_slope;
  return os;
}

struct Inputs {
  std::vector<double> x, y, dvalues;
  std::vector<long> x_len, y_len;
};

// Random normal x, y and upstream gradients; lengths drawn so that the band leaves a path.
inline Inputs draw_inputs(std::mt19937_64& rng, const Case& c, double scale = 1.0) {
  Inputs in;
  in.x = normal<double>(rng, c.batch * c.n * c.dim);
  in.y = normal<double>(rng, c.batch * c.m * c.dim);
  for (auto& v : in.x) v *= scale;
  for (auto& v : in.y) v *= scale;
  in.dvalues = normal<double>(rng, c.batch);
  for (int64_t b = 0; b < c.batch; ++b) {
    long xl = c.n, yl = c.m;
    if (c.lengths) {
      xl = std::uniform_int_distribution<long>(1, c.n)(rng);
      long lo = 1, hi = c.m;
      if (c.bandwidth >= 0) {
        lo = std::max<long>(1, xl - c.bandwidth);
        hi = std::min<long>(c.m, xl + c.bandwidth);
      }
      yl = lo <= hi ? std::uniform_int_distribution<long>(lo, hi)(rng) : std::min<long>(c.m, xl);
      // A constraint with a path for these lengths (the full lengths have one, or the case is wrong).
      for (int tries = 0; masked(c) && !has_path(c.constraint, static_cast<int>(xl), static_cast<int>(yl)); ++tries)
        std::tie(xl, yl) = tries < 100 ? std::pair<long, long>{std::uniform_int_distribution<long>(1, c.n)(rng),
                                                              std::uniform_int_distribution<long>(1, c.m)(rng)}
                                       : std::pair<long, long>{c.n, c.m};
    }
    in.x_len.push_back(xl);
    in.y_len.push_back(yl);
  }
  return in;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

struct Expected {
  std::vector<double> values, E, grad_x, grad_y;
};

inline reference::BatchShape shape_of(const Case& c, const Inputs& in) {
  return {c.batch, c.n, c.m, c.dim, in.x_len.data(), in.y_len.data()};
}
// The second order's bound for a float32 cost, whose weights are saved in float32, over the larger
// of |H G| and max |G| / gamma. The rounding grows with the paths' length (3.2e-5 at N = M = 1024 on
// an H100, docs/DESIGN.md §4.9); the tests' shapes have stayed within this (worst seen 6e-6).
constexpr double kFloat32WeightsTol = 1e-5;

inline reference::Options options_of(const Case& c) {
  return {c.gamma, c.bandwidth >= 0 ? std::optional<long>(c.bandwidth) : std::nullopt};
}

// D with +inf outside each pair's tslearn mask (the reference's), for a Sakoe-Chiba or Itakura case.
inline std::vector<double> masked_cost(const Case& c, const Inputs& in, std::vector<double> D) {
  if (!masked(c)) return D;
  for (int64_t b = 0; b < c.batch; ++b) {
    const long n = in.x_len[b], m = in.y_len[b];
    const reference::Mask mask = c.constraint.kind == ConstraintKind::sakoe_chiba
                                     ? reference::sakoe_chiba_mask(n, m, c.constraint.radius)
                                     : reference::itakura_mask(n, m, c.constraint.max_slope);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j)
        if (!mask(i, j)) D[(b * c.n + i) * c.m + j] = reference::kInf;
  }
  return D;
}

// gamma = 0, which soft_dtw_cost_batch refuses: the reference's exact DTW pair by pair
// (soft_dtw_variant at gamma 0, ties broken as hard_dtw), the band as +inf costs.
inline reference::CostBatchResult hard_dtw_on_cost(const Case& c, const Inputs& in, const std::vector<double>& D) {
  reference::CostBatchResult r{std::vector<double>(c.batch), std::vector<double>(c.batch * c.n * c.m, 0.0)};
  const auto band = options_of(c).bandwidth;
  for (int64_t b = 0; b < c.batch; ++b) {
    const long n = in.x_len[b], m = in.y_len[b];
    reference::Matrix Db(n, m);
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j) Db(i, j) = reference::in_band(i, j, band) ? D[(b * c.n + i) * c.m + j] : reference::kInf;
    const auto h = reference::soft_dtw_variant(Db, {0.0, 0.0, false});
    r.values[b] = h.value;
    for (long i = 0; i < n; ++i)
      for (long j = 0; j < m; ++j) r.E[(b * c.n + i) * c.m + j] = h.E(i, j);
  }
  return r;
}

// The reference's values and E on a cost tensor, E scaled by each pair's upstream gradient (in T,
// as the kernels read it) as the kernels' E is.
template <typename T>
Expected reference_on_cost(const Case& c, const Inputs& in, const std::vector<double>& unmasked) {
  const std::vector<double> D = masked_cost(c, in, unmasked);
  const auto r = c.gamma == 0.0 ? hard_dtw_on_cost(c, in, D)
                                : reference::soft_dtw_cost_batch(D.data(), shape_of(c, in), options_of(c), true);
  Expected e{r.values, r.E, {}, {}};
  const auto dv = to_double(cast<T>(in.dvalues));
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t k = 0; k < c.n * c.m; ++k) e.E[b * c.n * c.m + k] *= dv[b];
  return e;
}

// The reference's gradients on a given cost tensor D of the inputs (in T, as the kernels read
// them): E on D, chained to x and y through the squared-Euclidean Jacobian. On the cost the fused
// kernels compute, it leaves out the cost's own rounding and measures the DP's and product's error.
template <typename T>
Expected reference_gradients_on_cost(const Case& c, const Inputs& in, const std::vector<double>& D) {
  Expected e = reference_on_cost<T>(c, in, D);
  const auto x = to_double(cast<T>(in.x)), y = to_double(cast<T>(in.y));
  for (int64_t b = 0; b < c.batch; ++b) {
    const reference::Matrix xb = Eigen::Map<const reference::Matrix>(x.data() + b * c.n * c.dim, c.n, c.dim);
    const reference::Matrix yb = Eigen::Map<const reference::Matrix>(y.data() + b * c.m * c.dim, c.m, c.dim);
    const reference::Matrix Eb = Eigen::Map<const reference::Matrix>(e.E.data() + b * c.n * c.m, c.n, c.m);
    const reference::Gradients g = reference::SqEuclideanCost(xb, yb).jacobian_product(Eb);
    e.grad_x.insert(e.grad_x.end(), g.x.data(), g.x.data() + g.x.size());
    e.grad_y.insert(e.grad_y.end(), g.y.data(), g.y.data() + g.y.size());
  }
  return e;
}

// The reference on exactly the values the kernels see (inputs rounded to T first). gamma = 0 goes
// through the float64 cost: the gradients are then those of the path on that cost.
template <typename T>
Expected reference_for(const Case& c, const Inputs& in, bool with_alignment = true) {
  const auto x = to_double(cast<T>(in.x)), y = to_double(cast<T>(in.y)), dv = to_double(cast<T>(in.dvalues));
  std::vector<double> D(c.batch * c.n * c.m, 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < c.dim; ++d) {
          const double diff = x[(b * c.n + i) * c.dim + d] - y[(b * c.m + j) * c.dim + d];
          acc += diff * diff;
        }
        D[(b * c.n + i) * c.m + j] = acc;
      }
  if (c.gamma == 0.0 || masked(c)) return reference_gradients_on_cost<T>(c, in, D);
  const auto grads = reference::soft_dtw_sqeuclidean_batch(x.data(), y.data(), shape_of(c, in), options_of(c), true);
  Expected e{grads.values, {}, grads.grad_x, grads.grad_y};
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t k = 0; k < c.n * c.dim; ++k) e.grad_x[b * c.n * c.dim + k] *= dv[b];
    for (int64_t k = 0; k < c.m * c.dim; ++k) e.grad_y[b * c.m * c.dim + k] *= dv[b];
  }
  if (with_alignment) e.E = reference_on_cost<T>(c, in, D).E;
  return e;
}

// The cost matrices of the sq-Euclidean problem, in T, for the unfused mode.
template <typename T>
std::vector<T> cost_tensor(const Case& c, const Inputs& in) {
  const auto x = cast<T>(in.x), y = cast<T>(in.y);
  std::vector<T> D(c.batch * c.n * c.m);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < c.dim; ++d) {
          const double diff = static_cast<double>(x[(b * c.n + i) * c.dim + d]) - y[(b * c.m + j) * c.dim + d];
          acc += diff * diff;
        }
        D[(b * c.n + i) * c.m + j] = static_cast<T>(acc);
      }
  return D;
}

template <typename T>
struct Outputs {
  std::vector<T> values, E, grad_x, grad_y;
};

struct DeviceProblem {
  Problem problem;
  DeviceBuffer<int64_t> x_len, y_len;
  DeviceProblem(const Case& c, const Inputs& in) : x_len(c.batch), y_len(c.batch) {
    problem = Problem{c.batch, c.n, c.m, c.dim, c.gamma, c.bandwidth, nullptr, nullptr};
    problem.constraint = c.constraint;
    if (c.lengths) {
      x_len.upload(std::vector<int64_t>(in.x_len.begin(), in.x_len.end()));
      y_len.upload(std::vector<int64_t>(in.y_len.begin(), in.y_len.end()));
      problem.x_len = x_len.get();
      problem.y_len = y_len.get();
    }
  }
};

// The workspace of the full state (band_rows 0) or of the checkpointed mode's bands of band_rows rows.
template <typename T>
std::size_t workspace_for(const Problem& p, int64_t band_rows) {
  return band_rows > 0 ? checkpoint_workspace_bytes<T>(p, band_rows) : workspace_bytes<T>(p);
}

// Unfused mode on the GPU, in the full state (band_rows 0) or checkpointed: outputs poisoned first,
// so an element no kernel writes fails the comparison.
template <typename T>
Outputs<T> run_cost_mode(const Case& c, const Inputs& in, const std::vector<T>& D_host, int64_t band_rows = 0) {
  DeviceProblem dp(c, in);
  DeviceBuffer<T> D(D_host.size()), values(c.batch), dvalues(c.batch), E(D_host.size());
  DeviceBuffer<char> workspace(workspace_for<T>(dp.problem, band_rows));
  D.upload(D_host);
  dvalues.upload(cast<T>(in.dvalues));
  values.poison();
  E.poison();
  workspace.poison();
  if (band_rows > 0) {
    cost_checkpoint_forward<T>(dp.problem, band_rows, D.get(), values.get(), workspace.get(), nullptr);
    cost_checkpoint_backward<T>(dp.problem, band_rows, D.get(), dvalues.get(), E.get(), workspace.get(), nullptr);
  } else {
    cost_forward<T>(dp.problem, D.get(), values.get(), workspace.get(), nullptr);
    cost_backward<T>(dp.problem, dvalues.get(), E.get(), workspace.get(), nullptr);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {values.download(), E.download(), {}, {}};
}

template <typename T>
Outputs<T> run_fused_mode(const Case& c, const Inputs& in, cudaStream_t stream = nullptr, int64_t band_rows = 0) {
  DeviceProblem dp(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size()), values(c.batch), dvalues(c.batch), gx(in.x.size()), gy(in.y.size());
  DeviceBuffer<char> workspace(workspace_for<T>(dp.problem, band_rows));
  x.upload(cast<T>(in.x));
  y.upload(cast<T>(in.y));
  dvalues.upload(cast<T>(in.dvalues));
  values.poison();
  gx.poison();
  gy.poison();
  workspace.poison();
  if (band_rows > 0) {
    sqeuclidean_checkpoint_forward<T>(dp.problem, band_rows, x.get(), y.get(), values.get(), workspace.get(), stream);
    sqeuclidean_checkpoint_backward<T>(dp.problem, band_rows, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(),
                                       workspace.get(), stream);
  } else {
    sqeuclidean_forward<T>(dp.problem, x.get(), y.get(), values.get(), workspace.get(), stream);
    sqeuclidean_backward<T>(dp.problem, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(), workspace.get(), stream);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {values.download(), {}, gx.download(), gy.download()};
}

// The fused mode's values and gradients against the float64 reference, on inputs drawn from the
// stream named seed_label.
template <typename T>
void expect_fused_agrees(const Case& c, const char* seed_label, double value_tol, double grad_tol) {
  auto rng = seeded_rng(seed_label);
  const Inputs in = draw_inputs(rng, c);
  const Expected want = reference_for<T>(c, in);
  const Outputs<T> got = run_fused_mode<T>(c, in);
  EXPECT_LE(max_relative(got.values, want.values), value_tol) << c;
  EXPECT_LE(relative_l2(got.grad_x, want.grad_x), grad_tol) << c;
  EXPECT_LE(relative_l2(got.grad_y, want.grad_y), grad_tol) << c;
}

}  // namespace sdtw::kernels::testing
