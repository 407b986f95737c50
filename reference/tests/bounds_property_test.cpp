// Soft-DTW against hard DTW: dtw - gamma log(#paths) <= sdtw <= dtw, and the gap closes as gamma -> 0.
#ifdef SDTW_HAVE_RAPIDCHECK
#include "rc_support.hpp"

namespace sdtw::test {
namespace {

// The softmin of a finite set lies in [min - gamma log k, min], and so does a sum of path costs.
SDTW_PROPERTY(Bounds, SoftDtwBetweenDtwAndDtwMinusGammaLogPaths, 200) {
  const Shape s = draw_shape();
  const Matrix D = draw_cost(s);
  const double sdtw = reference::soft_dtw(D, s.options());
  const double dtw = reference::hard_dtw(D, s.band).value;
  const double log_paths = std::log(naive::count_paths(s.n, s.m, naive_band(s.band)));
  const double slack = 1e-12 * std::max(1.0, std::abs(dtw));
  RC_ASSERT(sdtw <= dtw + slack);
  RC_ASSERT(sdtw >= dtw - s.gamma * log_paths - slack);
}

// dtw - sdtw is the entropy term, >= 0 and non-increasing as gamma shrinks (d sdtw / d gamma <= 0).
SDTW_PROPERTY(Bounds, SoftDtwTendsToDtwAsGammaShrinks, 100) {
  const Shape s = draw_shape();
  const Matrix x = draw_series(s.n, s.dim), y = draw_series(s.m, s.dim);
  const Matrix D = reference::SqEuclideanCost(x, y).compute();
  const double dtw = reference::hard_dtw(D, s.band).value;
  const double log_paths = std::log(naive::count_paths(s.n, s.m, naive_band(s.band)));
  const double slack = 1e-12 * std::max(1.0, std::abs(dtw));
  double previous_gap = reference::kInf;
  for (double gamma = 10.0; gamma >= 1e-9; gamma /= 10.0) {
    const double gap = dtw - reference::soft_dtw(D, {gamma, s.band});
    RC_ASSERT(gap >= -slack);
    RC_ASSERT(gap <= gamma * log_paths + slack);
    RC_ASSERT(gap <= previous_gap + slack);
    previous_gap = gap;
  }
}

}  // namespace
}  // namespace sdtw::test
#endif
