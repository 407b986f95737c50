#include "sdtw/reference/hard_dtw.hpp"

#include <algorithm>

namespace sdtw::reference {

HardDtwResult hard_dtw(const Matrix& D, const std::optional<long>& bandwidth) {
  check_nonempty(D.rows(), D.cols(), "D");
  check_finite(D, "D");
  check_band(D.rows(), D.cols(), bandwidth);
  const long N = D.rows(), M = D.cols();
  Matrix R = Matrix::Constant(N + 1, M + 1, kInf);
  R(0, 0) = 0.0;
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (in_band(i - 1, j - 1, bandwidth))
        R(i, j) = D(i - 1, j - 1) + std::min({R(i - 1, j - 1), R(i - 1, j), R(i, j - 1)});

  // Walk back from (N, M) to (1, 1), preferring the diagonal on ties.
  std::vector<std::pair<long, long>> path;
  long i = N, j = M;
  while (true) {
    path.emplace_back(i - 1, j - 1);
    if (i == 1 && j == 1) break;
    const double diag = R(i - 1, j - 1), up = R(i - 1, j), left = R(i, j - 1);
    if (diag <= up && diag <= left) {
      --i;
      --j;
    } else if (up <= left) {
      --i;
    } else {
      --j;
    }
  }
  std::reverse(path.begin(), path.end());
  return {R(N, M), path};
}

}  // namespace sdtw::reference
