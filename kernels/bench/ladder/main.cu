// sdtw_kernels_ladder: G cells/s from the hardware's ceiling (soft-DTW recurrences in registers) to
// the full fused step, one real piece added per rung, on one GPU in one process, every rung timed
// the same way. Prints one JSON line per rung (and a first one for the device); ladder_report.py
// turns them into ladder.csv and ladder.md. docs/DESIGN.md §4.8 describes the rungs.
//   sdtw_kernels_ladder [--quick] [--reps N] [--warmup N] > ladder.jsonl
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "../event_times.hpp"
#include "ladder.hpp"

namespace sdtw::kernels::ladder {

std::vector<float> time_ms(const std::function<void()>& launch, const Settings& settings) {
  return bench::event_times_ms(launch, settings.warmup, settings.reps);
}

namespace {

__global__ void fill_uniform_kernel(float* v, int64_t count, uint32_t salt) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += int64_t(gridDim.x) * blockDim.x)
    v[k] = static_cast<float>((static_cast<uint32_t>(k) * 2654435761u ^ salt) >> 8) * (1.0f / 16777216.0f);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void fill_uniform(float* v, int64_t count, uint32_t salt) {
  fill_uniform_kernel<<<1024, 256>>>(v, count, salt);
  check(cudaGetLastError());
}

void emit(const Rung& r, const std::vector<float>& times_ms, const Settings& settings) {
  std::string times;
  for (float t : times_ms) times += (times.empty() ? "" : ", ") + std::to_string(t);
  std::printf(
      "{\"rung\": %s, \"label\": %s, \"mode\": %s, \"previous\": %s, \"B\": %lld, \"N\": %lld, \"M\": %lld, "
      "\"D\": %lld, \"bandwidth\": %lld, \"lengths\": %s, \"cells\": %lld, \"warmup\": %d, \"times_ms\": [%s]}\n",
      quoted(r.rung).c_str(), quoted(r.label).c_str(), quoted(r.mode).c_str(), quoted(r.previous).c_str(),
      static_cast<long long>(r.B), static_cast<long long>(r.N), static_cast<long long>(r.M),
      static_cast<long long>(r.D), static_cast<long long>(r.bandwidth), r.lengths ? "true" : "false",
      static_cast<long long>(r.cells), settings.warmup, times.c_str());
  std::fflush(stdout);
}

Shape fill_device(const void* kernel, int threads_per_block, size_t shared_bytes, int rows_per_thread,
                  int64_t cells, int waves) {
  int device = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device));
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, shared_bytes));
  if (per_sm < 1) throw std::runtime_error("ladder: a synthetic kernel does not fit on an SM");
  Shape s;
  s.blocks = sms * per_sm * waves;
  s.threads = threads_per_block;
  const int64_t threads = int64_t(s.blocks) * threads_per_block;
  s.columns = std::max<int64_t>(1, cells / (threads * rows_per_thread));
  return s;
}

}  // namespace sdtw::kernels::ladder

namespace {

// The integer value of option `name`, in [lo, 1000].
int count(const char* name, const char* value, int lo) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v < lo || v > 1000)
    throw std::invalid_argument(std::string(name) + " must be an integer in [" + std::to_string(lo) +
                                ", 1000], got '" + (value ? value : "") + "'");
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sdtw::kernels::ladder;
  try {
    Settings settings;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--quick") {
        settings.quick = true;
      } else if (a == "--reps") {
        settings.reps = count("--reps", i + 1 < argc ? argv[++i] : nullptr, 5);  // p10 and p90 need 5
      } else if (a == "--warmup") {
        settings.warmup = count("--warmup", i + 1 < argc ? argv[++i] : nullptr, 1);
      } else if (a == "-h" || a == "--help") {
        std::cout << "sdtw_kernels_ladder [--quick] [--reps N] [--warmup N]: one JSON line per rung on stdout\n";
        return 0;
      } else {
        throw std::invalid_argument("unknown argument '" + a + "' (--help lists the options)");
      }
    }
    if (settings.quick) settings.synthetic_cells = int64_t(1) << 26;
    int device = 0, clock_khz = 0, sms = 0;
    cudaDeviceProp prop{};
    check(cudaGetDevice(&device));
    check(cudaGetDeviceProperties(&prop, device));
    check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    std::printf("{\"device\": \"%s\", \"sms\": %d, \"clock_khz\": %d, \"quick\": %s, \"reps\": %d, \"warmup\": %d}\n",
                prop.name, sms, clock_khz, settings.quick ? "true" : "false", settings.reps, settings.warmup);
    run_registers(settings);
    run_inputs(settings);
    run_production(settings);
  } catch (const std::exception& e) {
    std::cerr << "sdtw_kernels_ladder: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
