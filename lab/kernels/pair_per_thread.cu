// Whether "one pair per thread" beats the production values-only forward on cdist (every pair of
// two sets): the ladder's rung b (kernels/bench/ladder/inputs.cu, Piece::kFloat64: a thread walks
// a 32-row tile in registers, R in float64, the production's softmin) made real. Each thread owns
// one pair (x_p, y_q) and walks its rows in strips of 32, handing a strip's last row of R to the
// next strip through a per-thread border in global memory. Timed (CUDA events, median of --reps
// after --warmup) against sqeuclidean_values<float> through pair indices, as the ladder's
// run_pairwise calls it, and checked against it: the cells' arithmetic is the production's, so the
// values should agree to the last bit or nearly. One JSON line per measurement and per check.
//   sdtw_lab_pair_per_thread [--P 1024] [--Q 1024] [--N 128] [--M 128] [--D 8|16|64] [--gamma 1]
//                            [--reps 10] [--warmup 3]
// Target sdtw_lab_pair_per_thread (-DSDTW_BUILD_LAB=ON).
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "forward.cuh"  // fast_exp2, fast_log2: the production's MUFU exp2 and log2
#include "device_buffers.hpp"
#include "ladder/tile.cuh"  // tile_cost: the ladder's cost of a 32-row tile
#include "sdtw/kernels/soft_dtw.hpp"

namespace {

using sdtw::kernels::bench::Buffers;
using sdtw::kernels::bench::check;
using sdtw::kernels::detail::fast_exp2;
using sdtw::kernels::detail::fast_log2;

using sdtw::kernels::ladder::kRows;
using sdtw::kernels::ladder::tile_cost;
constexpr int kThreads = 128;  // threads of a block: one p, 128 consecutive q

// values[p * Q + q] = R(N-1, M-1) of (x_p, y_q). Grid (ceil(Q / 128), P). border: threads x M
// doubles, entry (j, tid) at j * threads + tid, so a warp's 32 entries of a column are 256
// consecutive bytes. 3 blocks an SM, as the ladder's rung b: free, ptxas gives D = 64 170
// registers, which the allocation rounds to 2 blocks; held to 168 it does not spill.
template <int kD>
__global__ void __launch_bounds__(kThreads, 3)
    pair_per_thread_kernel(const float* x, const float* y, int Q, int N, int M, float exp2_scale, double log2_scale,
                           double* border, float* values) {
  __shared__ __align__(16) float xs[kRows][kD];
  const double inf = INFINITY;
  const int p = blockIdx.y, q_raw = blockIdx.x * kThreads + threadIdx.x;
  // A thread past Q walks pair (p, Q - 1) again (in bounds, finite) and writes only its own border.
  const bool has_pair = q_raw < Q;
  const int q = has_pair ? q_raw : Q - 1;
  const int64_t threads = int64_t(gridDim.x) * gridDim.y * kThreads;
  const int64_t tid = (int64_t(blockIdx.y) * gridDim.x + blockIdx.x) * kThreads + threadIdx.x;
  const float* y_q = y + int64_t(q) * M * kD;
  const int strips = (N + kRows - 1) / kRows;
  double r[kRows];  // R(row0 + i, j) of the column last walked

  for (int k = 0; k < strips; ++k) {
    const int row0 = k * kRows;
    __syncthreads();  // every thread is done with the previous strip's rows of x
    // Rows past N are 0: finite padding whose cells come after row N-1 and reach nothing read.
    for (int e = threadIdx.x; e < kRows * kD; e += kThreads) {
      const int row = row0 + e / kD;
      xs[e / kD][e % kD] = row < N ? x[(int64_t(p) * N + row) * kD + e % kD] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kRows; ++i) r[i] = inf;  // R(i, -1)
    const bool reads_border = k > 0, writes_border = k + 1 < strips;
    // corner: R(row0 - 1, j - 1), the diagonal of the strip's row 0. At j = 0 it is R(-1, -1) = 0
    // for the first strip and R(row0 - 1, -1) = +inf below; then the border's previous column.
    double corner = reads_border ? inf : 0.0;
    // R(row0 - 1, j), one column ahead so that its load is not waited on by the chain; the first
    // strip's row above is R(-1, j) = +inf.
    double up_next = reads_border ? border[tid] : inf;
#pragma unroll 1
    for (int j = 0; j < M; ++j) {
      const double top = up_next;
      if (reads_border && j + 1 < M) up_next = border[int64_t(j + 1) * threads + tid];
      float c[kRows];
      tile_cost(xs, y_q + int64_t(j) * kD, c);
      double diag = corner, up = top;
      corner = top;
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const double left = r[i];
        // The production's softmin (forward.cuh): the minimum in float64, one exp2 a predecessor on
        // the exact differences, one log2 of their sum.
        const double rmin = fmin(diag, fmin(up, left));
        const float e_diag = fast_exp2(static_cast<float>(diag - rmin) * exp2_scale);
        const float e_up = fast_exp2(static_cast<float>(up - rmin) * exp2_scale);
        const float e_left = fast_exp2(static_cast<float>(left - rmin) * exp2_scale);
        const float sum = e_diag + e_up + e_left;
        const double r_live = (static_cast<double>(c[i]) + rmin) - log2_scale * static_cast<double>(fast_log2(sum));
        // No finite predecessor: c + their sum (+inf or NaN), as the production, not inf - inf.
        const double v = rmin < inf ? r_live : static_cast<double>(c[i]) + (diag + up + left);
        diag = left;
        up = v;
        r[i] = v;
      }
      // Read above (border[j] as top, one column ago): this thread's slot is free to overwrite.
      if (writes_border) border[int64_t(j) * threads + tid] = r[kRows - 1];
    }
  }
  // R(N-1, M-1) is row (N-1) mod 32 of the last strip's last column: a select, since a dynamic
  // index would put r[] in local memory.
  const int last = (N - 1) % kRows;
  double value = r[0];
#pragma unroll
  for (int i = 1; i < kRows; ++i) value = i == last ? r[i] : value;
  if (has_pair) values[int64_t(p) * Q + q] = static_cast<float>(value);
}

