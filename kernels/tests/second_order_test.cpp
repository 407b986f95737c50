// alignment_backward (the Hessian-vector product in cost space) against the float64 reference's
// sweeps of directional derivatives, on the shapes where the strips go wrong: N != M, N = 1,
// M = 1, odd sizes, a strip's last rows past the pair's, borders handed through reused ring slots,
// bands and per-pair lengths. Outputs and workspace are poisoned first, so an unwritten or
// uninitialised cell shows as NaN.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include "harness.hpp"
#include "sdtw/kernels/second_order.hpp"

namespace sdtw::kernels::testing {
namespace {

// 300 x 40 and 400 x 9 have more strips than ring slots (a slot is reused); 300 x 281 has ten strips.
const std::vector<Case> kCases = {
    {1, 1, 1, 2, 1.0},         {2, 1, 7, 3, 0.5},          {3, 9, 1, 2, 1.0},
    {2, 5, 4, 2, 0.7},         {3, 33, 31, 3, 0.1},        {2, 32, 32, 4, 1.0, 3},
    {4, 17, 23, 2, 0.5, -1, true}, {5, 40, 29, 3, 1.0, 12, true}, {2, 300, 281, 2, 2.0},
    {2, 270, 301, 3, 0.3, 40, true}, {6, 13, 13, 1, 10.0, 1},  {3, 64, 95, 5, 0.05, 40},
    {2, 300, 40, 2, 0.5},      {3, 400, 9, 2, 1.0, -1, true},
    {1100, 40, 9, 2, 0.5, -1, true},  // more pairs than one ticket group (1024): a smaller last group
};

struct DeviceSecondOrder {
  SecondOrderProblem problem;
  DeviceBuffer<int64_t> x_len, y_len;
  DeviceSecondOrder(const Case& c, const Inputs& in) : x_len(c.batch), y_len(c.batch) {
    problem = SecondOrderProblem{c.batch, c.n, c.m, c.gamma, c.bandwidth, nullptr, nullptr};
    if (c.lengths) {
      x_len.upload(std::vector<int64_t>(in.x_len.begin(), in.x_len.end()));
      y_len.upload(std::vector<int64_t>(in.y_len.begin(), in.y_len.end()));
      problem.x_len = x_len.get();
      problem.y_len = y_len.get();
    }
  }
};

template <typename In>
std::vector<double> run_alignment_backward(const Case& c, const Inputs& in, const std::vector<In>& D_host,
                                           const std::vector<double>& G_host) {
  DeviceSecondOrder dp(c, in);
  DeviceBuffer<In> D(D_host.size());
  DeviceBuffer<double> G(G_host.size()), E_dot(G_host.size());
  DeviceBuffer<char> workspace(alignment_backward_workspace_bytes(dp.problem));
  D.upload(D_host);
  G.upload(G_host);
  E_dot.poison();
  workspace.poison();
  alignment_backward<In>(dp.problem, D.get(), G.get(), E_dot.get(), workspace.get(), nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return E_dot.download();
}

// The reference's H G per pair, on D as the kernel reads it (float inputs widened exactly).
std::vector<double> reference_E_dot(const Case& c, const Inputs& in, const std::vector<double>& D,
                                    const std::vector<double>& G) {
  return reference::soft_dtw_hessian_product_cost_batch(D.data(), G.data(), shape_of(c, in), options_of(c)).E_dot;
}

// |G|'s largest entry inside the lengths over gamma: the size of the product's terms (a weight's
// derivative is the weight over gamma times a difference of R_dot, itself of |G|'s size).
double direction_scale(const Case& c, const Inputs& in, const std::vector<double>& G) {
  double direction = 0;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < in.x_len[b]; ++i)
      for (int64_t j = 0; j < in.y_len[b]; ++j) direction = std::max(direction, std::abs(G[(b * c.n + i) * c.m + j]));
  return direction / c.gamma;
}

// max |got - want| over max(max |want|, floor). The float64 weights' product takes floor 0, or the
// direction's scale where the product vanishes (one row or one column: E is constant), since its
// terms cancel only to their rounding there.
double scaled_error(const std::vector<double>& got, const std::vector<double>& want, double floor) {
  double worst = 0, scale = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    if (!std::isfinite(got[k])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(got[k] - want[k]));
    scale = std::max(scale, std::abs(want[k]));
  }
  return worst / std::max(std::max(scale, floor), 1e-300);
}

double float64_error(const Case& c, const Inputs& in, const std::vector<double>& G, const std::vector<double>& got,
                     const std::vector<double>& want) {
  const bool vanishes = std::all_of(want.begin(), want.end(), [](double v) { return v == 0.0; });
  return scaled_error(got, want, vanishes ? direction_scale(c, in, G) : 0.0);
}

void expect_zero_padding(const Case& c, const Inputs& in, const std::vector<double>& E_dot) {
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j)
        if (i >= in.x_len[b] || j >= in.y_len[b]) {
          ASSERT_EQ(E_dot[(b * c.n + i) * c.m + j], 0.0) << c << " pair " << b << " cell " << i << ", " << j;
        }
}

