#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "errors.hpp"
#include "schedule.cuh"
#include "sdtw/kernels/second_order.hpp"
#include "workspace.hpp"

namespace sdtw::kernels {
namespace {

using detail::fail;

constexpr int kThreads = 256;
constexpr int kGrids = 4;  // R, R_dot, E, E_dot
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxWorkspaceBytes = 0x1p62;  // the byte count then fits in size_t

// The first order's checks (shape, lengths and band), then what is this kernel's own: gamma > 0,
// one block per pair, the workspace's size.
void validate(const SecondOrderProblem& p) {
  if (!(p.gamma > 0.0) || !std::isfinite(p.gamma)) fail("gamma must be finite and > 0 (got ", p.gamma, ")");
  Problem first{p.batch, p.n, p.m, 1, p.gamma, p.bandwidth, p.x_len, p.y_len};
  first.constraint = p.constraint;
  detail::validate(first);
  if (p.batch > INT_MAX) fail("batch must be <= 2^31 - 1, one block per pair (got ", p.batch, ")");
  // Four float64 grids of (n + 1) x (m + 1) cells per pair, counted in size_t below.
  const double bytes = static_cast<double>(p.batch) * static_cast<double>(p.n + 1) * static_cast<double>(p.m + 1) *
                       kGrids * sizeof(double);
  if (bytes > kMaxWorkspaceBytes)
    fail("batch * (n + 1) * (m + 1) is too large for a workspace: at ", kGrids * sizeof(double),
         " bytes a cell it must total <= 2^62 bytes (got ", bytes, " bytes for B = ", p.batch, ", n = ", p.n,
         ", m = ", p.m, ")");
}

// As the reference's softmin: NaN in, NaN out; all three infinite, infinite.
__device__ double softmin(double a, double b, double c, double gamma) {
  if (isnan(a) || isnan(b) || isnan(c)) return kNaN;
  const double m = fmin(fmin(a, b), c);
  if (m == kInf) return kInf;
  return m - gamma * log(exp(-(a - m) / gamma) + exp(-(b - m) / gamma) + exp(-(c - m) / gamma));
}

// One pair's (n + 1) x (m + 1) grid, row 0 and column 0 the borders, cell (i, j) at i * ld + j.
struct Grid {
  double* cells;
  int64_t ld;
  __device__ double& operator()(int64_t i, int64_t j) const { return cells[i * ld + j]; }
};

// The softmin weights at cell (i, j) of its predecessors (i-1, j-1), (i-1, j), (i, j-1), and the
// same predecessors' entries of a second grid.
struct Predecessors {
  double w[3];
  double v[3];
};

__device__ Predecessors predecessors(const Grid& R, const Grid& V, int64_t i, int64_t j, double gamma) {
  const double a = R(i - 1, j - 1), b = R(i - 1, j), c = R(i, j - 1);
  const double m = fmin(fmin(a, b), c);
  const double wa = exp((m - a) / gamma), wb = exp((m - b) / gamma), wc = exp((m - c) / gamma);
  const double s = wa + wb + wc;
  return {{wa / s, wb / s, wc / s}, {V(i - 1, j - 1), V(i - 1, j), V(i, j - 1)}};
}

// Whether 1-based cell (i, j) of an n x m pair is inside the constraint (the band included).
__device__ bool admissible(const Constraint& c, int64_t i, int64_t j, int64_t n, int64_t m) {
  const ColumnRange r = column_range(c, static_cast<int>(i - 1), static_cast<int>(n), static_cast<int>(m));
  return j - 1 >= r.lo && j - 1 < r.hi;
}

// The cells (i, d - i) of anti-diagonal d inside 1..n x 1..m, strided over the block's threads.
template <typename F>
__device__ void for_each_on_diagonal(int64_t d, int64_t n, int64_t m, F&& f) {
  const int64_t lo = max(int64_t{1}, d - m), hi = min(n, d - 1);
  for (int64_t i = lo + threadIdx.x; i <= hi; i += blockDim.x) f(i, d - i);
}

template <typename In>
__device__ bool finite_value(double value) {
  // As the operators' first order: a value that overflows the loss's dtype has NaN derivatives.
  if constexpr (std::is_same_v<In, float>) return isfinite(static_cast<float>(value));
  return isfinite(value);
}

// Two blocks per SM: ptxas then keeps every value in registers (with one it spilled a word).
template <typename In>
__global__ void __launch_bounds__(kThreads, 2)
    hessian_product_kernel(SecondOrderProblem p, const In* D, const double* G, double* E_dot, double* workspace) {
  const int64_t b = blockIdx.x;
  const int64_t n = p.x_len ? detail::Schedule::clamp_length(p.x_len[b], p.n) : p.n;
  const int64_t m = p.y_len ? detail::Schedule::clamp_length(p.y_len[b], p.m) : p.m;
  const int64_t ld = p.m + 1, grid_cells = (p.n + 1) * ld, pair_cells = p.n * p.m;
  double* base = workspace + b * kGrids * grid_cells;
  const Grid R{base, ld}, R_dot{base + grid_cells, ld};
  const Grid E{base + 2 * grid_cells, ld}, E_dot_grid{base + 3 * grid_cells, ld};
  const In* Db = D + b * pair_cells;
  const double* Gb = G + b * pair_cells;
  double* out = E_dot + b * pair_cells;
  const double gamma = p.gamma;

  const auto write_out = [&](bool undefined) {
    for (int64_t k = threadIdx.x; k < pair_cells; k += blockDim.x) {
      const int64_t i = k / p.m, j = k % p.m;
      out[k] = i < n && j < m ? (undefined ? kNaN : E_dot_grid(i + 1, j + 1)) : 0.0;
    }
  };

  int bad_direction = 0;
  for (int64_t k = threadIdx.x; k < n * m; k += blockDim.x)
    if (!isfinite(Gb[(k / m) * p.m + k % m])) bad_direction = 1;
  for (int64_t j = threadIdx.x; j <= m; j += blockDim.x) {
    R(0, j) = j == 0 ? 0.0 : kInf;
    R_dot(0, j) = 0.0;
  }
  for (int64_t i = threadIdx.x + 1; i <= n; i += blockDim.x) {
    R(i, 0) = kInf;
    R_dot(i, 0) = 0.0;
  }
  if (__syncthreads_or(bad_direction)) return write_out(true);  // block-uniform

  // R(i,j) = D + softmin of the predecessors; R_dot(i,j) = G + sum_k w_k R_dot(p_k), 0 where
  // unreachable (such a cell has weight 0 in every successor).
  for (int64_t d = 2; d <= n + m; ++d) {
    for_each_on_diagonal(d, n, m, [&](int64_t i, int64_t j) {
      double r = kInf, r_dot = 0.0;
      if (admissible(p.constraint, i, j, n, m)) {
        r = static_cast<double>(Db[(i - 1) * p.m + j - 1]) + softmin(R(i - 1, j - 1), R(i - 1, j), R(i, j - 1), gamma);
        if (r != kInf) {
          const Predecessors q = predecessors(R, R_dot, i, j, gamma);
          r_dot = Gb[(i - 1) * p.m + j - 1] + q.w[0] * q.v[0] + q.w[1] * q.v[1] + q.w[2] * q.v[2];
        }
      }
      R(i, j) = r;
      R_dot(i, j) = r_dot;
    });
    __syncthreads();
  }
  if (!finite_value<In>(R(n, m))) return write_out(true);  // block-uniform: every thread reads the same cell

  // E(p) = sum over reachable successors s of E(s) w_p(s), and its derivative
  // E_dot(p) = sum_s E_dot(s) w_p(s) + E(s) w_p(s) / gamma (sum_q w_q(s) R_dot(q) - R_dot(p)),
  // in the reference's order of successors: (i+1, j+1), (i+1, j), (i, j+1).
  for (int64_t d = n + m; d >= 2; --d) {
    for_each_on_diagonal(d, n, m, [&](int64_t i, int64_t j) {
      double e = i == n && j == m ? 1.0 : 0.0, e_dot = 0.0;
      const int64_t si[3] = {i + 1, i + 1, i}, sj[3] = {j + 1, j, j + 1};
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        if (si[k] > n || sj[k] > m || R(si[k], sj[k]) == kInf) continue;
        const Predecessors q = predecessors(R, R_dot, si[k], sj[k], gamma);
        const double mean = q.w[0] * q.v[0] + q.w[1] * q.v[1] + q.w[2] * q.v[2];
        const double e_s = E(si[k], sj[k]);
        e += e_s * q.w[k];
        e_dot += E_dot_grid(si[k], sj[k]) * q.w[k] + e_s * q.w[k] / gamma * (mean - q.v[k]);
      }
      E(i, j) = e;
      E_dot_grid(i, j) = e_dot;
    });
    __syncthreads();
  }
  write_out(false);
}

}  // namespace

