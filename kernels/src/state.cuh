#pragma once
// The saved state of one DP cell: the softmin weights of its predecessors (diagonal, up; left is
// what is left of one), normalised to sum to one. Before the forward reaches a cell its word holds
// the cell's cost; the backward overwrites it with E (hold / held). poison() marks the end cell of
// a pair whose value is not finite (no weights can encode it).
#include <cstdint>

namespace sdtw::kernels::detail {

template <typename T>
struct CellState;

// float: two unorm16 in one word. Weights are integers out of 65535 so that the three sum to one
// exactly and a predecessor with weight 0 (off-band, +inf) stays exactly 0.
template <>
struct CellState<float> {
  using Word = uint32_t;
  using Compute = float;
  static constexpr float kScale = 65535.0f;
  static constexpr bool kEveryWordFinite = true;  // any 32 bits decode to finite weights
  static constexpr bool kCostsApart = false;      // the forward stages costs in the words (hold)

  // Adding 1.5 x 2^23 rounds a product in [0, 2^22) to the nearest integer, left in the low bits:
  // one FMA, where a conversion would use the slower pipe that exp and log share. (A NaN weight
  // becomes some in-range word after encode's clamps; its cell's R is NaN, so either the pair's
  // end is poisoned or its E is 0.)
  __device__ static uint32_t quantise(float e, float scale) {
    return __float_as_uint(fmaf(e, scale, 0x1.8p23f)) - 0x4b400000u;
  }
  __device__ static Word encode(float ediag, float eup, float eleft, float inv_sum) {
    const float scale = inv_sum * kScale;
    uint32_t qd = quantise(ediag, scale);
    uint32_t qu = quantise(eup, scale);
    if (qd > 65535u) qd = 65535u;
    if (eleft == 0.0f || qd + qu > 65535u) qu = 65535u - qd;
    return qd | (qu << 16);
  }
  __device__ static Word empty() { return 0u; }
  __device__ static Word poison() { return 0xffffffffu; }  // qd + qu > 65535: never a weight pair
  __device__ static bool is_poison(Word w) { return w == 0xffffffffu; }
  __device__ static void decode(Word w, float& wdiag, float& wup, float& wleft) {
    const uint32_t qd = w & 0xffffu, qu = w >> 16;
    wdiag = static_cast<float>(qd) * (1.0f / kScale);
    wup = static_cast<float>(qu) * (1.0f / kScale);
    wleft = static_cast<float>(65535u - qd - qu) * (1.0f / kScale);
  }
  __device__ static Word hold(float v) { return __float_as_uint(v); }
  __device__ static float held(Word w) { return __uint_as_float(w); }
};

struct alignas(16) DoublePair {
  double diag;
  double up;
};

// double: the weights themselves; left = 1 - diag - up is exact enough in float64.
template <>
struct CellState<double> {
  using Word = DoublePair;
  using Compute = double;
  static constexpr bool kEveryWordFinite = false;
  static constexpr bool kCostsApart = false;

  __device__ static Word encode(double ediag, double eup, double eleft, double inv_sum) {
    Word w{ediag * inv_sum, eup * inv_sum};
    if (eleft == 0.0) w.up = 1.0 - w.diag;
    return w;
  }
  __device__ static Word empty() { return {0.0, 0.0}; }
  __device__ static Word poison() { return {NAN, NAN}; }
  __device__ static bool is_poison(Word w) { return isnan(w.diag); }
  __device__ static void decode(Word w, double& wdiag, double& wup, double& wleft) {
    wdiag = w.diag;
    wup = w.up;
    wleft = fmax(0.0, 1.0 - w.diag - w.up);
  }
  __device__ static Word hold(double v) { return {v, 0.0}; }
  __device__ static double held(Word w) { return w.diag; }
};

struct alignas(8) FloatPair {
  float diag, up;
};

// The second order's float32 state, 8 bytes: the diagonal and up weights as floats and the left one
// what is left of them, exactly 0 where the sign bit of up says so (an unreachable left
// predecessor). The Hessian-vector product's sweeps multiply the weights into directional
// derivatives, where unorm16 gives 1e-5 to 5e-4 relative error; this gives what three floats give
// (lab/kernels-log.md), at half their bytes. Only the sweeps read it, through Weights (hessian_product.cuh),
// which takes the left weight in float64.
struct FloatWeights {
  using Word = FloatPair;
  using Compute = float;
  // The forward stages the costs (4 bytes) apart from the words (8), in a region of the state's
  // layout of their own (ForwardArgs::costs), so that staging moves 4 bytes a cell, not 8.
  static constexpr bool kCostsApart = true;

  __device__ static Word encode(float ediag, float eup, float eleft, float inv_sum) {
    const float up = eup * inv_sum;
    return {ediag * inv_sum, eleft == 0.0f ? -up : up};  // -0.0f where up is 0 too
  }
  __device__ static Word empty() { return {0.0f, -0.0f}; }
  __device__ static Word poison() { return {NAN, NAN}; }
  __device__ static Word hold(float v) { return {v, 0.0f}; }
  __device__ static float held(Word w) { return w.diag; }
};

}  // namespace sdtw::kernels::detail