// G drawn at random everywhere; its padding holds NaN, which the kernel must not read.
std::vector<double> direction(std::mt19937_64& rng, const Case& c, const Inputs& in) {
  std::vector<double> G = normal<double>(rng, c.batch * c.n * c.m);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.n; ++i)
      for (int64_t j = 0; j < c.m; ++j)
        if (i >= in.x_len[b] || j >= in.y_len[b]) G[(b * c.n + i) * c.m + j] = std::nan("");
  return G;
}

class AlignmentBackward : public ::testing::TestWithParam<Case> {};

TEST_P(AlignmentBackward, Float64MatchesReference) {
  SDTW_REQUIRE_GPU();
  const Case& c = GetParam();
  auto rng = seeded_rng("alignment_backward, float64");
  const Inputs in = draw_inputs(rng, c);
  const std::vector<double> D = cost_tensor<double>(c, in), G = direction(rng, c, in);
  const std::vector<double> want = reference_E_dot(c, in, D, G), got = run_alignment_backward<double>(c, in, D, G);
  EXPECT_LE(float64_error(c, in, G, got, want), 1e-10) << c;
  expect_zero_padding(c, in, got);
  // With one row or one column there is one path, E is constant and its derivative 0.
  double largest = 0;
  for (double v : want) largest = std::max(largest, std::abs(v));
  if (c.n > 1 && c.m > 1) {
    EXPECT_GT(largest, 1e-3) << c << ": a vanishing product tests nothing";
  }
}

// A float32 cost's weights are saved as float32 (the float64 ones take 9x the forward's time): the
// product's error is then theirs, 2^-24 relative a weight entering through weight differences over
// gamma, so it is bounded against the direction's scale |G| / gamma, not against H G, which can be
// far smaller (lab/python/hvp_quantised.py: 7e-4 of H G where |H G| / |G| is 3e-4).
TEST_P(AlignmentBackward, Float32CostWithinFloat32Weights) {
  SDTW_REQUIRE_GPU();
  const Case& c = GetParam();
  auto rng = seeded_rng("alignment_backward, float32 cost");
  const Inputs in = draw_inputs(rng, c);
  const std::vector<float> D = cost_tensor<float>(c, in);
  const std::vector<double> G = direction(rng, c, in);
  const std::vector<double> want = reference_E_dot(c, in, to_double(D), G);
  const std::vector<double> got = run_alignment_backward<float>(c, in, D, G);
  const double error = scaled_error(got, want, direction_scale(c, in, G));
  EXPECT_LE(error, kFloat32WeightsTol) << c;
  std::printf("[ float32  ] %s: scaled error %.3g\n", ::testing::PrintToString(c).c_str(), error);
  expect_zero_padding(c, in, got);
}

