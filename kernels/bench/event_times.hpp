#pragma once
// CUDA-event times of a launch for the benchmarks outside Google Benchmark (the ladder, the lab's
// probes), one timing path so that their numbers compare.
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "device_buffers.hpp"

namespace sdtw::kernels::bench {

// Milliseconds of each of reps calls of launch on the default stream between two CUDA events,
// after warmup untimed calls and a device synchronisation.
inline std::vector<float> event_times_ms(const std::function<void()>& launch, int warmup, int reps) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start));
  check(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) launch();
  check(cudaGetLastError());
  check(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(start));
    launch();
    check(cudaEventRecord(stop));
    check(cudaEventSynchronize(stop));
    check(cudaGetLastError());
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
  }
  check(cudaEventDestroy(start));
  check(cudaEventDestroy(stop));
  return times;
}

}  // namespace sdtw::kernels::bench
