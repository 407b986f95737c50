// Forward + backward of both modes on the device, timed with CUDA events; counters give DP cells
// per second and the workspace per cell. BM_SecondOrder sets the Hessian-vector product in cost space
// (alignment_backward) beside the fused backward alone. Run: sdtw_kernels_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <random>
#include <vector>

#include "device_buffers.hpp"
#include "event_timing.hpp"
#include "sdtw/kernels/second_order.hpp"
#include "sdtw/kernels/soft_dtw.hpp"

namespace {

using sdtw::kernels::bench::Buffers;
using sdtw::kernels::bench::check;
using sdtw::kernels::bench::time_prepared_with_events;
using sdtw::kernels::bench::time_with_events;

// D(b, i, j) = ||x_i - y_j||^2: the cost tensor a user would hand to the unfused mode.
__global__ void sqeuclidean_cost(const float* x, const float* y, float* D, int64_t n, int64_t m, int64_t dim) {
  const int64_t b = blockIdx.z, i = blockIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= m) return;
  float acc = 0;
  for (int64_t d = 0; d < dim; ++d) {
    const float diff = x[(b * n + i) * dim + d] - y[(b * m + j) * dim + d];
    acc += diff * diff;
  }
  D[(b * n + i) * m + j] = acc;
}

// x and y (B x N x D, normal), values, unit upstream gradients and the workspace of one step.
struct Step {
  float *x, *y, *values, *dvalues;
  char* workspace;
  size_t workspace_bytes;
  Step(Buffers& buf, const sdtw::kernels::Problem& p) {
    const int64_t count = p.batch * p.n * p.dim;
    x = buf.alloc<float>(count);
    y = buf.alloc<float>(count);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    std::vector<float> host(count);
    for (auto& v : host) v = normal(rng);
    check(cudaMemcpy(x, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    for (auto& v : host) v = normal(rng);
    check(cudaMemcpy(y, host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    values = buf.alloc<float>(p.batch);
    dvalues = buf.alloc<float>(p.batch);
    std::vector<float> ones(p.batch, 1.0f);
    check(cudaMemcpy(dvalues, ones.data(), p.batch * 4, cudaMemcpyHostToDevice));
    workspace_bytes = sdtw::kernels::workspace_bytes<float>(p);
    workspace = buf.alloc<char>(workspace_bytes);
  }
};

// Times step() with CUDA events, one warm-up first; counters: DP cells per second, workspace per cell.
template <typename F>
void time_steps(benchmark::State& state, const sdtw::kernels::Problem& p, size_t workspace_bytes, F&& step) {
  time_with_events(state, step);
  const double cells = double(p.batch) * p.n * p.m;
  state.counters["cells_per_s"] = benchmark::Counter(cells, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["workspace_B_per_cell"] = double(workspace_bytes) / cells;
}

void BM_SoftDtw(benchmark::State& state) {
  const int64_t B = state.range(0), N = state.range(1), D = state.range(2);
  const bool fused = state.range(3) != 0;
  const sdtw::kernels::Problem p{B, N, N, D, 1.0};
  Buffers buf;
  const Step in(buf, p);
  float *x = in.x, *y = in.y, *values = in.values, *dvalues = in.dvalues;
  char* workspace = in.workspace;
  const size_t ws = in.workspace_bytes;
  float *gx = nullptr, *gy = nullptr, *cost = nullptr, *E = nullptr;
  if (fused) {
    gx = buf.alloc<float>(B * N * D);
    gy = buf.alloc<float>(B * N * D);
  } else {
    cost = buf.alloc<float>(B * N * N);
    E = buf.alloc<float>(B * N * N);
    sqeuclidean_cost<<<dim3((N + 127) / 128, N, B), 128>>>(x, y, cost, N, N, D);
    check(cudaGetLastError());
  }
  time_steps(state, p, ws, [&] {
    if (fused) {
      sdtw::kernels::sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr);
      sdtw::kernels::sqeuclidean_backward<float>(p, x, y, dvalues, gx, gy, workspace, nullptr);
    } else {
      sdtw::kernels::cost_forward<float>(p, cost, values, workspace, nullptr);
      sdtw::kernels::cost_backward<float>(p, dvalues, E, workspace, nullptr);
    }
  });
  state.SetLabel(fused ? "fused" : "unfused");
}

// The fused step of each cost the kernels define, against squared Euclidean (cost 0) at the same
// shapes: each is to take at most 1.2x its time.
void BM_FusedCost(benchmark::State& state) {
  const int64_t B = state.range(0), N = state.range(1), D = state.range(2);
  const auto cost = static_cast<sdtw::kernels::Cost>(state.range(3));
  const sdtw::kernels::Problem p{B, N, N, D, 1.0};
  Buffers buf;
  const Step in(buf, p);
  float* gx = buf.alloc<float>(B * N * D);
  float* gy = buf.alloc<float>(B * N * D);
  time_steps(state, p, in.workspace_bytes, [&] {
    sdtw::kernels::fused_forward<float>(p, cost, in.x, in.y, in.values, in.workspace, nullptr);
    sdtw::kernels::fused_backward<float>(p, cost, in.x, in.y, in.dvalues, gx, gy, in.workspace, nullptr);
  });
  constexpr const char* kNames[] = {"sqeuclidean", "l1", "euclidean", "cosine", "negative_dot"};
  state.SetLabel(kNames[state.range(3)]);
}

// part 0: the fused squared-Euclidean backward alone (its forward runs before each step, untimed);
// part 1: one Hessian-vector product in cost space, alignment_backward on the same pairs' cost
// tensor and a float64 direction, the kernel the double backward runs. Counters: the product's
// workspace per cell, and its step's bytes per cell (workspace, the float32 cost tensor, the float64
// direction and result).
void BM_SecondOrder(benchmark::State& state) {
  const int64_t B = state.range(0), N = state.range(1), D = state.range(2);
  const bool product = state.range(3) != 0;
  const sdtw::kernels::Problem p{B, N, N, D, 1.0};
  const double cells = double(B) * N * N;
  Buffers buf;
  const Step in(buf, p);
  if (!product) {
    float* gx = buf.alloc<float>(B * N * D);
    float* gy = buf.alloc<float>(B * N * D);
    time_prepared_with_events(
        state, [&] { sdtw::kernels::sqeuclidean_forward<float>(p, in.x, in.y, in.values, in.workspace, nullptr); },
        [&] { sdtw::kernels::sqeuclidean_backward<float>(p, in.x, in.y, in.dvalues, gx, gy, in.workspace, nullptr); });
    state.counters["workspace_B_per_cell"] = double(in.workspace_bytes) / cells;
    state.counters["step_B_per_cell"] = double(in.workspace_bytes) / cells;
    state.SetLabel("backward");
  } else {
    sdtw::kernels::SecondOrderProblem sp;
    sp.batch = B, sp.n = N, sp.m = N, sp.gamma = p.gamma;
    float* cost = buf.alloc<float>(B * N * N);
    sqeuclidean_cost<<<dim3((N + 127) / 128, N, B), 128>>>(in.x, in.y, cost, N, N, D);
    check(cudaGetLastError());
    std::mt19937 rng(2);
    std::normal_distribution<double> normal;
    std::vector<double> host(B * N * N);
    for (auto& v : host) v = normal(rng);
    double* direction = buf.alloc<double>(host.size());
    check(cudaMemcpy(direction, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
    double* result = buf.alloc<double>(host.size());
    const size_t ws = sdtw::kernels::alignment_backward_workspace_bytes(sp);
    char* workspace = buf.alloc<char>(ws);
    time_with_events(state, [&] { sdtw::kernels::alignment_backward<float>(sp, cost, direction, result, workspace, nullptr); });
    state.counters["workspace_B_per_cell"] = double(ws) / cells;
    state.counters["step_B_per_cell"] = (double(ws) + cells * (sizeof(float) + 2 * sizeof(double))) / cells;
    state.SetLabel("hessian product");
  }
  state.counters["cells_per_s"] = benchmark::Counter(cells, benchmark::Counter::kIsIterationInvariantRate);
}

// {B, N = M, D, fused}
BENCHMARK(BM_SoftDtw)
    ->ArgNames({"B", "N", "D", "fused"})
    ->Args({16, 128, 64, 1})->Args({16, 128, 64, 0})
    ->Args({32, 512, 64, 1})->Args({32, 512, 64, 0})
    ->Args({32, 512, 128, 1})->Args({32, 512, 128, 0})
    ->Args({32, 2048, 64, 1})->Args({32, 2048, 64, 0})
    ->Args({8, 4096, 16, 1})->Args({8, 4096, 16, 0})
    ->Args({1, 8192, 8, 1})->Args({1, 8192, 8, 0})
    ->Args({1, 65536, 8, 1})
    ->Args({1024, 1024, 64, 1})->Args({16, 8192, 16, 1})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

// {B, N = M, D, cost}: the two shapes where each fused cost is held to 1.2x squared Euclidean, every
// cost (Cost's order).
BENCHMARK(BM_FusedCost)
    ->ArgNames({"B", "N", "D", "cost"})
    ->ArgsProduct({{32}, {512}, {64}, {0, 1, 2, 3, 4}})
    ->ArgsProduct({{16}, {2048}, {64}, {0, 1, 2, 3, 4}})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

// {B, N = M, D, part}: the product is to take at most 3x the backward at B32 N512 D64.
BENCHMARK(BM_SecondOrder)
    ->ArgNames({"B", "N", "D", "part"})
    ->Args({32, 512, 64, 0})->Args({32, 512, 64, 1})
    ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
