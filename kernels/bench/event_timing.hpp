#pragma once
// The one timing path of the Google Benchmark kernel benchmarks, so that their times compare.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include "device_buffers.hpp"

namespace sdtw::kernels::bench {

// Each iteration's time is step()'s on the default stream between two CUDA events (manual time),
// after prepare(), which is not timed (a step that consumes its input, as the backward consumes the
// forward's state), and after one warm-up unless warm_up is false.
template <typename Prepare, typename F>
void time_prepared_with_events(benchmark::State& state, Prepare&& prepare, F&& step, bool warm_up = true) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start));
  check(cudaEventCreate(&stop));
  if (warm_up) {
    prepare();
    step();
    check(cudaDeviceSynchronize());
  }
  for (auto _ : state) {
    prepare();
    check(cudaEventRecord(start));
    step();
    check(cudaEventRecord(stop));
    check(cudaEventSynchronize(stop));
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

template <typename F>
void time_with_events(benchmark::State& state, F&& step, bool warm_up = true) {
  time_prepared_with_events(state, [] {}, step, warm_up);
}

}  // namespace sdtw::kernels::bench
