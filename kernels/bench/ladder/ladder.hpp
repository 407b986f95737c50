#pragma once
// The ladder's common parts: one timing method for every rung (CUDA events around one launch or
// one step, warm-up first), one output line per rung (JSON, read by kernels/bench/ladder_report.py),
// and the launch shape that fills the device for the synthetic rungs.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../device_buffers.hpp"

namespace sdtw::kernels::ladder {

using bench::Buffers;
using bench::check;

struct Settings {
  bool quick = false;
  int warmup = 3;
  int reps = 10;
  int64_t synthetic_cells = int64_t(1) << 29;  // cells of each synthetic rung's one configuration
};

// One rung at one point: what the report needs to place it and to compute its cells per second.
struct Rung {
  std::string rung;   // "0", "a", ..., "g"
  std::string label;  // what the rung adds, in a few words
  std::string mode;   // forward, backward-cell, hard-min, values, step, ...
  std::string previous;  // the rung it adds one piece to ("" for the ceiling)
  int64_t B = 0, N = 0, M = 0, D = 0;
  int64_t bandwidth = -1;
  bool lengths = false;
  int64_t cells = 0;
};

// Times `launch` (one kernel launch or one step on the default stream): warm-up calls, then one
// CUDA event pair per timed repetition; returns the repetitions' times in ms.
std::vector<float> time_ms(const std::function<void()>& launch, const Settings& settings);

// Writes one JSON line for the rung and its repetition times to stdout.
void emit(const Rung& rung, const std::vector<float>& times_ms, const Settings& settings);

// The number of threads to launch so that every SM holds as many blocks of `kernel` as it can, a
// whole number of times (`waves`), and the cells per thread that make about `cells` in all.
struct Shape {
  int blocks = 0;
  int threads = 0;
  int64_t columns = 0;  // columns of each thread's tile
};
Shape fill_device(const void* kernel, int threads_per_block, size_t shared_bytes, int rows_per_thread,
                  int64_t cells, int waves = 2);

// Fills v with values in [0, 1) from a hash of the index and salt (no host copy, no seed state).
void fill_uniform(float* v, int64_t count, uint32_t salt);

// The rung families, each in its own file.
void run_registers(const Settings& settings);   // rung 0
void run_inputs(const Settings& settings);      // rungs a, a', b, c
void run_production(const Settings& settings);  // rungs d to g

}  // namespace sdtw::kernels::ladder
