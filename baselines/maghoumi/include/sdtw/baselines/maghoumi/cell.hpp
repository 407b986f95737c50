#pragma once
// The per-cell arithmetic of pytorch-softdtw-cuda (Maghoumi), shared by the CUDA kernels and the
// CPU path so that CI (no GPU) tests exactly the numerics the GPU runs.
//
// The original's kernels are Numba functions whose scalar arguments (gamma, bandwidth) arrive as
// Python floats, so Numba types them float64: every expression that touches them is evaluated in
// float64 even when R, D and E are float32 arrays, and the result is rounded to the array's type
// on store. Expressions that touch only array elements stay in the array's type (Numba follows
// NumPy's promotion rules): in the backward, R[s] - R[c] - D[s] is a float32 difference when the
// arrays are float32, and only then is it scaled by 1/gamma in float64. T below is the array type.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define SDTW_MAGHOUMI_HD __host__ __device__ __forceinline__
#else
#define SDTW_MAGHOUMI_HD inline
#endif

namespace sdtw::baselines::maghoumi::cell {

// Python's max(a, b): the first argument unless the second is strictly greater.
SDTW_MAGHOUMI_HD double py_max(double a, double b) { return b > a ? b : a; }

// The original's pruning test `abs(i - j) > bandwidth > 0` (a chained comparison): a cell is
// skipped only when the band is enabled (bandwidth > 0) and the cell lies outside it.
SDTW_MAGHOUMI_HD bool outside_band(std::int64_t i, std::int64_t j, double bandwidth) {
  const std::int64_t d = i > j ? i - j : j - i;
  return static_cast<double>(d) > bandwidth && bandwidth > 0.0;
}

template <typename T>
SDTW_MAGHOUMI_HD bool is_inf(T v) {
  return static_cast<double>(v) == HUGE_VAL || static_cast<double>(v) == -HUGE_VAL;
}

// R[i, j] = D[i-1, j-1] + softmin(R[i-1, j-1], R[i-1, j], R[i, j-1]), with the softmin written as
// the original writes it: r = -R * (1/gamma), rmax, rsum = sum exp(r - rmax),
// softmin = -gamma * (log(rsum) + rmax).
template <typename T>
SDTW_MAGHOUMI_HD T forward(T r_diag, T r_up, T r_left, T d, double gamma, double inv_gamma) {
  const double r0 = static_cast<double>(-r_diag) * inv_gamma;
  const double r1 = static_cast<double>(-r_up) * inv_gamma;
  const double r2 = static_cast<double>(-r_left) * inv_gamma;
  const double rmax = py_max(py_max(r0, r1), r2);
  const double rsum = ::exp(r0 - rmax) + ::exp(r1 - rmax) + ::exp(r2 - rmax);
  const double softmin = -gamma * (::log(rsum) + rmax);
  return static_cast<T>(static_cast<double>(d) + softmin);
}

// E[i, j] = E[i+1, j] a + E[i, j+1] b + E[i+1, j+1] c with the linear-space weights
// a = exp((R[i+1, j] - R[i, j] - D[i+1, j]) / gamma) and likewise b, c; D is the padded cost.
template <typename T>
SDTW_MAGHOUMI_HD T backward(T r, T r_down, T r_right, T r_diag, T d_down, T d_right, T d_diag, T e_down,
                            T e_right, T e_diag, double inv_gamma) {
  const double a = ::exp(static_cast<double>(r_down - r - d_down) * inv_gamma);
  const double b = ::exp(static_cast<double>(r_right - r - d_right) * inv_gamma);
  const double c = ::exp(static_cast<double>(r_diag - r - d_diag) * inv_gamma);
  return static_cast<T>(static_cast<double>(e_down) * a + static_cast<double>(e_right) * b +
                        static_cast<double>(e_diag) * c);
}

}  // namespace sdtw::baselines::maghoumi::cell
