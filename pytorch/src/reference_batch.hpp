#pragma once
// How the CPU kernels run the float64 reference over a batch: in chunks of pairs on torch's thread
// pool, with the reference's argument errors as ValueError.
#include <ATen/Parallel.h>

#include <stdexcept>
#include <type_traits>

#include "checks.hpp"
#include "sdtw/reference/batch.hpp"
#include "sdtw/reference/constraints.hpp"

namespace sdtw::ops::detail {

inline sdtw::reference::Options reference_options(double gamma, int64_t bandwidth) {
  sdtw::reference::Options options;
  options.gamma = gamma;
  if (bandwidth >= 0) options.bandwidth = bandwidth;
  return options;
}

// run(shape, b0) for chunks [b0, b0 + shape.batch) of p's pairs, shape holding their lengths.
template <typename Run>
void for_each_chunk(const Pair& p, const Run& run) {
  static_assert(std::is_same_v<int64_t, long>, "the reference takes lengths as long");
  const int64_t* x_len = p.x_len ? p.x_len->data_ptr<int64_t>() : nullptr;
  const int64_t* y_len = p.y_len ? p.y_len->data_ptr<int64_t>() : nullptr;
  try {
    at::parallel_for(0, p.batch, 1, [&](int64_t b0, int64_t b1) {
      sdtw::reference::BatchShape s;
      s.batch = b1 - b0;
      s.n = p.n;
      s.m = p.m;
      s.x_len = x_len ? x_len + b0 : nullptr;
      s.y_len = y_len ? y_len + b0 : nullptr;
      run(s, b0);
    });
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, "sdtw: ", e.what());
  }
}

// Sakoe-Chiba and Itakura: D64 with +inf outside the reference's mask of each pair's lengths
// (tslearn's masks), a copy; the band and no constraint leave D64 as it is (the reference's
// Options.bandwidth runs the band).
inline at::Tensor constrained_cost(const at::Tensor& D64, const Pair& p, const Constraint& c) {
  if (c.kind != ConstraintKind::sakoe_chiba && c.kind != ConstraintKind::itakura) return D64;
  at::Tensor out = D64.clone();
  double* d = out.data_ptr<double>();
  const int64_t* x_len = p.x_len ? p.x_len->data_ptr<int64_t>() : nullptr;
  const int64_t* y_len = p.y_len ? p.y_len->data_ptr<int64_t>() : nullptr;
  try {
    for (int64_t b = 0; b < p.batch; ++b) {
      const long n = x_len ? x_len[b] : p.n, m = y_len ? y_len[b] : p.m;
      const sdtw::reference::Mask mask = c.kind == ConstraintKind::sakoe_chiba ? sdtw::reference::sakoe_chiba_mask(n, m, c.radius)
                                                                   : sdtw::reference::itakura_mask(n, m, c.max_slope);
      for (long i = 0; i < n; ++i)
        for (long j = 0; j < m; ++j)
          if (!mask(i, j)) d[(b * p.n + i) * p.m + j] = sdtw::reference::kInf;
    }
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, "sdtw: ", describe(c), ": ", e.what());
  }
  return out;
}

}  // namespace sdtw::ops::detail
