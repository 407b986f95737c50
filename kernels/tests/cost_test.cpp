// The written-out squared-Euclidean cost against the float64 sums of the test harness, on a
// poisoned output so that an unwritten element fails.
#include <cmath>
#include <limits>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

template <typename T>
void check_cost(const Case& c, double tol) {
  auto rng = seeded_rng("cost tensor");
  const Inputs in = draw_inputs(rng, c);
  const std::vector<T> want = cost_tensor<T>(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size()), D(want.size());
  x.upload(cast<T>(in.x));
  y.upload(cast<T>(in.y));
  D.upload(std::vector<T>(want.size(), std::numeric_limits<T>::quiet_NaN()));
  Problem p;
  p.batch = c.batch;
  p.n = c.n;
  p.m = c.m;
  p.dim = c.dim;
  sqeuclidean_cost<T>(p, x.get(), y.get(), D.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  EXPECT_LE(max_scaled_error(D.download(), to_double(want)), tol) << c;
}

class CostTensor : public ::testing::TestWithParam<Case> {};

TEST_P(CostTensor, MatchesFloat64Sums) {
  SDTW_REQUIRE_GPU();
  check_cost<float>(GetParam(), 1e-5);
  check_cost<double>(GetParam(), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CostTensor,
                         ::testing::Values(Case{1, 1, 1, 1, 1.0}, Case{2, 1, 37, 3, 1.0}, Case{3, 33, 1, 5, 1.0},
                                           Case{2, 64, 129, 8, 1.0}, Case{1, 95, 70, 33, 1.0},
                                           Case{4, 40, 300, 64, 1.0}, Case{1, 17, 19, 130, 1.0},
                                           Case{70000, 3, 4, 2, 1.0}));

TEST(CostTensor, BadShapesAreRejected) {
  Problem p;
  p.dim = 0;
  float dummy = 0;
  EXPECT_THROW(sqeuclidean_cost<float>(p, &dummy, &dummy, &dummy, nullptr), std::invalid_argument);
  EXPECT_THROW(sqeuclidean_cost_backward<float>(p, &dummy, &dummy, &dummy, &dummy, &dummy, nullptr),
               std::invalid_argument);
}

// The cost's backward from a dense G: grad_x = 2 (rowsum(G) x - G y), grad_y = 2 (colsum(G) y -
// G^T x) against float64 sums, on poisoned outputs.
template <typename T>
void check_cost_backward(const Case& c, double tol) {
  auto rng = seeded_rng("cost backward");
  const Inputs in = draw_inputs(rng, c);
  const auto x = cast<T>(in.x), y = cast<T>(in.y), G = cast<T>(normal<double>(rng, c.batch * c.n * c.m));
  std::vector<double> want_x(x.size(), 0.0), want_y(y.size(), 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j) {
        const double g = G[(b * c.n + i) * c.m + j];
        for (int64_t d = 0; d < c.dim; ++d) {
          const double diff = static_cast<double>(x[(b * c.n + i) * c.dim + d]) - y[(b * c.m + j) * c.dim + d];
          want_x[(b * c.n + i) * c.dim + d] += 2 * g * diff;
          want_y[(b * c.m + j) * c.dim + d] -= 2 * g * diff;
        }
      }
  DeviceBuffer<T> dx(x.size()), dy(y.size()), dG(G.size()), gx(x.size()), gy(y.size());
  dx.upload(x);
  dy.upload(y);
  dG.upload(G);
  gx.poison();
  gy.poison();
  Problem p;
  p.batch = c.batch;
  p.n = c.n;
  p.m = c.m;
  p.dim = c.dim;
  sqeuclidean_cost_backward<T>(p, dx.get(), dy.get(), dG.get(), gx.get(), gy.get(), nullptr);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  EXPECT_LE(relative_l2(gx.download(), want_x), tol) << c;
  EXPECT_LE(relative_l2(gy.download(), want_y), tol) << c;
}

TEST_P(CostTensor, BackwardMatchesFloat64Sums) {
  SDTW_REQUIRE_GPU();
  check_cost_backward<float>(GetParam(), 1e-5);
  check_cost_backward<double>(GetParam(), 1e-12);
}

}  // namespace
}  // namespace sdtw::kernels::testing
