// The checkpointed mode against the full state: one fused float32 forward + backward, timed with
// CUDA events. Counters: DP cells per second, and the device bytes the step holds (inputs,
// gradients, values and workspace: the kernels allocate nothing else), which is its peak. Checks of
// the step's gradient: all finite; translation invariance (shifting x and y by one vector leaves the
// squared-Euclidean cost unchanged, so sum_i grad_x_i + sum_j grad_y_j = 0, which a band whose share
// is lost or counted twice breaks); and, where the run before it was the full state at the same size,
// the relative L2 distance to the full state's gradient. band_rows 0 runs the full state. Run:
//   sdtw_kernels_checkpoint_bench --benchmark_counters_tabular=true
//   --benchmark_filter='N:131072/'  (the time-per-cell ratio at N = M = 2^17)
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "device_buffers.hpp"
#include "event_timing.hpp"
#include "sdtw/kernels/checkpoint.hpp"

namespace {

using sdtw::kernels::bench::Buffers;
using sdtw::kernels::bench::check;
using sdtw::kernels::bench::time_with_events;

float* normal_series(Buffers& buf, int64_t count, unsigned seed) {
  float* d = buf.alloc<float>(count);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> host(count);
  for (auto& v : host) v = normal(rng);
  check(cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

struct Gradient {
  std::vector<float> x, y;
};

Gradient to_host(const float* gx, const float* gy, int64_t x_count, int64_t y_count) {
  Gradient g{std::vector<float>(x_count), std::vector<float>(y_count)};
  check(cudaMemcpy(g.x.data(), gx, x_count * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(g.y.data(), gy, y_count * sizeof(float), cudaMemcpyDeviceToHost));
  return g;
}

bool all_finite(const Gradient& g) {
  for (const auto* v : {&g.x, &g.y})
    for (float e : *v)
      if (!std::isfinite(e)) return false;
  return true;
}

// The largest over pairs and features of |sum_i grad_x_i + sum_j grad_y_j| / (sum |grad_x_i| + sum |grad_y_j|).
double translation_residual(const Gradient& g, int64_t B, int64_t N, int64_t M, int64_t D) {
  double worst = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t d = 0; d < D; ++d) {
      double sum = 0, size = 0;
      for (int64_t i = 0; i < N; ++i) sum += g.x[(b * N + i) * D + d], size += std::abs(g.x[(b * N + i) * D + d]);
      for (int64_t j = 0; j < M; ++j) sum += g.y[(b * M + j) * D + d], size += std::abs(g.y[(b * M + j) * D + d]);
      worst = std::max(worst, size > 0 ? std::abs(sum) / size : 1.0);
    }
  return worst;
}

double relative_l2(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < want.size(); ++k) {
    diff += (double(got[k]) - want[k]) * (double(got[k]) - want[k]);
    norm += double(want[k]) * want[k];
  }
  return std::sqrt(diff / norm);
}

// The full state's gradient of each (B, N, D) that ran, for the checkpointed runs after it.
std::map<std::tuple<int64_t, int64_t, int64_t>, Gradient>& full_gradients() {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, Gradient> kept;
  return kept;
}

void BM_Checkpoint(benchmark::State& state) {
  const int64_t B = state.range(0), N = state.range(1), D = state.range(2), band_rows = state.range(3);
  const sdtw::kernels::Problem p{B, N, N, D, 1.0};
  std::size_t free_before = 0, free_after = 0, total = 0;
  check(cudaMemGetInfo(&free_before, &total));
  Buffers buf;
  float* x = normal_series(buf, B * N * D, 1);
  float* y = normal_series(buf, B * N * D, 2);
  float* gx = buf.alloc<float>(B * N * D);
  float* gy = buf.alloc<float>(B * N * D);
  float* values = buf.alloc<float>(B);
  const std::vector<float> ones(B, 1.0f);
  float* dvalues = buf.alloc<float>(B);
  check(cudaMemcpy(dvalues, ones.data(), B * sizeof(float), cudaMemcpyHostToDevice));
  const std::size_t workspace_bytes = band_rows > 0 ? sdtw::kernels::checkpoint_workspace_bytes<float>(p, band_rows)
                                                    : sdtw::kernels::workspace_bytes<float>(p);
  char* workspace = buf.alloc<char>(workspace_bytes);
  check(cudaMemGetInfo(&free_after, &total));
  const auto step = [&] {
    if (band_rows > 0) {
      sdtw::kernels::sqeuclidean_checkpoint_forward<float>(p, band_rows, x, y, values, workspace, nullptr);
      sdtw::kernels::sqeuclidean_checkpoint_backward<float>(p, band_rows, x, y, dvalues, gx, gy, workspace, nullptr);
    } else {
      sdtw::kernels::sqeuclidean_forward<float>(p, x, y, values, workspace, nullptr);
      sdtw::kernels::sqeuclidean_backward<float>(p, x, y, dvalues, gx, gy, workspace, nullptr);
    }
  };
  // A warm-up step, except where one step takes minutes (2^40 cells) and its launch overheads are noise.
  const double cells = double(B) * N * N;
  time_with_events(state, step, cells < 0x1p38);
  state.counters["cells_per_s"] = benchmark::Counter(cells, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns_per_cell"] =
      benchmark::Counter(cells * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["step_GB"] = double(free_before - free_after) / 1e9;
  Gradient g = to_host(gx, gy, B * N * D, B * N * D);
  state.counters["grad_finite"] = all_finite(g) ? 1 : 0;
  state.counters["translation_residual"] = translation_residual(g, B, N, N, D);
  const auto key = std::make_tuple(B, N, D);
  const auto full = full_gradients().find(key);
  state.counters["grad_x_vs_full"] = band_rows > 0 && full != full_gradients().end() ? relative_l2(g.x, full->second.x) : -1;
  state.counters["grad_y_vs_full"] = band_rows > 0 && full != full_gradients().end() ? relative_l2(g.y, full->second.y) : -1;
  if (band_rows == 0) full_gradients()[key] = std::move(g);
  state.SetLabel(band_rows > 0 ? "checkpoint" : "full");
}

// The checkpointed mode's targets: the ratio at 2^17 (full against bands of 2048, 16384 and 65536 rows), the
// peak at 2^20 with bands of 2048 rows, and B = 16 at 2^16 with bands of 1024. One step at 2^20 (a
// few minutes at 2048-row bands), so that reproduce.sh's part stays within its limit.
BENCHMARK(BM_Checkpoint)
    ->ArgNames({"B", "N", "D", "band_rows"})
    ->Args({1, 1 << 17, 8, 0})
    ->Args({1, 1 << 17, 8, 2048})
    ->Args({1, 1 << 17, 8, 16384})
    ->Args({1, 1 << 17, 8, 65536})
    ->Args({16, 1 << 16, 8, 1024})
    ->UseManualTime()
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Checkpoint)
    ->ArgNames({"B", "N", "D", "band_rows"})
    ->Args({1, 1 << 20, 8, 2048})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