// Values in [0, 1) from a hash of the index and salt (the ladder's fill_uniform).
__global__ void fill_uniform_kernel(float* v, int64_t count, uint32_t salt) {
  for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += int64_t(gridDim.x) * blockDim.x)
    v[k] = static_cast<float>((static_cast<uint32_t>(k) * 2654435761u ^ salt) >> 8) * (1.0f / 16777216.0f);
}

struct Config {
  int64_t P = 1024, Q = 1024, N = 128, M = 128, D = 8;
  double gamma = 1.0;
  int reps = 10, warmup = 3;
};

struct Stats {
  double median, p10, p90;
};

// Median, 10th and 90th percentiles (nearest rank) of the repetitions' times.
Stats stats_of(std::vector<float> t) {
  std::sort(t.begin(), t.end());
  const auto at = [&](double f) { return double(t[static_cast<size_t>(std::lround(f * double(t.size() - 1)))]); };
  const size_t n = t.size();
  const double median = n % 2 ? t[n / 2] : 0.5 * (double(t[n / 2 - 1]) + double(t[n / 2]));
  return {median, at(0.1), at(0.9)};
}

// CUDA events around each launch on the default stream, after the warm-ups.
template <typename F>
Stats time_ms(const Config& cfg, F&& launch) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start));
  check(cudaEventCreate(&stop));
  for (int i = 0; i < cfg.warmup; ++i) launch();
  check(cudaGetLastError());
  check(cudaDeviceSynchronize());
  std::vector<float> times;
  for (int i = 0; i < cfg.reps; ++i) {
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
  return stats_of(times);
}

void emit(const char* impl, const Config& c, const Stats& s) {
  const double cells = double(c.P) * double(c.Q) * double(c.N) * double(c.M);
  std::printf(
      "{\"impl\": \"%s\", \"P\": %lld, \"Q\": %lld, \"N\": %lld, \"M\": %lld, \"D\": %lld, \"gamma\": %.17g, "
      "\"cells\": %.0f, \"time_ms_median\": %.6f, \"time_ms_p10\": %.6f, \"time_ms_p90\": %.6f, "
      "\"g_cells_per_s\": %.3f}\n",
      impl, static_cast<long long>(c.P), static_cast<long long>(c.Q), static_cast<long long>(c.N),
      static_cast<long long>(c.M), static_cast<long long>(c.D), c.gamma, cells, s.median, s.p10, s.p90,
      cells / (s.median * 1e-3) / 1e9);
  std::fflush(stdout);
}

