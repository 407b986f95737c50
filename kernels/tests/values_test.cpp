// The values-only forward: the same values as the full forward, bit for bit, in both modes and
// dtypes; with pair indices, every pair equals the full forward of that pair gathered. The fused
// forward equals the cost mode on the cost tensor the kernels compute, bit for bit.
#include <cstring>

#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

const std::vector<Case> kCases = {
    {1, 1, 1, 3, 1.0},      {2, 1, 7, 2, 0.5},          {3, 9, 1, 5, 1.0},         {2, 32, 32, 4, 1.0},
    {3, 33, 31, 3, 0.1},    {2, 64, 95, 8, 1.0, 40},    {5, 70, 45, 12, 1.0, -1, true},
    {3, 96, 96, 64, 0.3, 12, true}, {1, 257, 130, 7, 2.0}, {6, 40, 40, 1, 10.0}, {1, 65, 33, 130, 0.01, 40},
    {3, 33, 31, 3, 0.0},    {5, 70, 45, 12, 0.0, -1, true}, {2, 64, 95, 8, 0.0, 40},
};

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <typename T>
std::vector<T> full_forward_values(const Problem& problem, const DeviceBuffer<T>& x, const DeviceBuffer<T>& y) {
  DeviceBuffer<T> values(problem.batch);
  DeviceBuffer<char> workspace(workspace_bytes<T>(problem));
  values.poison();
  sqeuclidean_forward<T>(problem, x.get(), y.get(), values.get(), workspace.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return values.download();
}

template <typename T>
std::vector<T> values_only(const Problem& problem, const DeviceBuffer<T>& x, const DeviceBuffer<T>& y) {
  DeviceBuffer<T> values(problem.batch);
  DeviceBuffer<char> workspace(values_workspace_bytes<T>(problem));
  values.poison();
  workspace.poison();
  sqeuclidean_values<T>(problem, x.get(), y.get(), values.get(), workspace.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return values.download();
}

class ValuesOnly : public ::testing::TestWithParam<Case> {};

template <typename T>
void check_fused(const Case& c) {
  auto rng = seeded_rng("values only, fused");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size());
  x.upload(cast<T>(in.x));
  y.upload(cast<T>(in.y));
  const auto want = full_forward_values<T>(dp.problem, x, y), got = values_only<T>(dp.problem, x, y);
  EXPECT_TRUE(same_bits(got, want)) << c;
  EXPECT_LE(max_relative(got, reference_for<T>(c, in, false).values), sizeof(T) == 4 ? 1e-5 : 1e-12) << c;
}

template <typename T>
void check_cost(const Case& c) {
  auto rng = seeded_rng("values only, cost");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  const auto D_host = cost_tensor<T>(c, in);
  DeviceBuffer<T> D(D_host.size()), full(c.batch), only(c.batch);
  D.upload(D_host);
  DeviceBuffer<char> state(workspace_bytes<T>(dp.problem)), borders(values_workspace_bytes<T>(dp.problem));
  borders.poison();
  cost_forward<T>(dp.problem, D.get(), full.get(), state.get(), nullptr);
  cost_values<T>(dp.problem, D.get(), only.get(), borders.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(same_bits(only.download(), full.download())) << c;
}

// The fused forward stages the same cost that sqeuclidean_cost writes out, so on that tensor the
// cost mode gives its values bit for bit: what lets the accuracy grid bound the fused gradient
// against the reference on the kernels' own float32 cost.
template <typename T>
void check_fused_on_own_cost(const Case& c) {
  auto rng = seeded_rng("fused on its own cost");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size()), D(c.batch * c.n * c.m), from_cost(c.batch);
  x.upload(cast<T>(in.x));
  y.upload(cast<T>(in.y));
  DeviceBuffer<char> workspace(workspace_bytes<T>(dp.problem));
  sqeuclidean_cost<T>(dp.problem, x.get(), y.get(), D.get(), nullptr);
  from_cost.poison();
  cost_forward<T>(dp.problem, D.get(), from_cost.get(), workspace.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(same_bits(full_forward_values<T>(dp.problem, x, y), from_cost.download())) << c;
}

TEST_P(ValuesOnly, FusedFloatMatchesCostModeOnItsOwnCostBitForBit) {
  SDTW_REQUIRE_GPU();
  check_fused_on_own_cost<float>(GetParam());
}
TEST_P(ValuesOnly, FusedDoubleMatchesCostModeOnItsOwnCostBitForBit) {
  SDTW_REQUIRE_GPU();
  check_fused_on_own_cost<double>(GetParam());
}
TEST_P(ValuesOnly, FusedFloatMatchesFullForwardBitForBit) {
  SDTW_REQUIRE_GPU();
  check_fused<float>(GetParam());
}
TEST_P(ValuesOnly, FusedDoubleMatchesFullForwardBitForBit) {
  SDTW_REQUIRE_GPU();
  check_fused<double>(GetParam());
}
TEST_P(ValuesOnly, CostFloatMatchesFullForwardBitForBit) {
  SDTW_REQUIRE_GPU();
  check_cost<float>(GetParam());
}
TEST_P(ValuesOnly, CostDoubleMatchesFullForwardBitForBit) {
  SDTW_REQUIRE_GPU();
  check_cost<double>(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Shapes, ValuesOnly, ::testing::ValuesIn(kCases));

// The workspace is the ring of strip borders alone (m / 32 + 2 float64 rows per pair at most):
// at N = M = 2048 a sixteenth of the full forward's.
TEST(ValuesOnly, WorkspaceHoldsNoState) {
  const Problem p{16, 2048, 2048, 64, 1.0};
  EXPECT_LT(values_workspace_bytes<float>(p) * 16, workspace_bytes<float>(p));
  EXPECT_LE(values_workspace_bytes<float>(p), static_cast<std::size_t>(p.batch) * 66 * p.m * 8 + 4 * 65536);
}

// Pair p compares x[x_index[p]] with y[y_index[p]]: a pairwise matrix of two sets of different
// sizes with per-series lengths, every pair against the full forward of the gathered pair.
TEST(ValuesOnly, PairIndicesGiveTheGatheredPairs) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("pair indices");
  const int64_t bx = 5, by = 3, n = 37, m = 29, dim = 6;
  const Case cx{bx, n, n, dim, 0.5, -1, true}, cy{by, m, m, dim, 0.5, -1, true};
  const Inputs ix = draw_inputs(rng, cx), iy = draw_inputs(rng, cy);
  std::vector<int64_t> xi, yi;
  for (int64_t a = 0; a < bx; ++a)
    for (int64_t b = 0; b < by; ++b) {
      xi.push_back(a);
      yi.push_back(b);
    }
  xi.push_back(4);  // a repeated pair
  yi.push_back(0);
  const int64_t pairs = static_cast<int64_t>(xi.size());
  DeviceBuffer<float> X(ix.x.size()), Y(iy.x.size()), values(pairs);
  DeviceBuffer<int64_t> x_index(pairs), y_index(pairs), x_len(bx), y_len(by);
  X.upload(cast<float>(ix.x));
  Y.upload(cast<float>(iy.x));
  x_index.upload(xi);
  y_index.upload(yi);
  x_len.upload(std::vector<int64_t>(ix.x_len.begin(), ix.x_len.end()));
  y_len.upload(std::vector<int64_t>(iy.x_len.begin(), iy.x_len.end()));
  Problem p{pairs, n, m, dim, 0.5};
  p.x_len = x_len.get();
  p.y_len = y_len.get();
  p.x_index = x_index.get();
  p.y_index = y_index.get();
  const auto got = values_only<float>(p, X, Y);

  std::vector<double> gx, gy;
  std::vector<int64_t> gxl, gyl;
  for (int64_t q = 0; q < pairs; ++q) {
    gx.insert(gx.end(), ix.x.begin() + xi[q] * n * dim, ix.x.begin() + (xi[q] + 1) * n * dim);
    gy.insert(gy.end(), iy.x.begin() + yi[q] * m * dim, iy.x.begin() + (yi[q] + 1) * m * dim);
    gxl.push_back(ix.x_len[xi[q]]);
    gyl.push_back(iy.x_len[yi[q]]);
  }
  DeviceBuffer<float> GX(gx.size()), GY(gy.size());
  DeviceBuffer<int64_t> GXL(pairs), GYL(pairs);
  GX.upload(cast<float>(gx));
  GY.upload(cast<float>(gy));
  GXL.upload(gxl);
  GYL.upload(gyl);
  Problem gathered{pairs, n, m, dim, 0.5};
  gathered.x_len = GXL.get();
  gathered.y_len = GYL.get();
  EXPECT_TRUE(same_bits(got, full_forward_values<float>(gathered, GX, GY)));
}

// Refused before anything is launched, so host pointers stand in for device ones.
TEST(ValuesOnly, PairIndicesAreRefusedWhereStateIsSaved) {
  Problem p{2, 8, 8, 4, 1.0};
  int64_t index[2] = {0, 1};
  float data[4] = {};
  p.x_index = index;
  p.y_index = index;
  const auto refused = [](auto&& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find("pair indices") != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(refused([&] { sqeuclidean_forward<float>(p, data, data, data, data, nullptr); }));
  EXPECT_TRUE(refused([&] { sqeuclidean_backward<float>(p, data, data, data, data, data, data, nullptr); }));
  EXPECT_TRUE(refused([&] { cost_forward<float>(p, data, data, data, nullptr); }));
  EXPECT_TRUE(refused([&] { cost_values<float>(p, data, data, data, nullptr); }));
}

}  // namespace
}  // namespace sdtw::kernels::testing
