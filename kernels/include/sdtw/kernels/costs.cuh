#pragma once
// Cost policies: the DP kernels never know which cost they run on. Once per 32 columns, each lane
// of a warp asks the policy for one column of its strip's cost tile: out[r] = cost(row0 + r, j)
// for the 32 rows of the strip. A new cost (L1, negative dot product) is a new policy.
#include <cstdint>
#include <type_traits>

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
// a slice of y_j in registers while the strip's slice of x is broadcast from shared memory. x and
// y are read as In (T, or bfloat16 / float16 for T = float) and the cost is computed in T.
template <typename T, int kSlice = 8, typename In = T>
struct SqEuclideanCost {
  const In* x;
  const In* y;
  int64_t n, m, dim;
  const int64_t* x_index = nullptr;  // pair b reads x[x_index[b]] and y[y_index[b]]; null: b
  const int64_t* y_index = nullptr;

  struct alignas(16) Scratch {  // aligned so that a row of a slice is read by vector loads
    T x[kStripRows][kSlice];
  };
  static constexpr int kPerVector = 16 / sizeof(In);
  static_assert(kSlice % kPerVector == 0, "a slice is whole 16-byte vectors");

  // row[d0, d0 + kSlice) into out, in T, 0 past dim.
  __device__ void load_slice(const In* row, int64_t d0, bool vectors, T (&out)[kSlice]) const {
    using Vector = std::conditional_t<sizeof(In) == 8, double2, std::conditional_t<sizeof(In) == 4, float4, uint4>>;
    if (vectors) {
#pragma unroll
      for (int v = 0; v < kSlice / kPerVector; ++v) {
        Vector w{};
        if (d0 + v * kPerVector < dim) w = __ldg(reinterpret_cast<const Vector*>(row + d0) + v);
        const In* parts = reinterpret_cast<const In*>(&w);
#pragma unroll
        for (int e = 0; e < kPerVector; ++e) out[v * kPerVector + e] = static_cast<T>(parts[e]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < kSlice; ++q) out[q] = d0 + q < dim ? static_cast<T>(__ldg(row + d0 + q)) : T(0);
    }
  }
  __device__ void column(int64_t b, int64_t row0, int64_t rows, int64_t j, Scratch& s, T (&out)[kStripRows]) const {
    const int lane = threadIdx.x & 31;
    const int64_t xb = x_index ? x_index[b] : b, yb = y_index ? y_index[b] : b;
    const In* xi = x + (xb * n + (row0 + lane < rows ? row0 + lane : row0)) * dim;
    const In* yj = y + (yb * m + j) * dim;
    // 16-byte loads where every row starts 16-byte aligned: each load instruction of a lane
    // touches a separate row, so fewer, wider loads are what keeps the L1 from being the limit.
    const bool vectors =
        dim % kPerVector == 0 && (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) % 16 == 0;
    // The next slice's loads are issued before this slice's products, so a column waits for
    // one memory round trip, not one per slice.
    T x_next[kSlice], y_next[kSlice];
    auto load = [&](int64_t d0) {
      load_slice(xi, d0, vectors, x_next);
      load_slice(yj, d0, vectors, y_next);
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