INSTANTIATE_TEST_SUITE_P(Shapes, AlignmentBackward, ::testing::ValuesIn(kCases));

// Pair 0: a NaN in G inside its lengths; pair 1: an infinite cost on every path (no finite value);
// pair 2: clean. The first two are NaN inside their lengths and 0 beyond, the third equals the reference.
TEST(AlignmentBackwardNonFinite, UndefinedPairsAreNaNAndTheOthersUntouched) {
  SDTW_REQUIRE_GPU();
  const Case c{3, 6, 5, 2, 0.5, -1, true};
  auto rng = seeded_rng("alignment_backward, non-finite");
  Inputs in = draw_inputs(rng, c);
  in.x_len = {4, 6, 5};
  in.y_len = {5, 5, 3};
  std::vector<double> D = cost_tensor<double>(c, in), G = direction(rng, c, in);
  G[(0 * c.n + 3) * c.m + 4] = std::nan("");
  D[(1 * c.n + 0) * c.m + 0] = std::numeric_limits<double>::infinity();  // every path starts at (0, 0)
  const std::vector<double> got = run_alignment_backward<double>(c, in, D, G);
  const std::size_t cells = c.n * c.m;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.n); ++i)
      for (std::size_t j = 0; j < static_cast<std::size_t>(c.m); ++j) {
        const double v = got[b * cells + i * c.m + j];
        if (i < static_cast<std::size_t>(in.x_len[b]) && j < static_cast<std::size_t>(in.y_len[b]))
          ASSERT_TRUE(std::isnan(v)) << "pair " << b << " (" << i << ", " << j << ")";
        else
          ASSERT_EQ(v, 0.0) << "pair " << b << " (" << i << ", " << j << ")";
      }
  const Case clean{1, c.n, c.m, c.dim, c.gamma, -1, true};
  Inputs one;
  one.x_len = {in.x_len[2]};
  one.y_len = {in.y_len[2]};
  const std::vector<double> D2(D.begin() + 2 * cells, D.end()), G2(G.begin() + 2 * cells, G.end());
  const std::vector<double> want = reference_E_dot(clean, one, D2, G2);
  EXPECT_LE(float64_error(clean, one, G2, std::vector<double>(got.begin() + 2 * cells, got.end()), want), 1e-10);
}

