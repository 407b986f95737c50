#pragma once
// How a value of R travels along the forward's chain. The softmin needs the gaps R_k - p between
// the predecessors and a pivot p exactly (DESIGN.md section 3), long after R has outgrown a float's
// precision. double carries R in float64. float carries it as two floats, hi + lo, lo holding what
// hi rounded off (error-free sums): the chain then runs on float instructions alone, where every
// float64 op or conversion on it cost 8 to 25 cycles of latency (kernels/NOTES.md, v19).
#include <cmath>
#include <cstdint>

#include "schedule.cuh"

namespace sdtw::kernels::detail {

struct TwoFloat {
  float hi, lo;
};

template <typename T>
struct RValue;

template <>
struct RValue<double> {
  using Type = double;
  __device__ static Type infinite() { return INFINITY; }
  __device__ static Type zero() { return 0.0; }
  __device__ static double pivot(Type diag, Type up, Type left) { return fmin(diag, fmin(up, left)); }
  __device__ static bool finite(double p) { return p < INFINITY; }
  // exp2 of the gap times a (negative) scale: the weight of a predecessor before normalising.
  __device__ static double exponent(Type r, double p, double scale) { return (r - p) * scale; }
  // cost + p - gamma log(sum), with gamma log(sum) = log2_scale * log2_sum.
  __device__ static Type next(double cost, double p, double log2_sum, double log2_scale) {
    return (cost + p) - log2_scale * log2_sum;
  }
  __device__ static Type shuffle_up(Type v) { return __shfl_up_sync(kFullMask, v, 1); }
  __device__ static Type shuffle(Type v, int lane) { return __shfl_sync(kFullMask, v, lane); }
  __device__ static uint64_t sealed(Type v) { return seal(v); }
  __device__ static Type unsealed(uint64_t w) { return unseal(w); }
  template <typename T>
  __device__ static T value(Type v) {
    return static_cast<T>(v);
  }
};

// The rounding error of s = a + b (TwoSum: exact whatever the magnitudes).
__device__ inline float sum_error(float a, float b, float s) {
  const float b_part = __fsub_rn(s, a), a_part = __fsub_rn(s, b_part);
  return __fadd_rn(__fsub_rn(a, a_part), __fsub_rn(b, b_part));
}

// R = hi + lo with hi = lo + hi rounded (|lo| <= half an ulp of hi), so (hi, lo) compare in
// order. The pivot is the smallest predecessor, so each gap (hi_k - p.hi) + (lo_k - p.lo) is
// exact in its first term (Sterbenz) wherever its weight is not negligible, and never below 0: a
// pivot off by an ulp of hi would give exp a positive exponent of that ulp over gamma, which
// overflows once R / gamma passes 2^31. The next R is cost + p + t (t = -gamma log sum): cost +
// p.hi by TwoSum, the small terms summed in float, the two added by TwoSum again.
template <>
struct RValue<float> {
  using Type = TwoFloat;
  __device__ static Type infinite() { return {INFINITY, 0.0f}; }
  __device__ static Type zero() { return {0.0f, 0.0f}; }
  // NaN loses every comparison, so a NaN predecessor is the pivot only if the other two are not
  // lower; the gaps then carry it into R.
  __device__ static Type lower(Type a, Type b) {
    const bool a_lower = (a.hi < b.hi) | ((a.hi == b.hi) & (a.lo < b.lo));  // no short circuit: no branch
    return {a_lower ? a.hi : b.hi, a_lower ? a.lo : b.lo};
  }
  // up comes last: it arrives by a shuffle, after the other two.
  __device__ static Type pivot(Type diag, Type up, Type left) { return lower(lower(diag, left), up); }
  __device__ static bool finite(Type p) { return !(p.hi >= INFINITY); }
  __device__ static float exponent(Type r, Type p, float scale) {
    return fmaf(__fsub_rn(r.hi, p.hi), scale, __fmul_rn(__fsub_rn(r.lo, p.lo), scale));
  }
  __device__ static Type next(float cost, Type p, float log2_sum, float log2_scale) {
    const float s = __fadd_rn(cost, p.hi), small = __fadd_rn(sum_error(cost, p.hi, s), p.lo);
    const float w = fmaf(log2_sum, -log2_scale, small), hi = __fadd_rn(s, w);
    return {hi, sum_error(s, w, hi)};
  }
  __device__ static Type shuffle_up(Type v) {
    return {__shfl_up_sync(kFullMask, v.hi, 1), __shfl_up_sync(kFullMask, v.lo, 1)};
  }
  __device__ static Type shuffle(Type v, int lane) {
    return {__shfl_sync(kFullMask, v.hi, lane), __shfl_sync(kFullMask, v.lo, lane)};
  }
  __device__ static uint64_t sealed(Type v) { return seal(v.hi, v.lo); }
  __device__ static Type unsealed(uint64_t w) {
    Type v;
    unseal(w, v.hi, v.lo);
    return v;
  }
  template <typename T>
  __device__ static T value(Type v) {
    return __fadd_rn(v.hi, v.lo);
  }
};

}  // namespace sdtw::kernels::detail