std::size_t alignment_backward_workspace_bytes(const SecondOrderProblem& problem) {
  validate(problem);
  return static_cast<std::size_t>(problem.batch) * static_cast<std::size_t>(problem.n + 1) *
         static_cast<std::size_t>(problem.m + 1) * kGrids * sizeof(double);
}

template <typename In>
void alignment_backward(const SecondOrderProblem& problem, const In* D, const double* G, double* E_dot,
                        void* workspace, cudaStream_t stream) {
  static_assert(std::is_same_v<In, float> || std::is_same_v<In, double>, "D is float or double");
  validate(problem);
  detail::require(D, "D");
  detail::require(G, "G");
  detail::require(E_dot, "E_dot");
  detail::require(workspace, "workspace");
  if (reinterpret_cast<std::uintptr_t>(workspace) % alignof(double) != 0)
    fail("workspace must be aligned to ", alignof(double), " bytes (got address ", workspace, ")");
  SecondOrderProblem device_problem = problem;  // the band travels as the constraint
  device_problem.constraint =
      effective_constraint(problem.bandwidth, problem.constraint, problem.n, problem.m, problem.x_len || problem.y_len);
  hessian_product_kernel<In><<<static_cast<unsigned>(problem.batch), kThreads, 0, stream>>>(
      device_problem, D, G, E_dot, static_cast<double*>(workspace));
  detail::check(cudaGetLastError(), "alignment_backward launch");
}

template void alignment_backward<float>(const SecondOrderProblem&, const float*, const double*, double*, void*,
                                        cudaStream_t);
template void alignment_backward<double>(const SecondOrderProblem&, const double*, const double*, double*, void*,
                                         cudaStream_t);

}  // namespace sdtw::kernels
