#pragma once
// Cost policies: the DP kernels never know which cost they run on. Once per 32 columns, each lane
// of a warp asks the policy for one column of its strip's cost tile: out[r] = cost(row0 + r, j)
// for the 32 rows of the strip. A new cost (L1, negative dot product) is a new policy.
#include <cstdint>

namespace sdtw::kernels {

constexpr int kStripRows = 32;

// The caller's cost tensor D, batch x n x m, row-major: one coalesced load per row.
template <typename T>
struct PrecomputedCost {
  const T* D;
  int64_t n, m;

  struct Scratch {};
  __device__ void column(int64_t b, int64_t row0, int64_t rows, int64_t j, Scratch&, T (&out)[kStripRows]) const {
#pragma unroll
    for (int r = 0; r < kStripRows; ++r) out[r] = row0 + r < rows ? __ldg(D + (b * n + row0 + r) * m + j) : T(0);
  }
};

// ||x_i - y_j||^2 from x (batch x n x dim) and y (batch x m x dim), never stored: each lane holds
// a slice of y_j in registers while the strip's slice of x is broadcast from shared memory.
template <typename T, int kSlice = 8>
struct SqEuclideanCost {
  const T* x;
  const T* y;
  int64_t n, m, dim;

  struct Scratch {
    T x[kStripRows][kSlice];
  };
  __device__ void column(int64_t b, int64_t row0, int64_t rows, int64_t j, Scratch& s, T (&out)[kStripRows]) const {
    const int lane = threadIdx.x & 31;
    const T* xi = x + (b * n + (row0 + lane < rows ? row0 + lane : row0)) * dim;
    const T* yj = y + (b * m + j) * dim;
    // The next slice's loads are issued before this slice's products, so a column waits for
    // one memory round trip, not one per slice.
    T x_next[kSlice], y_next[kSlice];
    auto load = [&](int64_t d0) {
#pragma unroll
      for (int q = 0; q < kSlice; ++q) {
        const bool inside = d0 + q < dim;
        x_next[q] = inside ? __ldg(xi + d0 + q) : T(0);
        y_next[q] = inside ? __ldg(yj + d0 + q) : T(0);
      }
    };
#pragma unroll
    for (int r = 0; r < kStripRows; ++r) out[r] = T(0);
    load(0);
    for (int64_t d0 = 0; d0 < dim; d0 += kSlice) {
      T yv[kSlice];
      __syncwarp();
#pragma unroll
      for (int q = 0; q < kSlice; ++q) {
        s.x[lane][q] = x_next[q];
        yv[q] = y_next[q];
      }
      if (d0 + kSlice < dim) load(d0 + kSlice);
      __syncwarp();
#pragma unroll
      for (int r = 0; r < kStripRows; ++r)
#pragma unroll
        for (int q = 0; q < kSlice; ++q) {
          const T diff = s.x[r][q] - yv[q];
          out[r] = fma(diff, diff, out[r]);
        }
    }
  }
};

}  // namespace sdtw::kernels
