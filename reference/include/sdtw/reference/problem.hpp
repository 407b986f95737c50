#pragma once
// Shared vocabulary of the reference: matrices, the soft-DTW options and their validation.
#include <Eigen/Dense>

#include <limits>
#include <optional>
#include <string>

namespace sdtw::reference {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A Sakoe-Chiba band keeps cell (i, j) only when |i - j| <= bandwidth, with the same absolute
// offset for N != M (as pytorch-softdtw-cuda and softdtw-cuda-torch define it). The end cell
// (N-1, M-1) is then reachable only when |N - M| <= bandwidth; other bands are rejected.
struct Options {
  double gamma = 1.0;
  std::optional<long> bandwidth;  // none: every cell is kept
};

bool in_band(long i, long j, const std::optional<long>& bandwidth);

// Throws std::invalid_argument naming the parameter and the constraint it breaks.
void check_gamma(double gamma);
void check_band(long n, long m, const std::optional<long>& bandwidth);
void check_finite(const Matrix& a, const std::string& name);
void check_nonempty(long rows, long cols, const std::string& name);
// `name` is got_rows x got_cols and must be rows x cols; `because` says where that shape comes from.
void check_shape(long got_rows, long got_cols, long rows, long cols, const std::string& name,
                 const std::string& because);

}  // namespace sdtw::reference
