// The values-only forward: the same values as the full forward, bit for bit, in both modes and
// dtypes; with pair indices, every pair equals the full forward of that pair gathered. The fused
// forward equals the cost mode on the cost tensor the kernels compute, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

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

struct ManyPairs {
  int64_t n, m, dim;
  double gamma;
  bool lengths, nan_row;
};

// Enough pairs through indices for one pair per thread (twice as many as 16 blocks of 128 an SM
// could hold): its values are the strips' forward's, bit for bit, checked on slices of the same
// index arrays small enough for the strips. y has 1100 rows, so some blocks of 128 pairs share a
// row of x and some straddle two; the last block is partly past the batch.
void check_many_pairs(const ManyPairs& c) {
  auto rng = seeded_rng("many pairs");
  int device = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), cudaSuccess);
  const int64_t y_rows = 1100, x_rows = 2 * 16 * 128 * int64_t{sms} / y_rows + 1, pairs = x_rows * y_rows;
  std::uniform_real_distribution<float> feature(-1.0f, 1.0f);
  std::vector<float> x(x_rows * c.n * c.dim), y(y_rows * c.m * c.dim);
  for (float& v : x) v = feature(rng);
  for (float& v : y) v = feature(rng);
  if (c.nan_row) x[3 * c.n * c.dim + c.dim] = NAN;  // row 3 of x: its pairs' values are NaN
  std::vector<int64_t> xi, yi, xl(x_rows), yl(y_rows);
  for (int64_t a = 0; a < x_rows; ++a)
    for (int64_t b = 0; b < y_rows; ++b) {
      xi.push_back(a);
      yi.push_back(b);
    }
  for (int64_t& l : xl) l = std::uniform_int_distribution<int64_t>(1, c.n)(rng);
  for (int64_t& l : yl) l = std::uniform_int_distribution<int64_t>(1, c.m)(rng);
  DeviceBuffer<float> X(x.size()), Y(y.size()), values(pairs);
  DeviceBuffer<int64_t> x_index(pairs), y_index(pairs), x_len(x_rows), y_len(y_rows);
  X.upload(x);
  Y.upload(y);
  x_index.upload(xi);
  y_index.upload(yi);
  x_len.upload(xl);
  y_len.upload(yl);
  Problem p{pairs, c.n, c.m, c.dim, c.gamma};
  p.x_index = x_index.get();
  p.y_index = y_index.get();
  if (c.lengths) {
    p.x_len = x_len.get();
    p.y_len = y_len.get();
  }
  DeviceBuffer<char> workspace(values_workspace_bytes<float>(p));
  values.poison();
  workspace.poison();
  sqeuclidean_values<float>(p, X.get(), Y.get(), values.get(), workspace.get(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> got = values.download();
  // The strips' forward leaves its workspace zero; one pair per thread leaves its borders there.
  const std::vector<char> left = workspace.download();
  EXPECT_TRUE(std::any_of(left.begin(), left.end(), [](char v) { return v != 0; })) << "the strips ran, not one pair per thread";
  const int64_t slice = 2000;
  for (const int64_t first : {int64_t{0}, pairs / 2 - 700, pairs - slice}) {
    Problem part = p;
    part.batch = slice;
    part.x_index = x_index.get() + first;
    part.y_index = y_index.get() + first;
    const std::vector<float> want = values_only<float>(part, X, Y);
    EXPECT_TRUE(same_bits(std::vector<float>(got.begin() + first, got.begin() + first + slice), want))
        << "pairs from " << first << ", n " << c.n << " m " << c.m << " dim " << c.dim;
  }
  if (c.nan_row) {
    EXPECT_TRUE(std::isnan(got[3 * y_rows]) && std::isnan(got[4 * y_rows - 1]));
    EXPECT_TRUE(std::isfinite(got[4 * y_rows]));
  }
}

TEST(ValuesOnly, ManyPairsOnePerThreadGiveTheStripsValues) {
  SDTW_REQUIRE_GPU();
  check_many_pairs({37, 29, 8, 0.5, true, false});
  check_many_pairs({70, 45, 16, 0.1, false, true});
  check_many_pairs({33, 3, 64, 1.0, true, false});
  check_many_pairs({1, 40, 32, 2.0, false, false});
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
