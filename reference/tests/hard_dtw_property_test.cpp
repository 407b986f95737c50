// hard_dtw: its path is a valid alignment in the band and its cost is the (optimal) value.
#ifdef SDTW_HAVE_RAPIDCHECK
#include "rc_support.hpp"

namespace sdtw::test {
namespace {

SDTW_PROPERTY(HardDtw, PathIsAnOptimalAlignmentInTheBand, 200) {
  const Shape s = draw_shape();
  const Matrix D = draw_cost(s);
  const auto r = reference::hard_dtw(D, s.band);
  RC_ASSERT(!r.path.empty());
  RC_ASSERT(r.path.front() == std::make_pair(0L, 0L));
  RC_ASSERT(r.path.back() == std::make_pair(s.n - 1, s.m - 1));
  double cost = 0.0;
  for (size_t k = 0; k < r.path.size(); ++k) {
    const auto [i, j] = r.path[k];
    RC_ASSERT(naive::kept(i, j, naive_band(s.band)));
    cost += D(i, j);
    if (k == 0) continue;
    const long di = i - r.path[k - 1].first, dj = j - r.path[k - 1].second;
    RC_ASSERT(di >= 0 && di <= 1 && dj >= 0 && dj <= 1 && di + dj >= 1);
  }
  SDTW_RC_EXPECT(close(cost, r.value, 1e-12));
  SDTW_RC_EXPECT(close(r.value, naive::hard_dtw(to_grid(D), naive_band(s.band)), 1e-12));
}

}  // namespace
}  // namespace sdtw::test
#endif
