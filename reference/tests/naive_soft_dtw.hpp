#pragma once
// An independent O(NM) soft-DTW on plain std::vector grids, written from the paper
// (Cuturi & Blondel 2017, Algorithms 1 and 2) without looking at the reference's code paths:
// its own softmin (log-sum-exp shifted by the max of -a/gamma), the padded E/R backward, and
// gradients by explicit loops rather than a Jacobian product.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace sdtw::test::naive {

using Grid = std::vector<std::vector<double>>;  // row-major rows
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// band < 0 means no band.
inline bool kept(long i, long j, long band) { return band < 0 || std::labs(i - j) <= band; }

inline Grid grid(long rows, long cols, double fill) { return Grid(rows, std::vector<double>(cols, fill)); }

inline double softmin(const std::array<double, 3>& a, double gamma) {
  std::array<double, 3> r;
  for (int k = 0; k < 3; ++k) r[k] = -a[k] / gamma;
  const double rmax = std::max({r[0], r[1], r[2]});
  double sum = 0.0;
  for (double v : r) sum += std::exp(v - rmax);
  return -gamma * (std::log(sum) + rmax);
}

struct SoftDtw {
  double value;
  Grid E;  // N x M
};

inline SoftDtw soft_dtw(const Grid& D, double gamma, long band) {
  const long N = static_cast<long>(D.size()), M = static_cast<long>(D[0].size());
  // R and D padded to (N + 2) x (M + 2); row/column 0 is the start border, N + 1 / M + 1 the end border.
  Grid R = grid(N + 2, M + 2, kInf), Dp = grid(N + 2, M + 2, 0.0);
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j) Dp[i][j] = D[i - 1][j - 1];
  R[0][0] = 0.0;
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (kept(i - 1, j - 1, band)) R[i][j] = Dp[i][j] + softmin({R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]}, gamma);
  const double value = R[N][M];

  // Algorithm 2: -inf on the end border and outside the band makes those weights exp(-inf) = 0;
  // R[N+1][M+1] = R[N][M] with D = 0 there makes the weight into (N, M) exactly 1.
  for (long i = 0; i <= N + 1; ++i) R[i][M + 1] = -kInf;
  for (long j = 0; j <= M + 1; ++j) R[N + 1][j] = -kInf;
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (!kept(i - 1, j - 1, band)) R[i][j] = -kInf;
  R[N + 1][M + 1] = value;
  Grid E = grid(N + 2, M + 2, 0.0);
  E[N + 1][M + 1] = 1.0;
  for (long j = M; j >= 1; --j)
    for (long i = N; i >= 1; --i) {
      if (!kept(i - 1, j - 1, band)) continue;
      const double a = std::exp((R[i + 1][j] - R[i][j] - Dp[i + 1][j]) / gamma);
      const double b = std::exp((R[i][j + 1] - R[i][j] - Dp[i][j + 1]) / gamma);
      const double c = std::exp((R[i + 1][j + 1] - R[i][j] - Dp[i + 1][j + 1]) / gamma);
      E[i][j] = E[i + 1][j] * a + E[i][j + 1] * b + E[i + 1][j + 1] * c;
    }
  Grid out = grid(N, M, 0.0);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < M; ++j) out[i][j] = E[i + 1][j + 1];
  return {value, out};
}

inline Grid sqeuclidean(const Grid& x, const Grid& y) {
  Grid D = grid(static_cast<long>(x.size()), static_cast<long>(y.size()), 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < y.size(); ++j)
      for (size_t k = 0; k < x[i].size(); ++k) D[i][j] += (x[i][k] - y[j][k]) * (x[i][k] - y[j][k]);
  return D;
}

// d sdtw / d x[i][k] = sum_j E[i][j] * 2 (x[i][k] - y[j][k]), and likewise for y.
inline std::array<Grid, 2> sqeuclidean_gradients(const Grid& x, const Grid& y, const Grid& E) {
  const long d = static_cast<long>(x[0].size());
  Grid gx = grid(static_cast<long>(x.size()), d, 0.0), gy = grid(static_cast<long>(y.size()), d, 0.0);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < y.size(); ++j)
      for (long k = 0; k < d; ++k) {
        const double t = 2.0 * E[i][j] * (x[i][k] - y[j][k]);
        gx[i][k] += t;
        gy[j][k] -= t;
      }
  return {gx, gy};
}

inline double hard_dtw(const Grid& D, long band) {
  const long N = static_cast<long>(D.size()), M = static_cast<long>(D[0].size());
  Grid R = grid(N + 1, M + 1, kInf);
  R[0][0] = 0.0;
  for (long i = 1; i <= N; ++i)
    for (long j = 1; j <= M; ++j)
      if (kept(i - 1, j - 1, band)) R[i][j] = D[i - 1][j - 1] + std::min({R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]});
  return R[N][M];
}

// Monotone (right, down, diagonal) paths from (0, 0) to (N-1, M-1) inside the band.
inline double count_paths(long N, long M, long band) {
  Grid C = grid(N, M, 0.0);
  for (long i = 0; i < N; ++i)
    for (long j = 0; j < M; ++j) {
      if (!kept(i, j, band)) continue;
      if (i == 0 && j == 0) {
        C[i][j] = 1.0;
        continue;
      }
      C[i][j] = (i > 0 ? C[i - 1][j] : 0.0) + (j > 0 ? C[i][j - 1] : 0.0) + (i > 0 && j > 0 ? C[i - 1][j - 1] : 0.0);
    }
  return C[N - 1][M - 1];
}

}  // namespace sdtw::test::naive