template <int kD>
void launch_prototype(const Config& c, const float* x, const float* y, double* border, float* values) {
  // forward.cuh's scales for C = float: exp(-v/gamma) = 2^(v * exp2_scale), the scale clamped to a
  // finite normal float; gamma log(s) = log2_scale * log2(s).
  const float exp2_scale = static_cast<float>(-std::fmin(std::fmax(1.4426950408889634 / c.gamma, FLT_MIN), FLT_MAX));
  const double log2_scale = c.gamma * 0.6931471805599453;
  const dim3 grid(static_cast<unsigned>((c.Q + kThreads - 1) / kThreads), static_cast<unsigned>(c.P));
  pair_per_thread_kernel<kD><<<grid, kThreads>>>(x, y, static_cast<int>(c.Q), static_cast<int>(c.N),
                                                 static_cast<int>(c.M), exp2_scale, log2_scale, border, values);
}

// Runs (and with timed, times) both implementations at c; prints their times and their values' max
// relative difference |v_proto - v_prod| / max(1, |v_prod|) over the pairs where both are finite,
// and how many pairs differ in a non-finite value.
void run(const Config& c, bool timed, const char* check_name) {
  if (c.D != 8 && c.D != 16 && c.D != 64) throw std::invalid_argument("--D must be 8, 16 or 64");
  if (c.P < 1 || c.Q < 1 || c.N < 1 || c.M < 1) throw std::invalid_argument("--P, --Q, --N and --M must be >= 1");
  if (c.P > 65535) throw std::invalid_argument("--P must be <= 65535 (the grid's y dimension)");
  if (c.Q > (int64_t(1) << 31) - kThreads || c.N > INT32_MAX || c.M > INT32_MAX)
    throw std::invalid_argument("--Q, --N, --M must fit in an int");
  if (!(c.gamma > 0)) throw std::invalid_argument("--gamma must be > 0");
  Buffers buf;
  const int64_t pairs = c.P * c.Q;
  float* x = buf.alloc<float>(c.P * c.N * c.D);
  float* y = buf.alloc<float>(c.Q * c.M * c.D);
  fill_uniform_kernel<<<1024, 256>>>(x, c.P * c.N * c.D, 0x9e3779b9u);
  check(cudaGetLastError());
  fill_uniform_kernel<<<1024, 256>>>(y, c.Q * c.M * c.D, 0x85ebca6bu);
  check(cudaGetLastError());

  // Production: pair b = p * Q + q through pair indices, as the ladder's run_pairwise.
  sdtw::kernels::Problem prob{pairs, c.N, c.M, c.D, c.gamma};
  std::vector<int64_t> xi(pairs), yi(pairs);
  for (int64_t b = 0; b < pairs; ++b) xi[b] = b / c.Q, yi[b] = b % c.Q;
  int64_t* x_index = buf.alloc<int64_t>(pairs);
  int64_t* y_index = buf.alloc<int64_t>(pairs);
  check(cudaMemcpy(x_index, xi.data(), pairs * sizeof(int64_t), cudaMemcpyHostToDevice));
  check(cudaMemcpy(y_index, yi.data(), pairs * sizeof(int64_t), cudaMemcpyHostToDevice));
  prob.x_index = x_index;
  prob.y_index = y_index;
  float* values_prod = buf.alloc<float>(pairs);
  char* workspace = buf.alloc<char>(sdtw::kernels::values_workspace_bytes<float>(prob));
  const auto production = [&] { sdtw::kernels::sqeuclidean_values<float>(prob, x, y, values_prod, workspace, nullptr); };

  // Prototype: one border of M doubles per launched thread (padding threads included).
  const int64_t threads = (c.Q + kThreads - 1) / kThreads * kThreads * c.P;
  double* border = buf.alloc<double>(threads * c.M);
  float* values_proto = buf.alloc<float>(pairs);
  const auto prototype = [&] {
    if (c.D == 8) launch_prototype<8>(c, x, y, border, values_proto);
    else if (c.D == 16) launch_prototype<16>(c, x, y, border, values_proto);
    else launch_prototype<64>(c, x, y, border, values_proto);
  };

  if (timed) {
    emit("production", c, time_ms(c, production));
    emit("pair_per_thread", c, time_ms(c, prototype));
  } else {
    production();
    prototype();
  }
  check(cudaGetLastError());
  check(cudaDeviceSynchronize());

  std::vector<float> prod(pairs), proto(pairs);
  check(cudaMemcpy(prod.data(), values_prod, pairs * sizeof(float), cudaMemcpyDeviceToHost));
  check(cudaMemcpy(proto.data(), values_proto, pairs * sizeof(float), cudaMemcpyDeviceToHost));
  double max_rel = 0;
  int64_t nonfinite_mismatches = 0, bit_equal = 0;
  for (int64_t b = 0; b < pairs; ++b) {
    const float a = proto[b], v = prod[b];
    bit_equal += a == v || (std::isnan(a) && std::isnan(v));
    if (std::isfinite(a) && std::isfinite(v))
      max_rel = std::max(max_rel, std::fabs(double(a) - double(v)) / std::max(1.0, std::fabs(double(v))));
    else if (!(a == v) && !(std::isnan(a) && std::isnan(v)))
      ++nonfinite_mismatches;
  }
  std::printf(
      "{\"check\": \"%s\", \"P\": %lld, \"Q\": %lld, \"N\": %lld, \"M\": %lld, \"D\": %lld, \"gamma\": %.17g, "
      "\"pairs\": %lld, \"max_rel_diff\": %.9g, \"bit_equal_pairs\": %lld, \"nonfinite_mismatches\": %lld}\n",
      check_name, static_cast<long long>(c.P), static_cast<long long>(c.Q), static_cast<long long>(c.N),
      static_cast<long long>(c.M), static_cast<long long>(c.D), c.gamma, static_cast<long long>(pairs), max_rel,
      static_cast<long long>(bit_equal), static_cast<long long>(nonfinite_mismatches));
  std::fflush(stdout);
}

