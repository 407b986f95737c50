// The checkpointed mode against the full-state kernels (values and E bit for bit, the fused
// gradient to rounding) and against the float64 reference, at shapes whose bands of rows cut the
// pairs in many places; its CUDA-graph capture; its workspace and its argument errors.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "harness.hpp"
#include "sdtw/kernels/checkpoint.hpp"

namespace sdtw::kernels::testing {
namespace {

struct BandCase {
  Case c;
  int64_t band_rows;
};

std::ostream& operator<<(std::ostream& os, const BandCase& bc) { return os << bc.c << " band_rows=" << bc.band_rows; }

// Bands of 128 rows (the smallest) over up to 1000 rows: n = 1, a band taller than n, n and m not
// multiples of a band or a strip, bands with lengths that end in any band, a Sakoe-Chiba band, exact DTW.
const std::vector<BandCase> kBandCases = {
    {{1, 1, 50, 4, 0.5}, 128},
    {{2, 100, 90, 4, 1.0}, 128},
    {{2, 300, 200, 3, 1.0}, 128},
    {{1, 129, 1, 2, 1.0}, 128},
    {{3, 257, 257, 5, 0.1, 20}, 128},
    {{4, 400, 130, 8, 1.0, -1, true}, 128},
    {{3, 130, 400, 2, 0.01, -1, true}, 128},
    {{1, 1000, 64, 3, 1.0}, 128},
    {{2, 640, 700, 16, 0.3, 100, true}, 256},
    {{2, 300, 280, 4, 0.0}, 128},
    {{5, 515, 33, 7, 2.0, -1, true}, 128},
};

class Checkpoint : public ::testing::TestWithParam<BandCase> {};

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The recomputation runs the full-state forward's operations on the same float64 R, so the values
// and every E are the same bits; the reference, on the same cost tensor, within agreement_test's bounds.
template <typename T>
void check_cost_mode(const BandCase& bc, double value_tol, double grad_tol) {
  auto rng = seeded_rng("checkpoint cost mode");
  const Inputs in = draw_inputs(rng, bc.c);
  const std::vector<T> D = cost_tensor<T>(bc.c, in);
  const Outputs<T> full = run_cost_mode<T>(bc.c, in, D);
  const Outputs<T> got = run_cost_mode<T>(bc.c, in, D, bc.band_rows);
  EXPECT_TRUE(same_bits(got.values, full.values)) << bc;
  EXPECT_TRUE(same_bits(got.E, full.E)) << bc;
  const Expected want = reference_on_cost<T>(bc.c, in, to_double(D));
  EXPECT_LE(max_relative(got.values, want.values), value_tol) << bc;
  EXPECT_LE(relative_l2(got.E, want.E), grad_tol) << bc;
}

// grad_x takes each row's E in one band, as the full state does: the same bits. grad_y sums the
// bands' float32 shares in float64, so it agrees to rounding. At gamma = 0 the reference's path on
// its float64 cost may differ from the one on the kernels' float cost: hard_min_test holds the
// full state to it, and the checkpointed mode equals the full state.
template <typename T>
void check_fused_mode(const BandCase& bc, double grad_y_tol, double value_tol, double grad_tol) {
  auto rng = seeded_rng("checkpoint fused mode");
  const Inputs in = draw_inputs(rng, bc.c);
  const Outputs<T> full = run_fused_mode<T>(bc.c, in);
  const Outputs<T> got = run_fused_mode<T>(bc.c, in, nullptr, bc.band_rows);
  EXPECT_TRUE(same_bits(got.values, full.values)) << bc;
  EXPECT_TRUE(same_bits(got.grad_x, full.grad_x)) << bc;
  EXPECT_LE(relative_l2(got.grad_y, to_double(full.grad_y)), grad_y_tol) << bc;
  if (bc.c.gamma == 0.0) return;
  const Expected want = reference_for<T>(bc.c, in, false);
  EXPECT_LE(max_relative(got.values, want.values), value_tol) << bc;
  EXPECT_LE(relative_l2(got.grad_x, want.grad_x), grad_tol) << bc;
  EXPECT_LE(relative_l2(got.grad_y, want.grad_y), grad_tol) << bc;
}

TEST_P(Checkpoint, CostModeFloat) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<float>(GetParam(), 1e-5, 1e-4);
}
TEST_P(Checkpoint, CostModeDouble) {
  SDTW_REQUIRE_GPU();
  check_cost_mode<double>(GetParam(), 1e-12, 1e-10);
}
// The full state's grad_y sums a column's n rows in float, the bands' shares meet in float64: their
// rounding differs by about sqrt(n) float ulps (up to 2e-6 at n = 1000 on fresh seeds, H100).
double float_grad_y_tol(int64_t n) { return std::max(1e-6, 4 * std::sqrt(static_cast<double>(n)) * 0x1p-24); }

TEST_P(Checkpoint, FusedFloat) {
  SDTW_REQUIRE_GPU();
  check_fused_mode<float>(GetParam(), float_grad_y_tol(GetParam().c.n), 1e-5, 1e-4);
}
TEST_P(Checkpoint, FusedDouble) {
  SDTW_REQUIRE_GPU();
  check_fused_mode<double>(GetParam(), 1e-13, 1e-12, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Bands, Checkpoint, ::testing::ValuesIn(kBandCases));

// Forward and backward captured once and replayed twice on a fresh output each time: every replay
// gives the direct run's bits (the handoff and the scratch are reset inside the graph).
TEST(CheckpointGraph, CaptureAndReplayMatchTheDirectRun) {
  SDTW_REQUIRE_GPU();
  const BandCase bc{{3, 333, 150, 8, 0.5, -1, true}, 128};
  const Case& c = bc.c;
  auto rng = seeded_rng("checkpoint graph");
  const Inputs in = draw_inputs(rng, c);
  const Outputs<float> direct = run_fused_mode<float>(bc.c, in, nullptr, bc.band_rows);

  DeviceProblem dp(c, in);
  DeviceBuffer<float> x(in.x.size()), y(in.y.size()), values(c.batch), dvalues(c.batch), gx(in.x.size()),
      gy(in.y.size());
  DeviceBuffer<char> workspace(checkpoint_workspace_bytes<float>(dp.problem, bc.band_rows));
  x.upload(cast<float>(in.x));
  y.upload(cast<float>(in.y));
  dvalues.upload(cast<float>(in.dvalues));
  workspace.poison();
  cudaStream_t stream = nullptr;
  SDTW_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  SDTW_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  sqeuclidean_checkpoint_forward<float>(dp.problem, bc.band_rows, x.get(), y.get(), values.get(), workspace.get(), stream);
  sqeuclidean_checkpoint_backward<float>(dp.problem, bc.band_rows, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(),
                                         workspace.get(), stream);
  SDTW_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  SDTW_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    values.poison();
    gx.poison();
    gy.poison();
    SDTW_CUDA_OK(cudaGraphLaunch(exec, stream));
    SDTW_CUDA_OK(cudaStreamSynchronize(stream));
    EXPECT_TRUE(same_bits(values.download(), direct.values)) << "replay " << replay;
    EXPECT_TRUE(same_bits(gx.download(), direct.grad_x)) << "replay " << replay;
    EXPECT_TRUE(same_bits(gy.download(), direct.grad_y)) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The memory formula where the mode is meant to fit (2^20 in 16 GB; host arithmetic, no GPU): float, D = 8,
// B = 1.
// Kept rows B (n/S - 1) m 8 bytes, a band's state B S m 4 bytes and its ring, no n x m term.
TEST(CheckpointWorkspace, MeetsTheTargetsAtAMillionSteps) {
  Problem p{1, int64_t{1} << 20, int64_t{1} << 20, 8, 1.0};
  const std::size_t budget = 16'000'000'000;
  EXPECT_EQ(checkpoint_band_rows<float>(p, budget), 2048);
  const std::size_t bytes = checkpoint_workspace_bytes<float>(p, 2048);
  const double kept = 511.0 * (1 << 20) * 8, state = 2048.0 * (1 << 20) * 4;
  EXPECT_GE(static_cast<double>(bytes), kept + state);
  EXPECT_LE(static_cast<double>(bytes), (kept + state) * 1.07);  // the band's ring and scratch: under 7 %
  EXPECT_GT(static_cast<double>(workspace_bytes<float>(p)), 4e12);
  p.batch = 16;
  p.n = p.m = int64_t{1} << 16;
  EXPECT_LT(checkpoint_workspace_bytes<float>(p, 1024), std::size_t{10'000'000'000});
}

TEST(CheckpointWorkspace, TallerBandsTradeKeptRowsForState) {
  const Problem p{2, 5000, 3000, 4, 1.0};
  const std::size_t s128 = checkpoint_workspace_bytes<double>(p, 128), s1024 = checkpoint_workspace_bytes<double>(p, 1024);
  EXPECT_GT(s1024, s128);  // at m = 3000 the band's state outweighs the kept rows it saves
  EXPECT_EQ(checkpoint_band_rows<double>(p, s1024), 1024);
  EXPECT_EQ(checkpoint_band_rows<double>(p, s128), 128);
  EXPECT_EQ(checkpoint_band_rows<double>(p, s128 - 1), 0);
  // A band taller than n needs no more than one as tall as n.
  EXPECT_EQ(checkpoint_workspace_bytes<double>(p, 8192), checkpoint_workspace_bytes<double>(p, 5120));
}

template <typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no std::invalid_argument";
}

TEST(CheckpointWorkspace, BadArgumentsAreNamed) {
  Problem p{1, 100, 100, 2, 1.0};
  EXPECT_NE(message_of([&] { checkpoint_workspace_bytes<float>(p, 100); }).find("band_rows must be a positive multiple of 128 (got 100)"),
            std::string::npos);
  EXPECT_NE(message_of([&] { checkpoint_workspace_bytes<float>(p, 0); }).find("band_rows"), std::string::npos);
  p.constraint = {ConstraintKind::itakura, 0, 2.0};
  EXPECT_NE(message_of([&] { checkpoint_workspace_bytes<float>(p, 128); }).find("not itakura"), std::string::npos);
  p.constraint = {};
  const int64_t index = 0;
  p.x_index = p.y_index = &index;
  EXPECT_NE(message_of([&] { checkpoint_workspace_bytes<float>(p, 128); }).find("pair indices"), std::string::npos);
  p.x_index = p.y_index = nullptr;
  p.gamma = -1.0;
  EXPECT_NE(message_of([&] { checkpoint_workspace_bytes<float>(p, 128); }).find("gamma"), std::string::npos);
}

}  // namespace
}  // namespace sdtw::kernels::testing
