// The CPU back end: the CUDA kernels' recursions as plain loops (the original's Numba CPU code
// visits the cells column by column, j outer and i inner, and so do these loops; any order that
// respects the dependencies gives the same numbers), with the very same cell arithmetic.
#include <cstdint>
#include <limits>

#include "detail.hpp"
#include "sdtw/baselines/maghoumi/cell.hpp"

namespace sdtw::baselines::maghoumi::detail {
namespace {

template <typename T>
void forward_loops(const T* D, T* R, std::int64_t batch, std::int64_t n, std::int64_t m, double gamma,
                   double bandwidth) {
  const double inv_gamma = 1.0 / gamma;
  const std::int64_t rs = m + 2;
  for (std::int64_t b = 0; b < batch; ++b) {
    const T* d = D + b * n * m;
    T* r = R + b * (n + 2) * rs;
    for (std::int64_t j = 1; j <= m; ++j)
      for (std::int64_t i = 1; i <= n; ++i) {
        if (cell::outside_band(i, j, bandwidth)) continue;
        r[i * rs + j] = cell::forward<T>(r[(i - 1) * rs + j - 1], r[(i - 1) * rs + j], r[i * rs + j - 1],
                                         d[(i - 1) * m + j - 1], gamma, inv_gamma);
      }
  }
}

template <typename T>
void backward_loops(const T* D, T* R, T* E, std::int64_t batch, std::int64_t n, std::int64_t m, double inv_gamma,
                    double bandwidth) {
  const std::int64_t rs = m + 2, ps = (n + 2) * rs;
  for (std::int64_t k = 0; k < batch; ++k) {
    const T* d = D + k * ps;
    T* r = R + k * ps;
    T* e = E + k * ps;
    for (std::int64_t j = m; j >= 1; --j)
      for (std::int64_t i = n; i >= 1; --i) {
        const std::int64_t c = i * rs + j, down = c + rs, right = c + 1, diag = c + rs + 1;
        if (cell::is_inf(r[c])) r[c] = -std::numeric_limits<T>::infinity();
        if (cell::outside_band(i, j, bandwidth)) continue;
        e[c] = cell::backward<T>(r[c], r[down], r[right], r[diag], d[down], d[right], d[diag], e[down], e[right],
                                 e[diag], inv_gamma);
      }
  }
}

}  // namespace

void cpu_forward(const at::Tensor& D, at::Tensor& R, double gamma, double bandwidth) {
  const at::Tensor Dc = D.contiguous();
  AT_DISPATCH_FLOATING_TYPES(Dc.scalar_type(), "maghoumi_cpu_forward", [&] {
    forward_loops<scalar_t>(Dc.data_ptr<scalar_t>(), R.data_ptr<scalar_t>(), Dc.size(0), Dc.size(1), Dc.size(2),
                            gamma, bandwidth);
  });
}

void cpu_backward(const at::Tensor& D_padded, at::Tensor& R, at::Tensor& E, double inv_gamma, double bandwidth) {
  AT_DISPATCH_FLOATING_TYPES(R.scalar_type(), "maghoumi_cpu_backward", [&] {
    backward_loops<scalar_t>(D_padded.data_ptr<scalar_t>(), R.data_ptr<scalar_t>(), E.data_ptr<scalar_t>(),
                             R.size(0), R.size(1) - 2, R.size(2) - 2, inv_gamma, bandwidth);
  });
}

}  // namespace sdtw::baselines::maghoumi::detail
