#include "sdtw/reference/batch.hpp"

#include <sstream>
#include <stdexcept>

#include "sdtw/reference/second_order.hpp"
#include "sdtw/reference/soft_dtw.hpp"
#include "sdtw/reference/sqeuclidean.hpp"

namespace sdtw::reference {
namespace {

long pair_length(const long* lengths, long b, long full, const char* name) {
  if (!lengths) return full;
  if (lengths[b] < 1 || lengths[b] > full) {
    std::ostringstream msg;
    msg << name << "[" << b << "] must be in [1, " << full << "] (got " << lengths[b] << ")";
    throw std::invalid_argument(msg.str());
  }
  return lengths[b];
}

void check_shape(const BatchShape& s) {
  if (s.batch < 1 || s.n < 1 || s.m < 1 || s.dim < 1) {
    std::ostringstream msg;
    msg << "batch shape must be positive (got B = " << s.batch << ", N = " << s.n << ", M = " << s.m
        << ", dim = " << s.dim << ")";
    throw std::invalid_argument(msg.str());
  }
}

// The first rows x cols block of a row-major (.., stride) array.
Matrix take(const double* base, long rows, long cols, long stride) {
  Matrix a(rows, cols);
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) a(r, c) = base[r * stride + c];
  return a;
}

void put(const Matrix& a, double* base, long stride) {
  for (long r = 0; r < a.rows(); ++r)
    for (long c = 0; c < a.cols(); ++c) base[r * stride + c] = a(r, c);
}

}  // namespace

CostBatchResult soft_dtw_cost_batch(const double* D, const BatchShape& s, const Options& options,
                                    bool with_alignment) {
  check_shape(s);
  CostBatchResult out;
  out.values.resize(s.batch);
  if (with_alignment) out.E.assign(s.batch * s.n * s.m, 0.0);
  for (long b = 0; b < s.batch; ++b) {
    const long n = pair_length(s.x_len, b, s.n, "x_len"), m = pair_length(s.y_len, b, s.m, "y_len");
    const Matrix Db = take(D + b * s.n * s.m, n, m, s.m);
    if (with_alignment) {
      const SoftDtwResult r = soft_dtw_with_alignment(Db, options);
      out.values[b] = r.value;
      put(r.E, out.E.data() + b * s.n * s.m, s.m);
    } else {
      out.values[b] = soft_dtw(Db, options);
    }
  }
  return out;
}

SqEuclideanBatchResult soft_dtw_sqeuclidean_batch(const double* x, const double* y, const BatchShape& s,
                                                  const Options& options, bool with_gradient, bool normalize) {
  check_shape(s);
  SqEuclideanBatchResult out;
  out.values.resize(s.batch);
  if (with_gradient) {
    out.grad_x.assign(s.batch * s.n * s.dim, 0.0);
    out.grad_y.assign(s.batch * s.m * s.dim, 0.0);
  }
  for (long b = 0; b < s.batch; ++b) {
    const long n = pair_length(s.x_len, b, s.n, "x_len"), m = pair_length(s.y_len, b, s.m, "y_len");
    const Matrix xb = take(x + b * s.n * s.dim, n, s.dim, s.dim);
    const Matrix yb = take(y + b * s.m * s.dim, m, s.dim, s.dim);
    const SoftDtwGradResult r = normalize ? soft_dtw_divergence(xb, yb, options) : soft_dtw_sqeuclidean(xb, yb, options);
    out.values[b] = r.value;
    if (with_gradient) {
      put(r.grad.x, out.grad_x.data() + b * s.n * s.dim, s.dim);
      put(r.grad.y, out.grad_y.data() + b * s.m * s.dim, s.dim);
    }
  }
  return out;
}

CostBatchHessianProduct soft_dtw_hessian_product_cost_batch(const double* D, const double* Z, const BatchShape& s,
                                                            const Options& options) {
  check_shape(s);
  CostBatchHessianProduct out;
  out.values.resize(s.batch);
  out.value_dots.resize(s.batch);
  out.E.assign(s.batch * s.n * s.m, 0.0);
  out.E_dot.assign(s.batch * s.n * s.m, 0.0);
  for (long b = 0; b < s.batch; ++b) {
    const long n = pair_length(s.x_len, b, s.n, "x_len"), m = pair_length(s.y_len, b, s.m, "y_len");
    const long offset = b * s.n * s.m;
    const SoftDtwHessianProduct h =
        soft_dtw_hessian_product(take(D + offset, n, m, s.m), take(Z + offset, n, m, s.m), options);
    out.values[b] = h.value;
    out.value_dots[b] = h.value_dot;
    put(h.E, out.E.data() + offset, s.m);
    put(h.E_dot, out.E_dot.data() + offset, s.m);
  }
  return out;
}

}  // namespace sdtw::reference
