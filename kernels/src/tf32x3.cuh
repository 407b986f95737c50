#pragma once
// float32 products on the tensor cores at float32 accuracy (3xTF32): each operand is split into a
// TF32 head and a TF32 tail, and head*head + head*tail + tail*head is accumulated in float32; the
// dropped tail*tail term is below 2^-22 relative.
#include <cstdint>

namespace sdtw::kernels::detail {

struct Tf32Split {
  uint32_t head, tail;
};

// The head is v with its low 13 mantissa bits cleared (exact: one logic operation instead of a
// conversion); the tail, the exact remainder, is rounded to TF32, so the split loses under 2^-22
// of v. (Left to the tensor cores' truncation, the tail lost 2^-20: gradients 10x less accurate.)
__device__ inline Tf32Split split_tf32(float v) {
  const uint32_t head = __float_as_uint(v) & 0xffffe000u;
  uint32_t tail;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(tail) : "f"(v - __uint_as_float(head)));
  return {head, tail};
}

// One m16n8k8 step, d += a * b. Fragments (g = lane / 4, t = lane % 4): a = A(g, t), A(g + 8, t),
// A(g, t + 4), A(g + 8, t + 4); b = B(t, g), B(t + 4, g); d = D(g, 2t), D(g, 2t + 1),
// D(g + 8, 2t), D(g + 8, 2t + 1).
__device__ inline void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a * b with a and b given as splits: the small terms first.
__device__ inline void mma_3xtf32(float (&d)[4], const Tf32Split (&a)[4], const Tf32Split (&b)[2]) {
  const uint32_t ah[4] = {a[0].head, a[1].head, a[2].head, a[3].head};
  const uint32_t at[4] = {a[0].tail, a[1].tail, a[2].tail, a[3].tail};
  const uint32_t bh[2] = {b[0].head, b[1].head};
  const uint32_t bt[2] = {b[0].tail, b[1].tail};
  mma_tf32(d, at, bh);
  mma_tf32(d, ah, bt);
  mma_tf32(d, ah, bh);
}

}  // namespace sdtw::kernels::detail
