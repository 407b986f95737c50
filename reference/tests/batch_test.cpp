// The batched entry points against one call per pair, with per-pair lengths and zero padding.
#include <vector>

#include "test_support.hpp"

namespace sdtw::test {
namespace {

using reference::BatchShape;

constexpr long B = 5, N = 7, M = 9, DIM = 3;
// Includes length 1, full length and N_b > M_b; |N_b - M_b| <= 3 so a band of 3 is valid for every pair.
const long kXLen[B] = {7, 1, 4, 7, 5};
const long kYLen[B] = {9, 2, 4, 6, 3};

// Row block b of a B x rows x cols array, as a rows x cols matrix.
Matrix slab(const std::vector<double>& a, long b, long rows, long cols) {
  return Eigen::Map<const Matrix>(a.data() + b * rows * cols, rows, cols);
}

// The entries of a (rows x cols) slab outside its leading (n x m) block are all zero.
bool padding_is_zero(const Matrix& a, long n, long m) {
  for (long i = 0; i < a.rows(); ++i)
    for (long j = 0; j < a.cols(); ++j)
      if ((i >= n || j >= m) && a(i, j) != 0.0) return false;
  return true;
}

struct BatchCase {
  const char* name;
  Options options;
};
void PrintTo(const BatchCase& c, std::ostream* os) { *os << c.name; }

class Batch : public ::testing::TestWithParam<BatchCase> {};

TEST_P(Batch, CostBatchMatchesPerPairCalls) {
  const Options options = GetParam().options;
  const Matrix all = random_matrix(B * N, M, 11, 0.0, 2.0);
  const std::vector<double> D(all.data(), all.data() + all.size());
  const auto out = reference::soft_dtw_cost_batch(D.data(), {B, N, M, 1, kXLen, kYLen}, options, true);
  const auto values_only = reference::soft_dtw_cost_batch(D.data(), {B, N, M, 1, kXLen, kYLen}, options, false);
  ASSERT_EQ(out.values.size(), size_t(B));
  ASSERT_EQ(out.E.size(), size_t(B * N * M));
  EXPECT_TRUE(values_only.E.empty());
  for (long b = 0; b < B; ++b) {
    SCOPED_TRACE(b);
    const auto pair = reference::soft_dtw_with_alignment(slab(D, b, N, M).topLeftCorner(kXLen[b], kYLen[b]), options);
    const Matrix E = slab(out.E, b, N, M);
    EXPECT_TRUE(close(out.values[b], pair.value, 1e-12));
    EXPECT_TRUE(close(values_only.values[b], pair.value, 1e-12));
    EXPECT_TRUE(close(Matrix(E.topLeftCorner(kXLen[b], kYLen[b])), pair.E, 1e-12));
    EXPECT_TRUE(padding_is_zero(E, kXLen[b], kYLen[b]));
  }
}

TEST_P(Batch, SqEuclideanBatchMatchesPerPairCalls) {
  const Options options = GetParam().options;
  const Matrix xs = random_matrix(B * N, DIM, 12), ys = random_matrix(B * M, DIM, 13);
  const std::vector<double> x(xs.data(), xs.data() + xs.size()), y(ys.data(), ys.data() + ys.size());
  for (bool normalize : {false, true}) {
    SCOPED_TRACE(normalize ? "divergence" : "sdtw");
    const auto out =
        reference::soft_dtw_sqeuclidean_batch(x.data(), y.data(), {B, N, M, DIM, kXLen, kYLen}, options, true, normalize);
    ASSERT_EQ(out.grad_x.size(), size_t(B * N * DIM));
    ASSERT_EQ(out.grad_y.size(), size_t(B * M * DIM));
    for (long b = 0; b < B; ++b) {
      SCOPED_TRACE(b);
      const Matrix xb = slab(x, b, N, DIM).topRows(kXLen[b]), yb = slab(y, b, M, DIM).topRows(kYLen[b]);
      const auto pair = normalize ? reference::soft_dtw_divergence(xb, yb, options)
                                  : reference::soft_dtw_sqeuclidean(xb, yb, options);
      const Matrix gx = slab(out.grad_x, b, N, DIM), gy = slab(out.grad_y, b, M, DIM);
      EXPECT_TRUE(close(out.values[b], pair.value, 1e-12));
      EXPECT_TRUE(close(Matrix(gx.topRows(kXLen[b])), pair.grad.x, 1e-12));
      EXPECT_TRUE(close(Matrix(gy.topRows(kYLen[b])), pair.grad.y, 1e-12));
      EXPECT_TRUE(padding_is_zero(gx, kXLen[b], DIM));
      EXPECT_TRUE(padding_is_zero(gy, kYLen[b], DIM));
    }
  }
}

// Null lengths mean every pair uses all N and M rows.
TEST_P(Batch, NullLengthsMeanFullLength) {
  const Options options = GetParam().options;
  const Matrix xs = random_matrix(B * N, DIM, 14), ys = random_matrix(B * M, DIM, 15);
  const std::vector<double> x(xs.data(), xs.data() + xs.size()), y(ys.data(), ys.data() + ys.size());
  const auto out = reference::soft_dtw_sqeuclidean_batch(x.data(), y.data(), {B, N, M, DIM}, options, false);
  EXPECT_TRUE(out.grad_x.empty());
  for (long b = 0; b < B; ++b)
    EXPECT_TRUE(close(out.values[b],
                      reference::soft_dtw_sqeuclidean(slab(x, b, N, DIM), slab(y, b, M, DIM), options).value, 1e-12));
}

INSTANTIATE_TEST_SUITE_P(GammasAndBands, Batch,
                         ::testing::Values(BatchCase{"gamma1", {1.0, {}}}, BatchCase{"gamma1e_2", {1e-2, {}}},
                                           BatchCase{"gamma0_3_band3", {0.3, 3}}),
                         [](const auto& info) { return std::string(info.param.name); });

// NaN in the padding of D and Z: a pair that read past its lengths would turn NaN.
TEST_P(Batch, HessianProductCostBatchMatchesPerPairCalls) {
  const Options options = GetParam().options;
  Matrix Dall = random_matrix(B * N, M, 16, 0.0, 2.0), Zall = random_matrix(B * N, M, 17);
  for (long b = 0; b < B; ++b)
    for (long i = 0; i < N; ++i)
      for (long j = 0; j < M; ++j)
        if (i >= kXLen[b] || j >= kYLen[b]) Dall(b * N + i, j) = Zall(b * N + i, j) = std::nan("");
  const std::vector<double> D(Dall.data(), Dall.data() + Dall.size()), Z(Zall.data(), Zall.data() + Zall.size());
  const auto out =
      reference::soft_dtw_hessian_product_cost_batch(D.data(), Z.data(), {B, N, M, 1, kXLen, kYLen}, options);
  ASSERT_EQ(out.E_dot.size(), size_t(B * N * M));
  for (long b = 0; b < B; ++b) {
    SCOPED_TRACE(b);
    const auto pair = reference::soft_dtw_hessian_product(slab(D, b, N, M).topLeftCorner(kXLen[b], kYLen[b]),
                                                          slab(Z, b, N, M).topLeftCorner(kXLen[b], kYLen[b]), options);
    const Matrix E = slab(out.E, b, N, M), E_dot = slab(out.E_dot, b, N, M);
    EXPECT_TRUE(close(out.values[b], pair.value, 1e-12));
    EXPECT_TRUE(close(out.value_dots[b], pair.value_dot, 1e-12));
    EXPECT_TRUE(close(Matrix(E.topLeftCorner(kXLen[b], kYLen[b])), pair.E, 1e-12));
    EXPECT_TRUE(close(Matrix(E_dot.topLeftCorner(kXLen[b], kYLen[b])), pair.E_dot, 1e-12));
    EXPECT_TRUE(padding_is_zero(E, kXLen[b], kYLen[b]));
    EXPECT_TRUE(padding_is_zero(E_dot, kXLen[b], kYLen[b]));
  }
}

}  // namespace
}  // namespace sdtw::test
