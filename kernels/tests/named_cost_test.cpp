// The fused costs besides the squared Euclidean one (fused_cost, fused_forward, fused_backward)
// against the reference's NamedCost of the same name on the same inputs: the cost tensor, the
// values and both gradients, with lengths and bands; and the fused forward against the unfused
// one on the cost tensor the fused mode computes, which must give the same values bit for bit.
#include <string>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

const char* const kCostNames[] = {"l1", "euclidean", "cosine", "negative_dot"};

// Inputs with y's first row equal to x's first row in pair 0: the Euclidean cost's zero distance,
// where its gradient is taken as 0; and x's second row and y's last row of pair 0 zero, below the
// cosine's eps, where its rows are divided by eps and have no radial term.
Inputs draw_named_inputs(const Case& c) {
  auto rng = seeded_rng("named cost");
  Inputs in = draw_inputs(rng, c);
  for (int64_t d = 0; d < c.dim; ++d) {
    in.y[d] = in.x[d];
    if (c.n > 1) in.x[c.dim + d] = 0.0;
    if (c.m > 1) in.y[(c.m - 1) * c.dim + d] = 0.0;
  }
  return in;
}

reference::Matrix rows_of(const std::vector<double>& v, int64_t b, int64_t rows, int64_t dim, long used) {
  return Eigen::Map<const reference::Matrix>(v.data() + b * rows * dim, rows, dim).topRows(used);
}

template <typename T>
void check_named(const std::string& name, const Case& c, double value_tol, double grad_tol) {
  SCOPED_TRACE(name);
  const Inputs in = draw_named_inputs(c);
  const auto xt = cast<T>(in.x), yt = cast<T>(in.y), dv = cast<T>(in.dvalues);
  const auto x = to_double(xt), y = to_double(yt);
  std::vector<double> want_values(c.batch), want_gx(x.size(), 0.0), want_gy(y.size(), 0.0), want_D(c.batch * c.n * c.m);
  for (int64_t b = 0; b < c.batch; ++b) {
    const reference::Matrix D = reference::NamedCost(name, rows_of(x, b, c.n, c.dim, c.n), rows_of(y, b, c.m, c.dim, c.m)).compute();
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j) want_D[(b * c.n + i) * c.m + j] = D(i, j);
    const long xl = in.x_len[b], yl = in.y_len[b];
    const auto r = reference::soft_dtw_with_cost(name, rows_of(x, b, c.n, c.dim, xl), rows_of(y, b, c.m, c.dim, yl),
                                                 options_of(c));
    want_values[b] = r.value;
    for (long i = 0; i < xl; ++i)
      for (int64_t d = 0; d < c.dim; ++d) want_gx[(b * c.n + i) * c.dim + d] = dv[b] * r.grad.x(i, d);
    for (long j = 0; j < yl; ++j)
      for (int64_t d = 0; d < c.dim; ++d) want_gy[(b * c.m + j) * c.dim + d] = dv[b] * r.grad.y(j, d);
  }

  const Cost cost = cost_named(name);
  const DeviceProblem dp(c, in);
  const Problem& p = dp.problem;
  DeviceBuffer<T> dx(xt.size()), dy(yt.size()), ddv(dv.size()), values(c.batch), gx(xt.size()), gy(yt.size());
  DeviceBuffer<T> D(want_D.size()), cost_values(c.batch);
  DeviceBuffer<char> workspace(workspace_bytes<T>(p));
  dx.upload(xt);
  dy.upload(yt);
  ddv.upload(dv);
  values.poison();
  gx.poison();
  gy.poison();
  D.poison();

  fused_cost<T>(p, cost, dx.get(), dy.get(), D.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  EXPECT_LE(max_scaled_error(D.download(), want_D), value_tol) << c << " (cost tensor)";

  fused_forward<T>(p, cost, dx.get(), dy.get(), values.get(), workspace.get(), nullptr);
  fused_backward<T>(p, cost, dx.get(), dy.get(), ddv.get(), gx.get(), gy.get(), workspace.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const std::vector<T> got_values = values.download();
  EXPECT_LE(max_scaled_error(got_values, want_values), value_tol) << c;
  EXPECT_LE(relative_l2(gx.download(), want_gx), grad_tol) << c << " (grad_x)";
  EXPECT_LE(relative_l2(gy.download(), want_gy), grad_tol) << c << " (grad_y)";

  // The unfused forward on the fused mode's own cost tensor, and the values-only forward: the same
  // costs, the same values.
  cost_forward<T>(p, D.get(), cost_values.get(), workspace.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const std::vector<T> unfused = cost_values.download();
  for (int64_t b = 0; b < c.batch; ++b) EXPECT_EQ(unfused[b], got_values[b]) << c << " pair " << b;
  DeviceBuffer<char> ring(values_workspace_bytes<T>(p));
  cost_values.poison();
  fused_values<T>(p, cost, dx.get(), dy.get(), cost_values.get(), ring.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  const std::vector<T> values_only = cost_values.download();
  for (int64_t b = 0; b < c.batch; ++b) EXPECT_EQ(values_only[b], got_values[b]) << c << " values only, pair " << b;
}

class NamedCosts : public ::testing::TestWithParam<Case> {};

// float: the costs in float and the DP's ~1e-5 weight error; double: rounding alone.
TEST_P(NamedCosts, FloatMatchesReference) {
  SDTW_REQUIRE_GPU();
  for (const char* name : kCostNames) check_named<float>(name, GetParam(), 1e-4, 1e-3);
}
TEST_P(NamedCosts, DoubleMatchesReference) {
  SDTW_REQUIRE_GPU();
  for (const char* name : kCostNames) check_named<double>(name, GetParam(), 1e-10, 1e-8);
}

// 70000 pairs: more than one grid's 65535, so the gradient and cost launches go in slices. 3000
// pairs: more strips than the device holds at once, so float's backward and gradient take two
// launches, with the 64- and 128-feature tiles. 300 x 290 at gamma 0.1: E is 0 far from the
// alignment, so L1's gradient skips most chunks of 128 rows, with lengths cutting the last one.
INSTANTIATE_TEST_SUITE_P(Shapes, NamedCosts,
                         ::testing::Values(Case{1, 1, 1, 1, 1.0}, Case{2, 1, 37, 3, 1.0}, Case{3, 33, 1, 5, 0.5},
                                           Case{2, 64, 129, 8, 1.0}, Case{2, 95, 70, 33, 0.1},
                                           Case{3, 70, 70, 16, 1.0, 9}, Case{4, 90, 61, 7, 1.0, -1, true},
                                           Case{3, 80, 80, 5, 0.5, 12, true}, Case{1, 40, 300, 130, 1.0},
                                           Case{70000, 3, 4, 2, 1.0}, Case{3000, 20, 24, 40, 1.0},
                                           Case{3000, 9, 12, 100, 1.0, -1, true}, Case{2, 300, 290, 6, 0.1, -1, true}));

TEST(NamedCosts, NamesAreTheReferences) {
  for (const std::string& name : reference::cost_names()) EXPECT_NO_THROW(cost_named(name)) << name;
  EXPECT_THROW(cost_named("dot"), std::invalid_argument);
  EXPECT_EQ(cost_named("negative_dot"), Cost::negative_dot);
  Problem p;
  float dummy = 0;
  EXPECT_THROW(fused_forward<float>(p, static_cast<Cost>(17), &dummy, &dummy, &dummy, &dummy, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace sdtw::kernels::testing
