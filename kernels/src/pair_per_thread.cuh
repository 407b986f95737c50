#pragma once
// Values alone for many pairs through pair indices (cdist, k-means): one thread walks one pair, its
// rows in strips of 32 whose R stays in the thread's registers, so a cell needs no shuffle and a
// strip no ring (lab/kernels-log.md: 2.3x the strips' forward on 1024 x 1024 pairs at N 128, D 8).
// A thread runs a whole pair, so this fills the device only with tens of thousands of pairs.
// Each cell's arithmetic is forward_kernel's, in the same order, so the values are its values bit
// for bit. A block's pairs that share one row of x (as a pairwise matrix's do) read its strip from
// shared memory; a block whose pairs differ in x reads each pair's rows from global memory.
#include "forward.cuh"

namespace sdtw::kernels::detail {

constexpr int kPairThreads = 128;

struct PairValuesArgs {
  const float* x;
  const float* y;
  int64_t batch, n, m;
  const int64_t* x_index;
  const int64_t* y_index;
  const int64_t* x_len;  // per row of x / of y, or null
  const int64_t* y_len;
  double gamma;
  double* border;  // m x batch: R of a strip's last row, column j of pair b at j * batch + b (coalesced)
  float* values;
};

// Four features of row i of the strip (x in shared memory or in global memory).
template <int kD, bool kShared>
struct StripRows {
  const float (*xs)[kD];  // kShared: the strip's 32 rows
  const float* row0;      // !kShared: the pair's first row of the strip
  int last;               // !kShared: rows past the pair's last read that row (finite, unused)
  __device__ float4 load4(int i, int d) const {
    if constexpr (kShared) {
      float4 v;  // volatile: kept in the column loop, so x stays in shared memory, not registers
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "r"(static_cast<unsigned>(__cvta_generic_to_shared(&xs[i][d]))));
      return v;
    } else {
      return __ldg(reinterpret_cast<const float4*>(row0 + min(i, last) * kD + d));
    }
  }
};

// c[i] = ||x_i - y_j||^2 for the strip's 32 rows: one fmaf a feature in feature order, as
// FeatureCost<SqEuclidean> computes it.
template <int kD, bool kShared>
__device__ inline void strip_costs(const StripRows<kD, kShared>& x, const float* y_row, float (&c)[kWarp]) {
#pragma unroll
  for (int i = 0; i < kWarp; ++i) c[i] = 0.0f;
#pragma unroll 2
  for (int d0 = 0; d0 < kD; d0 += 8) {
    const float4 lo = *reinterpret_cast<const float4*>(y_row + d0), hi = *reinterpret_cast<const float4*>(y_row + d0 + 4);
    const float y[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int i = 0; i < kWarp; ++i) {
      const float4 a = x.load4(i, d0), b = x.load4(i, d0 + 4);
      const float xr[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
      for (int f = 0; f < 8; ++f) {
        const float diff = xr[f] - y[f];
        c[i] = fmaf(diff, diff, c[i]);
      }
    }
  }
}

// The pair's value, R(rows - 1, cols - 1). kShared: every thread of the block has this x row (so
// the same rows), and all of them reach each __syncthreads.
template <int kD, bool kShared>
__device__ __noinline__ float pair_value(const PairValuesArgs& a, float (*xs)[kD], int64_t b, bool active, int64_t xi, int64_t yi,
                            int rows, int cols) {
  const double inf = INFINITY;
  const float exp2_scale = softmin_exp2_scale<float>(a.gamma);
  const double log2_scale = softmin_log2_scale(a.gamma);
  const float* x_pair = a.x + xi * a.n * kD;
  const float* y_pair = a.y + yi * a.m * kD;
  const int strips = (rows + kWarp - 1) / kWarp;
  double r[kWarp];  // R(row0 + i, j) of the column last walked
  for (int k = 0; k < strips; ++k) {
    const int row0 = k * kWarp;
    if constexpr (kShared) {
      __syncthreads();  // the previous strip's rows are read
      for (int e = threadIdx.x; e < kWarp * kD; e += kPairThreads) {
        const int row = min(row0 + e / kD, rows - 1);
        xs[e / kD][e % kD] = x_pair[static_cast<int64_t>(row) * kD + e % kD];
      }
      __syncthreads();
    }
    const StripRows<kD, kShared> x{xs, x_pair + static_cast<int64_t>(row0) * kD, rows - 1 - row0};
#pragma unroll
    for (int i = 0; i < kWarp; ++i) r[i] = inf;  // R(i, -1)
    const bool reads_border = k > 0 && active, writes_border = k + 1 < strips && active;
    // The diagonal of the strip's row 0 at column 0: R(-1, -1) = 0 above the first strip, R(row0 - 1,
    // -1) = +inf below it; then the border's previous column. The border is loaded a column ahead.
    double corner = k == 0 ? 0.0 : inf;
    double up_next = reads_border ? a.border[b] : inf;
#pragma unroll 1
    for (int j = 0; j < cols; ++j) {
      const double top = up_next;
      if (reads_border && j + 1 < cols) up_next = a.border[(j + 1) * a.batch + b];
      float c[kWarp];
      strip_costs(x, y_pair + static_cast<int64_t>(j) * kD, c);
      double diag = corner, up = top;
      corner = top;
#pragma unroll
      for (int i = 0; i < kWarp; ++i) {
        const double left = r[i];
        const double rmin = fmin(diag, fmin(up, left));
        const float ed = fast_exp2(static_cast<float>(diag - rmin) * exp2_scale);
        const float eu = fast_exp2(static_cast<float>(up - rmin) * exp2_scale);
        const float el = fast_exp2(static_cast<float>(left - rmin) * exp2_scale);
        const float sum = ed + eu + el;
        const double r_live = (static_cast<double>(c[i]) + rmin) - log2_scale * static_cast<double>(fast_log2(sum));
        // No finite predecessor: c + their sum (+inf or NaN), as forward_kernel, not inf - inf.
        const double v = rmin < inf ? r_live : static_cast<double>(c[i]) + (diag + up + left);
        diag = left;
        up = v;
        r[i] = v;
      }
      if (writes_border) a.border[j * a.batch + b] = r[kWarp - 1];  // border[j] was read a column ago
    }
  }
  // A select, since indexing r[] by a variable would move it to local memory.
  const int last = (rows - 1) % kWarp;
  double value = r[0];
#pragma unroll
  for (int i = 1; i < kWarp; ++i) value = i == last ? r[i] : value;
  return static_cast<float>(value);
}

template <int kD>
__global__ void __launch_bounds__(kPairThreads, 3) pair_values_kernel(PairValuesArgs a) {
  __shared__ __align__(16) float xs[kWarp][kD];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kPairThreads;
  const int64_t b = first + threadIdx.x;
  const bool active = b < a.batch;
  const int64_t pair = active ? b : a.batch - 1;  // a thread past the batch walks the last pair, writes nothing
  const int64_t xi = a.x_index[pair], yi = a.y_index[pair];
  const int rows = static_cast<int>(a.x_len ? Schedule::clamp_length(a.x_len[xi], a.n) : a.n);
  const int cols = static_cast<int>(a.y_len ? Schedule::clamp_length(a.y_len[yi], a.m) : a.m);
  const float v = __syncthreads_and(xi == a.x_index[first]) ? pair_value<kD, true>(a, xs, b, active, xi, yi, rows, cols)
                                                             : pair_value<kD, false>(a, xs, b, active, xi, yi, rows, cols);
  if (active) a.values[b] = v;
}

}  // namespace sdtw::kernels::detail
