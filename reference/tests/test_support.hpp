#pragma once
// Shared by the reference tests: tolerance checks and central finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "naive_soft_dtw.hpp"
#include "random_inputs.hpp"
#include "sdtw/reference.hpp"

namespace sdtw::test {

using reference::Matrix;
using reference::Options;

inline naive::Grid to_grid(const Matrix& a) {
  naive::Grid g = naive::grid(a.rows(), a.cols(), 0.0);
  for (long i = 0; i < a.rows(); ++i)
    for (long j = 0; j < a.cols(); ++j) g[i][j] = a(i, j);
  return g;
}

inline Matrix to_matrix(const naive::Grid& g) {
  Matrix a(static_cast<long>(g.size()), static_cast<long>(g[0].size()));
  for (long i = 0; i < a.rows(); ++i)
    for (long j = 0; j < a.cols(); ++j) a(i, j) = g[i][j];
  return a;
}

inline long naive_band(const std::optional<long>& band) { return band ? *band : -1; }

// A random problem shape for the loop-based tests (the RapidCheck ones draw their own).
struct Shape {
  long n, m, dim;
  double gamma;
  std::optional<long> band;
  Options options() const { return {gamma, band}; }
};

inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << "N = " << s.n << ", M = " << s.m << ", dim = " << s.dim << ", gamma = " << s.gamma << ", bandwidth = ";
  return s.band ? os << *s.band : os << "none";
}

// N, M in 1..max_len, gamma log-uniform in [gamma_lo, 10], a band |N - M| + 0..3 one time in three.
inline Shape random_shape(std::uint64_t seed, long max_len = 12, double gamma_lo = 1e-3) {
  std::mt19937_64 rng(seed);
  auto below = [&](long k) { return static_cast<long>(rng() % static_cast<std::uint64_t>(k)); };
  Shape s{1 + below(max_len), 1 + below(max_len), 1 + below(4), 0.0, std::nullopt};
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  s.gamma = gamma_lo * std::pow(10.0 / gamma_lo, u);
  if (below(3) == 0) s.band = std::labs(s.n - s.m) + below(4);
  return s;
}

// E's weights are exp((R(s) - D(s) - R(c)) / gamma): a rounding of R by eps |R| moves each by
// eps |R| / gamma, compounded over the N + M steps of a path. Two correct implementations that
// round R differently therefore agree on E only to about this much (measured: within 4x of
// eps (N + M) |R| / gamma); it is 1e-12 whenever gamma is not small against |R| (N + M) eps.
inline double alignment_tolerance(double value, double gamma, long n, long m) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  return std::max(1e-12, 16 * eps * static_cast<double>(n + m) * std::max(1.0, std::abs(value)) / gamma);
}

inline double max_abs(const Matrix& a) { return a.size() ? a.cwiseAbs().maxCoeff() : 0.0; }

// |a - b| <= tol * max(1, |a|, |b|): relative for large values, absolute near zero.
inline ::testing::AssertionResult close(double a, double b, double tol) {
  // Without this, inf would pass (inf <= tol * inf).
  if (!std::isfinite(a) || !std::isfinite(b))
    return a == b ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << a << " vs " << b;
  const double scale = std::max({1.0, std::abs(a), std::abs(b)});
  if (std::abs(a - b) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::setprecision(17) << a << " vs " << b << ": |diff| = "
                                       << std::abs(a - b) << " > " << tol << " * " << scale;
}

// Norm-wise: max |a - b| <= tol * max(1, max |b|), so entries of E far below 1 need not match to
// full relative precision (their rounding is relative to the large entries).
inline ::testing::AssertionResult close(const Matrix& a, const Matrix& b, double tol) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x"
                                         << b.cols();
  if (!a.allFinite() || !b.allFinite())
    return a == b ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "non-finite entries differ";
  const double diff = max_abs(a - b), scale = std::max(1.0, max_abs(b));
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  long r = 0, c = 0;
  (a - b).cwiseAbs().maxCoeff(&r, &c);
  return ::testing::AssertionFailure() << std::setprecision(17) << "max |diff| = " << diff << " > " << tol << " * "
                                       << scale << " at (" << r << ", " << c << "): " << a(r, c) << " vs " << b(r, c);
}

// (f(a + h e_k) - f(a - h e_k)) / 2h for every entry k of a.
template <class F>
Matrix central_difference(const Matrix& a, F&& f, double h) {
  Matrix g(a.rows(), a.cols());
  Matrix p = a;
  for (long i = 0; i < a.rows(); ++i)
    for (long j = 0; j < a.cols(); ++j) {
      p(i, j) = a(i, j) + h;
      const double up = f(p);
      p(i, j) = a(i, j) - h;
      const double down = f(p);
      p(i, j) = a(i, j);
      g(i, j) = (up - down) / (2 * h);
    }
  return g;
}

// The call throws std::invalid_argument whose message contains `names`.
inline ::testing::AssertionResult rejects(const std::function<void()>& call, const std::string& names) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(names) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\" does not name \"" << names << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else than std::invalid_argument: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw (expected a message naming \"" << names << "\")";
}

}  // namespace sdtw::test
