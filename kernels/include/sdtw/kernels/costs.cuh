#pragma once
// Cost policies: the DP kernels never know which cost they run on. A policy caches what one row
// i needs (lane(b, i)) and gives the cost of cell (i, j) from it; a new cost (L1, negative dot
// product) is a new policy, not a new kernel.
#include <cstdint>

namespace sdtw::kernels {

// The caller's cost tensor D, batch x n x m, row-major.
template <typename T>
struct PrecomputedCost {
  const T* D;
  int64_t n, m;

  struct Lane {
    const T* row;
  };
  __device__ Lane lane(int64_t b, int64_t i) const { return {D + (b * n + i) * m}; }
  __device__ T operator()(const Lane& l, int64_t, int64_t j) const { return __ldg(l.row + j); }
};

// ||x_i - y_j||^2 from x (batch x n x dim) and y (batch x m x dim), any dim.
template <typename T>
struct SqEuclideanCost {
  const T* x;
  const T* y;
  int64_t n, m, dim;

  struct Lane {
    const T* xi;
  };
  __device__ Lane lane(int64_t b, int64_t i) const { return {x + (b * n + i) * dim}; }
  __device__ T operator()(const Lane& l, int64_t b, int64_t j) const {
    const T* yj = y + (b * m + j) * dim;
    T acc = 0;
    for (int64_t d = 0; d < dim; ++d) {
      const T diff = __ldg(l.xi + d) - __ldg(yj + d);
      acc += diff * diff;
    }
    return acc;
  }
};

// The same cost for float with x_i held in registers for the whole strip and y_j read as float4:
// needs dim <= kRegisterDim, dim % 4 == 0 and 16-byte aligned x and y.
template <int kRegisterDim>
struct SqEuclideanRegisterCost {
  static_assert(kRegisterDim % 4 == 0, "register dimension must be a multiple of 4");
  const float* x;
  const float* y;
  int64_t n, m, dim;

  struct Lane {
    float4 xi[kRegisterDim / 4];
  };
  __device__ Lane lane(int64_t b, int64_t i) const {
    Lane l;
    const float4* xi = reinterpret_cast<const float4*>(x + (b * n + i) * dim);
#pragma unroll
    for (int q = 0; q < kRegisterDim / 4; ++q) l.xi[q] = q < dim / 4 ? __ldg(xi + q) : make_float4(0.f, 0.f, 0.f, 0.f);
    return l;
  }
  __device__ float operator()(const Lane& l, int64_t b, int64_t j) const {
    const float4* yj = reinterpret_cast<const float4*>(y + (b * m + j) * dim);
    float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
    for (int q = 0; q < kRegisterDim / 4; ++q) {
      if (q < dim / 4) {
        const float4 v = __ldg(yj + q);
        const float a = l.xi[q].x - v.x, bq = l.xi[q].y - v.y, c = l.xi[q].z - v.z, d = l.xi[q].w - v.w;
        acc0 = fmaf(a, a, acc0);
        acc1 = fmaf(bq, bq, acc1);
        acc0 = fmaf(c, c, acc0);
        acc1 = fmaf(d, d, acc1);
      }
    }
    return acc0 + acc1;
  }
};

}  // namespace sdtw::kernels
