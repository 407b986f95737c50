// Properties of the launches themselves: repeatable bit for bit, capturable in a CUDA graph,
// bad parameters rejected by name.
#include "harness.hpp"

namespace sdtw::kernels::testing {
namespace {

TEST(Launch, RepeatedRunsAreBitIdentical) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("repeat");
  const Case c{3, 150, 170, 8, 0.1, -1, true};
  const Inputs in = draw_inputs(rng, c);
  const auto a = run_fused_mode<float>(c, in), b = run_fused_mode<float>(c, in);
  EXPECT_EQ(0, std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.grad_x.data(), b.grad_x.data(), a.grad_x.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.grad_y.data(), b.grad_y.data(), a.grad_y.size() * sizeof(float)));
  const auto D = cost_tensor<float>(c, in);
  const auto e = run_cost_mode<float>(c, in, D), f = run_cost_mode<float>(c, in, D);
  EXPECT_EQ(0, std::memcmp(e.E.data(), f.E.data(), e.E.size() * sizeof(float)));
}

// Forward + backward captured once, replayed on new inputs: each replay matches the reference.
TEST(Launch, CapturedGraphReplaysOnNewInputs) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("graph");
  const Case c{4, 90, 77, 16, 0.5};
  Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<float> x(in.x.size()), y(in.y.size()), values(c.batch), dvalues(c.batch), gx(in.x.size()),
      gy(in.y.size());
  DeviceBuffer<char> workspace(workspace_bytes<float>(dp.problem));
  cudaStream_t stream;
  SDTW_CUDA_OK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  SDTW_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sqeuclidean_forward<float>(dp.problem, x.get(), y.get(), values.get(), workspace.get(), stream);
  sqeuclidean_backward<float>(dp.problem, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(), workspace.get(), stream);
  SDTW_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  SDTW_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    in = draw_inputs(rng, c);
    x.upload(cast<float>(in.x));
    y.upload(cast<float>(in.y));
    dvalues.upload(cast<float>(in.dvalues));
    gx.poison();
    SDTW_CUDA_OK(cudaGraphLaunch(exec, stream));
    SDTW_CUDA_OK(cudaStreamSynchronize(stream));
    const Expected want = reference_for<float>(c, in);
    EXPECT_LE(max_relative(values.download(), want.values), 1e-5) << "replay " << replay;
    EXPECT_LE(relative_l2(gx.download(), want.grad_x), 1e-4) << "replay " << replay;
    EXPECT_LE(relative_l2(gy.download(), want.grad_y), 1e-4) << "replay " << replay;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// The kernel and memset nodes of a captured forward + backward.
struct GraphNodes {
  int kernels = 0, memsets = 0;
};

// (void: the CUDA checks are fatal assertions.)
template <typename T>
void captured_step(const Case& c, GraphNodes& found) {
  auto rng = seeded_rng("nodes");
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<T> x(in.x.size()), y(in.y.size()), values(c.batch), dvalues(c.batch), gx(in.x.size()), gy(in.y.size());
  DeviceBuffer<char> workspace(workspace_bytes<T>(dp.problem));
  cudaStream_t stream;
  SDTW_CUDA_OK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  SDTW_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  sqeuclidean_forward<T>(dp.problem, x.get(), y.get(), values.get(), workspace.get(), stream);
  sqeuclidean_backward<T>(dp.problem, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(), workspace.get(), stream);
  SDTW_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  std::size_t count = 0;
  SDTW_CUDA_OK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  SDTW_CUDA_OK(cudaGraphGetNodes(graph, nodes.data(), &count));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    SDTW_CUDA_OK(cudaGraphNodeGetType(node, &type));
    found.kernels += type == cudaGraphNodeTypeKernel;
    found.memsets += type == cudaGraphNodeTypeMemset;
  }
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// One kernel per direction in float while every strip is resident at once (the forward's scratch
// is a memset); double, and problems with more strips than the device holds, add the gradient's
// own launch.
TEST(Launch, OneKernelPerDirectionWhileEveryStripIsResident) {
  SDTW_REQUIRE_GPU();
  for (const Case& c : {Case{4, 90, 77, 16, 0.5}, Case{16, 128, 128, 64, 1.0}, Case{2, 300, 1, 3, 1.0},
                        Case{1, 1, 1, 130, 1.0}}) {
    GraphNodes f;
    captured_step<float>(c, f);
    EXPECT_EQ(f.kernels, 2) << "float B" << c.batch << " N" << c.n << " M" << c.m << " D" << c.dim;
    EXPECT_EQ(f.memsets, 1);
  }
  GraphNodes d, large;
  captured_step<double>(Case{4, 90, 77, 16, 0.5}, d);
  EXPECT_EQ(d.kernels, 3);
  captured_step<float>(Case{512, 256, 64, 2, 1.0}, large);  // 4096 strips
  EXPECT_EQ(large.kernels, 3);
}