// The product captured once in a CUDA graph (its R_dot sweep starts beside the forward) and replayed
// on new costs and directions: each replay gives what a direct call gives, bit for bit, on a shape
// whose strips reuse ring slots and on one with lengths and a band.
TEST(AlignmentBackwardGraph, ReplaysOnNewInputsAsDirectCalls) {
  SDTW_REQUIRE_GPU();
  for (const Case& c : {Case{3, 300, 40, 2, 0.5}, Case{5, 40, 29, 3, 1.0, 12, true}}) {
    auto rng = seeded_rng("alignment_backward, graph");
    Inputs in = draw_inputs(rng, c);
    DeviceSecondOrder dp(c, in);
    DeviceBuffer<float> D(c.batch * c.n * c.m);
    DeviceBuffer<double> G(c.batch * c.n * c.m), E_dot(c.batch * c.n * c.m);
    DeviceBuffer<char> workspace(alignment_backward_workspace_bytes(dp.problem));
    workspace.poison();
    cudaStream_t stream;
    SDTW_CUDA_OK(cudaStreamCreate(&stream));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    SDTW_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    alignment_backward<float>(dp.problem, D.get(), G.get(), E_dot.get(), workspace.get(), stream);
    SDTW_CUDA_OK(cudaStreamEndCapture(stream, &graph));
    SDTW_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 3; ++replay) {
      const Inputs drawn = draw_inputs(rng, c);
      Inputs next = in;  // the lengths are the captured ones
      next.x = drawn.x;
      next.y = drawn.y;
      const std::vector<float> D_host = cost_tensor<float>(c, next);
      const std::vector<double> G_host = direction(rng, c, next);
      D.upload(D_host);
      G.upload(G_host);
      E_dot.poison();
      SDTW_CUDA_OK(cudaGraphLaunch(exec, stream));
      SDTW_CUDA_OK(cudaStreamSynchronize(stream));
      const std::vector<double> replayed = E_dot.download(), direct = run_alignment_backward<float>(c, next, D_host, G_host);
      ASSERT_EQ(replayed.size(), direct.size());
      for (std::size_t k = 0; k < direct.size(); ++k)
        ASSERT_EQ(std::memcmp(&replayed[k], &direct[k], sizeof(double)), 0) << c << " replay " << replay << " cell " << k;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

TEST(AlignmentBackwardParameters, BadOnesAreNamed) {
  const auto message = [](SecondOrderProblem p) {
    try {
      alignment_backward_workspace_bytes(p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({0, 4, 4, 1.0}).find("batch must be >= 1 (got 0)"), std::string::npos);
  EXPECT_NE(message({1, 0, 4, 1.0}).find("n (length of x) must be >= 1 (got 0)"), std::string::npos);
  EXPECT_NE(message({1, 4, 0, 1.0}).find("m (length of y) must be >= 1 (got 0)"), std::string::npos);
  EXPECT_NE(message({1, 4, 4, 0.0}).find("gamma must be finite and >= 2.22507e-308 (the smallest normal double; got 0)"),
            std::string::npos);
  // A subnormal gamma's reciprocal is infinite: the sweeps would turn finite inputs into NaN.
  EXPECT_NE(message({1, 4, 4, 4.9e-324}).find("gamma must be finite and >= 2.22507e-308"), std::string::npos);
  EXPECT_NE(message({1, 4, 9, 1.0, 2}).find("bandwidth 2 leaves no alignment path for n = 4, m = 9"),
            std::string::npos);
  const std::string too_large =
      "batch * n * m is too large for a workspace: at 24 bytes a cell of rows padded to 32 and the strips' ring it "
      "must total <= 2^62 bytes";
  EXPECT_NE(message({1, int64_t{1} << 30, int64_t{1} << 30, 1.0}).find(too_large), std::string::npos);
  // One row a pair is padded to a strip of 32: 2^56 cells take 32 times their 24 bytes, past 2^64.
  EXPECT_NE(message({int64_t{1} << 36, 1, int64_t{1} << 20, 1.0}).find(too_large), std::string::npos);
  EXPECT_EQ(message({2, 4, 9, 1.0, 5}), "no error");
  // The weights (16 bytes a cell) and R_dot (8), and a ring of borders that grows with the columns alone.
  const double cells = 2.0 * 1024 * 1024;
  const double per_cell = static_cast<double>(alignment_backward_workspace_bytes({2, 1024, 1024, 1.0})) / cells;
  EXPECT_GE(per_cell, 24.0);
  EXPECT_LE(per_cell, 25.5);
  const SecondOrderProblem p{1, 4, 4, 1.0};
  double buffer[1] = {0};
  EXPECT_THROW(alignment_backward<double>(p, nullptr, buffer, buffer, buffer, nullptr), std::invalid_argument);
  EXPECT_THROW(alignment_backward<double>(p, buffer, buffer, buffer, nullptr, nullptr), std::invalid_argument);
  void* misaligned = reinterpret_cast<char*>(buffer) + 4;
  try {
    alignment_backward<double>(p, buffer, buffer, buffer, misaligned, nullptr);
    ADD_FAILURE() << "a misaligned workspace was accepted";
  } catch (const std::invalid_argument& e) {
    std::ostringstream address;
    address << misaligned;
    EXPECT_NE(std::string(e.what()).find("workspace must be aligned to 16 bytes (got address " + address.str() + ")"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sdtw::kernels::testing