int64_t parse_int(const std::string& name, const char* s) {
  char* end = nullptr;
  const long long v = s ? std::strtoll(s, &end, 10) : 0;
  if (!s || *end != '\0') throw std::invalid_argument(name + " needs an integer, got '" + (s ? s : "") + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Config c;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
      if (a == "-h" || a == "--help") {
        std::printf("sdtw_lab_pair_per_thread [--P n] [--Q n] [--N n] [--M n] [--D 8|16|64] [--gamma g] "
                    "[--reps n] [--warmup n]: one JSON line per measurement and per check\n");
        return 0;
      }
      ++i;
      if (a == "--P") c.P = parse_int(a, v);
      else if (a == "--Q") c.Q = parse_int(a, v);
      else if (a == "--N") c.N = parse_int(a, v);
      else if (a == "--M") c.M = parse_int(a, v);
      else if (a == "--D") c.D = parse_int(a, v);
      else if (a == "--reps") c.reps = static_cast<int>(parse_int(a, v));
      else if (a == "--warmup") c.warmup = static_cast<int>(parse_int(a, v));
      else if (a == "--gamma") {
        char* end = nullptr;
        c.gamma = v ? std::strtod(v, &end) : 0;
        if (!v || *end != '\0') throw std::invalid_argument("--gamma needs a number");
      } else {
        throw std::invalid_argument("unknown argument '" + a + "' (--help lists the options)");
      }
    }
    if (c.reps < 1 || c.warmup < 0) throw std::invalid_argument("--reps must be >= 1 and --warmup >= 0");
    run(c, true, "main");
    // An odd shape, for the check alone: a partial block of q, a partial last strip, D = 16, small gamma.
    Config odd;
    odd.P = 3, odd.Q = 200, odd.N = 77, odd.M = 45, odd.D = 16, odd.gamma = 0.1;
    run(odd, false, "odd");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdtw_lab_pair_per_thread: %s\n", e.what());
    return 1;
  }
  return 0;
}