// dvalues read with a stride: 0 (one upstream gradient for every pair, the backward of a sum)
// and 3 give, bit for bit, the gradients of the same numbers laid out contiguously.
TEST(Launch, StridedUpstreamGradientsAreReadInPlace) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("dvalues stride");
  const Case c{5, 70, 45, 12, 1.0, -1, true};
  const Inputs in = draw_inputs(rng, c);
  DeviceProblem dp(c, in);
  DeviceBuffer<float> x(in.x.size()), y(in.y.size()), values(c.batch), gx(in.x.size()), gy(in.y.size());
  x.upload(cast<float>(in.x));
  y.upload(cast<float>(in.y));
  auto grads = [&](const std::vector<float>& host, int64_t stride) {
    DeviceBuffer<float> dvalues(host.size());
    DeviceBuffer<char> workspace(workspace_bytes<float>(dp.problem));
    dvalues.upload(host);
    sqeuclidean_forward<float>(dp.problem, x.get(), y.get(), values.get(), workspace.get(), nullptr);
    sqeuclidean_backward<float>(dp.problem, x.get(), y.get(), dvalues.get(), gx.get(), gy.get(), workspace.get(),
                                nullptr, stride);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return std::make_pair(gx.download(), gy.download());
  };
  const auto dv = cast<float>(in.dvalues);
  std::vector<float> spread(dv.size() * 3, 1e30f);
  for (std::size_t b = 0; b < dv.size(); ++b) spread[3 * b] = dv[b];
  EXPECT_EQ(grads(spread, 3), grads(dv, 1));
  EXPECT_EQ(grads({dv[0]}, 0), grads(std::vector<float>(dv.size(), dv[0]), 1));
}

// 70000 pairs with their own lengths: tickets in 69 groups of 1024 pairs (the last one smaller),
// and gradient and cost grids sliced at 65535 pairs in z.
TEST(Launch, BatchesBeyondOneGridSliceAndManyTicketGroups) {
  SDTW_REQUIRE_GPU();
  auto rng = seeded_rng("large batch");
  const Case c{70000, 5, 4, 3, 0.5, -1, true};
  const Inputs in = draw_inputs(rng, c);
  const Expected want = reference_for<float>(c, in);
  const auto fused = run_fused_mode<float>(c, in);
  EXPECT_LE(max_relative(fused.values, want.values), 1e-5);
  EXPECT_LE(relative_l2(fused.grad_x, want.grad_x), 1e-4);
  EXPECT_LE(relative_l2(fused.grad_y, want.grad_y), 1e-4);
  const auto unfused = run_cost_mode<float>(c, in, cost_tensor<float>(c, in));
  EXPECT_LE(max_relative(unfused.values, want.values), 1e-5);
  EXPECT_LE(relative_l2(unfused.E, want.E), 1e-4);
}

void expect_rejected(const Problem& p, const char* parameter) {
  try {
    (void)workspace_bytes<float>(p);
    ADD_FAILURE() << "accepted a problem with a bad " << parameter;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(parameter), std::string::npos) << e.what();
  }
}

TEST(Validation, BadParametersNameThemselves) {
  expect_rejected({0, 4, 4, 1, 1.0}, "batch");
  expect_rejected({1, 0, 4, 1, 1.0}, "n (length of x)");
  expect_rejected({1, 4, 0, 1, 1.0}, "m (length of y)");
  expect_rejected({1, 4, 4, 0, 1.0}, "dim");
  expect_rejected({1, 4, 4, 1, -1.0}, "gamma must be finite and >= 0 (got -1)");
  expect_rejected({1, 4, 4, 1, std::nan("")}, "gamma must be finite and >= 0");
  expect_rejected({1, 4, 4, 1, std::numeric_limits<double>::infinity()}, "gamma must be finite and >= 0 (got inf)");
  expect_rejected({1, 10, 4, 1, 1.0, 3}, "bandwidth");
}

// gamma = 0 is exact DTW, a valid problem (workspace_bytes validates on the host, no GPU needed).
TEST(Validation, GammaZeroIsAccepted) {
  EXPECT_NO_THROW((void)workspace_bytes<float>({1, 4, 4, 1, 0.0}));
  EXPECT_NO_THROW((void)values_workspace_bytes<double>({2, 5, 3, 1, 0.0, 2}));
}

TEST(Validation, NullPointersAreRejected) {
  const Problem p{1, 4, 4, 1, 1.0};
  EXPECT_THROW(cost_forward<float>(p, nullptr, nullptr, nullptr, nullptr), std::invalid_argument);
}

TEST(Validation, WorkspaceIsFourBytesPerCellForFloat) {
  const Problem p{2, 1000, 3000, 64, 1.0};
  const double cells = 2.0 * 1000 * 3000;
  // 32 strips of 32 rows per pair, m steps apart, and the last strip's 31-step skew; the ring of
  // 31 border slots of m doubles per pair; a claim word per 32 x 32 cost tile; 4 KB of counters.
  const double state = (2.0 * 32 * 3000 + 31) * 32 * 4, ring = 2.0 * 31 * 3000 * 8, claims = 2.0 * 32 * 94 * 4;
  const double bytes = static_cast<double>(workspace_bytes<float>(p));
  EXPECT_LE(bytes, state + ring + claims + 4096);
  EXPECT_GE(bytes, state + ring + claims);
  EXPECT_LE((bytes - ring) / cells, 4.0 * (1024.0 / 1000.0) + 0.01);
}

}  // namespace
}  // namespace sdtw::kernels::testing
