#pragma once
// The one timing path of the Google Benchmark kernel benchmarks, so that their times compare.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include "device_buffers.hpp"

namespace sdtw::kernels::bench {

// Each iteration's time is step()'s on the default stream between two CUDA events (manual time),
// after one warm-up step unless warm_up is false.
template <typename F>
void time_with_events(benchmark::State& state, F&& step, bool warm_up = true) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start));
  check(cudaEventCreate(&stop));
  if (warm_up) {
    step();
    check(cudaDeviceSynchronize());
  }
  for (auto _ : state) {
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

}  // namespace sdtw::kernels::bench
