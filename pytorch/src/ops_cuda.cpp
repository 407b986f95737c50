// CUDA implementations of the sdtw operators through sdtw::kernels. The state is the kernels'
// workspace, a uint8 tensor from the caching allocator; kernels run on the current stream; nothing
// here syncs with the host (lengths given on the CPU are copied to the device), so forward and
// backward can be captured in a CUDA graph when lengths are absent or already on the device.
#include <ATen/cuda/CUDAContext.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <stdexcept>
#include <type_traits>

#include "checks.hpp"
#include "ops_internal.hpp"
#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::ops::detail {
namespace {

kernels::Problem make_problem(int64_t batch, int64_t n, int64_t m, int64_t dim, double gamma, const Constraint& constraint,
                              const c10::optional<at::Tensor>& x_len = c10::nullopt,
                              const c10::optional<at::Tensor>& y_len = c10::nullopt) {
  kernels::Problem problem;
  problem.batch = batch;
  problem.n = n;
  problem.m = m;
  problem.dim = dim;
  problem.gamma = gamma;
  problem.constraint = constraint;
  problem.x_len = x_len ? x_len->data_ptr<int64_t>() : nullptr;
  problem.y_len = y_len ? y_len->data_ptr<int64_t>() : nullptr;
  return problem;
}

kernels::Problem make_problem(const Pair& p, double gamma, const Constraint& constraint) {
  return make_problem(p.batch, p.n, p.m, p.dim, gamma, constraint, p.x_len, p.y_len);
}

int64_t workspace_bytes(const kernels::Problem& problem, at::ScalarType compute) {
  if (problem.batch == 0) return 0;
  return static_cast<int64_t>(compute == at::kDouble ? kernels::workspace_bytes<double>(problem)
                                                     : kernels::workspace_bytes<float>(problem));
}

// Kernel errors become torch errors (ValueError for bad parameters).
template <typename F>
void run(F&& launch) {
  try {
    launch();
  } catch (const kernels::CudaError& e) {
    TORCH_CHECK(false, "sdtw CUDA kernel failed: ", e.what());
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, "sdtw: ", e.what());
  }
}

// The kernels read x and y as they are in float, double, bfloat16 and float16 (the last two
// computed in float, so autocast's bfloat16 leaves need no cast kernels); other floating types
// are cast to their compute dtype first.
at::Tensor as_read(const at::Tensor& t) {
  const at::ScalarType type = t.scalar_type();
  const bool read = type == at::kFloat || type == at::kDouble || type == at::kBFloat16 || type == at::kHalf;
  return (read ? t : t.to(compute_dtype(type))).contiguous();
}

template <typename In>
struct Input {
  using type = In;
  using compute = std::conditional_t<std::is_same_v<In, double>, double, float>;
};

// Calls f(Input<In>{}) with the element type of a tensor from as_read.
template <typename F>
void with_input(at::ScalarType type, F&& f) {
  switch (type) {
    case at::kDouble: return f(Input<double>{});
    case at::kBFloat16: return f(Input<__nv_bfloat16>{});
    case at::kHalf: return f(Input<__half>{});
    case at::kFloat: return f(Input<float>{});
    default: TORCH_CHECK(false, "sdtw: a tensor's dtype is ", type, " where as_read gives float, double, bfloat16 or half");
  }
}

template <typename In>
In* elements(const at::Tensor& t) {
  return reinterpret_cast<In*>(t.data_ptr());
}

at::Tensor new_state(const Pair& p, const kernels::Problem& problem, at::ScalarType compute) {
  return at::empty({workspace_bytes(problem, compute)}, p.a.options().dtype(at::kByte));
}

void check_state(const at::Tensor& state, const Pair& p, const kernels::Problem& problem, at::ScalarType compute) {
  TORCH_CHECK_VALUE(state.defined() && state.scalar_type() == at::kByte && state.dim() == 1 &&
                        state.numel() == workspace_bytes(problem, compute) && state.device() == p.a.device() &&
                        state.is_contiguous(),
                    "state does not belong to these inputs: pass the state that the forward returned for them");
}

std::tuple<at::Tensor, at::Tensor> cost_forward_cuda(const at::Tensor& D, double gamma, int64_t bandwidth,
                                                     const c10::optional<at::Tensor>& x_lengths,
                                                     const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_cost(D, gamma, c, x_lengths, y_lengths, Values::check);
  const c10::cuda::CUDAGuard device_guard(p.a.device());  // after the checks, which name a tensor on the wrong device
  const at::ScalarType compute = compute_dtype(D.scalar_type());
  const at::Tensor Dc = p.a.to(compute).contiguous();
  const kernels::Problem problem = make_problem(p, gamma, c);
  at::Tensor values = at::empty({p.batch}, Dc.options());
  at::Tensor state = new_state(p, problem, compute);
  if (p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      if (compute == at::kDouble)
        kernels::cost_forward<double>(problem, Dc.data_ptr<double>(), values.data_ptr<double>(), state.data_ptr(),
                                      stream);
      else
        kernels::cost_forward<float>(problem, Dc.data_ptr<float>(), values.data_ptr<float>(), state.data_ptr(),
                                     stream);
    });
  }
  return {unbatch(values, p), state};
}

at::Tensor cost_backward_cuda(const at::Tensor& dvalues, const at::Tensor& D, const at::Tensor& state, double gamma,
                              int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                              const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_cost(D, gamma, c, x_lengths, y_lengths, Values::skip);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(D.scalar_type());
  const kernels::Problem problem = make_problem(p, gamma, c);
  check_state(state, p, problem, compute);
  const at::Tensor dv = check_dvalues(dvalues, p, compute);
  at::Tensor E = at::empty({p.batch, p.n, p.m}, dv.options());
  if (p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      if (compute == at::kDouble)
        kernels::cost_backward<double>(problem, dv.data_ptr<double>(), E.data_ptr<double>(), state.data_ptr(),
                                       stream, dv.stride(0));
      else
        kernels::cost_backward<float>(problem, dv.data_ptr<float>(), E.data_ptr<float>(), state.data_ptr(), stream,
                                      dv.stride(0));
    });
  }
  return unbatch(E.to(D.scalar_type()), p);
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_forward_cuda(const at::Tensor& x, const at::Tensor& y, double gamma,
                                                            int64_t bandwidth,
                                                            const c10::optional<at::Tensor>& x_lengths,
                                                            const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_sqeuclidean(x, y, gamma, c, x_lengths, y_lengths, Values::check);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const at::Tensor xc = as_read(p.a), yc = as_read(p.b);
  const kernels::Problem problem = make_problem(p, gamma, c);
  at::Tensor values = at::empty({p.batch}, xc.options().dtype(compute));
  at::Tensor state = new_state(p, problem, compute);
  if (p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_input(xc.scalar_type(), [&](auto in) {
        using In = typename decltype(in)::type;
        using T = typename decltype(in)::compute;
        kernels::sqeuclidean_forward<T>(problem, elements<In>(xc), elements<In>(yc), values.data_ptr<T>(),
                                        state.data_ptr(), stream);
      });
    });
  }
  return {unbatch(values, p), state};
}

std::tuple<at::Tensor, at::Tensor> sqeuclidean_backward_cuda(const at::Tensor& dvalues, const at::Tensor& x,
                                                             const at::Tensor& y, const at::Tensor& state,
                                                             double gamma, int64_t bandwidth,
                                                             const c10::optional<at::Tensor>& x_lengths,
                                                             const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const Pair p = check_sqeuclidean(x, y, gamma, c, x_lengths, y_lengths, Values::skip);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const kernels::Problem problem = make_problem(p, gamma, c);
  check_state(state, p, problem, compute);
  const at::Tensor dv = check_dvalues(dvalues, p, compute);
  const at::Tensor xc = as_read(p.a), yc = as_read(p.b);
  at::Tensor gx = at::empty_like(xc), gy = at::empty_like(yc);
  if (p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_input(xc.scalar_type(), [&](auto in) {
        using In = typename decltype(in)::type;
        using T = typename decltype(in)::compute;
        kernels::sqeuclidean_backward<T>(problem, elements<In>(xc), elements<In>(yc), dv.data_ptr<T>(),
                                         elements<In>(gx), elements<In>(gy), state.data_ptr(), stream, dv.stride(0));
      });
    });
  }
  return {unbatch(gx.to(x.scalar_type()), p), unbatch(gy.to(y.scalar_type()), p)};
}

// The values-only kernels' workspace (the border ring, no state) on the device of `like`.
at::Tensor values_ring(const kernels::Problem& problem, at::ScalarType compute, const at::Tensor& like) {
  const std::size_t bytes = compute == at::kDouble ? kernels::values_workspace_bytes<double>(problem)
                                                   : kernels::values_workspace_bytes<float>(problem);
  return at::empty({static_cast<int64_t>(bytes)}, like.options().dtype(at::kByte));
}

// The fused mode of a named cost other than sqeuclidean (the kernels' Cost): x and y in their
// compute dtype (the kernels read these costs' inputs as T), the state as for sqeuclidean_forward.
struct NamedProblem {
  kernels::Cost cost;
  Pair p;
  at::ScalarType compute;
  at::Tensor xc, yc;  // x and y in the compute dtype, contiguous
  kernels::Problem problem;
};

NamedProblem named_problem(const at::Tensor& x, const at::Tensor& y, c10::string_view dist, double gamma,
                           const Constraint& constraint, const c10::optional<at::Tensor>& x_lengths,
                           const c10::optional<at::Tensor>& y_lengths, Values values) {
  const kernels::Cost cost = kernels::cost_named(canonical_dist(dist));
  const Pair p = check_sqeuclidean(x, y, gamma, constraint, x_lengths, y_lengths, values);
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  return {cost, p, compute, p.a.to(compute).contiguous(), p.b.to(compute).contiguous(),
          make_problem(p, gamma, constraint)};
}

// Calls f(T{}) with the kernels' element type of a compute dtype (float or double).
template <typename F>
void with_compute(at::ScalarType compute, F&& f) {
  if (compute == at::kDouble) return f(double{});
  return f(float{});
}

std::tuple<at::Tensor, at::Tensor> fused_forward_cuda(const at::Tensor& x, const at::Tensor& y, c10::string_view dist,
                                                      double gamma, int64_t bandwidth,
                                                      const c10::optional<at::Tensor>& x_lengths,
                                                      const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const c10::cuda::CUDAGuard device_guard(x.device());
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const NamedProblem np = named_problem(x, y, dist, gamma, c, x_lengths, y_lengths, Values::check);
  at::Tensor values = at::empty({np.p.batch}, np.xc.options());
  at::Tensor state = new_state(np.p, np.problem, np.compute);
  if (np.p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_compute(np.compute, [&](auto t) {
        using T = decltype(t);
        kernels::fused_forward<T>(np.problem, np.cost, np.xc.data_ptr<T>(), np.yc.data_ptr<T>(), values.data_ptr<T>(),
                                  state.data_ptr(), stream);
      });
    });
  }
  return {unbatch(values, np.p), state};
}

// Values alone: the values-only kernels, whose workspace holds no state.
at::Tensor fused_values_cuda(const at::Tensor& x, const at::Tensor& y, c10::string_view dist, double gamma,
                             int64_t bandwidth, const c10::optional<at::Tensor>& x_lengths,
                             const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const c10::cuda::CUDAGuard device_guard(x.device());
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const NamedProblem np = named_problem(x, y, dist, gamma, c, x_lengths, y_lengths, Values::check);
  at::Tensor values = at::empty({np.p.batch}, np.xc.options());
  if (np.p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      const at::Tensor ring = values_ring(np.problem, np.compute, np.xc);
      with_compute(np.compute, [&](auto t) {
        using T = decltype(t);
        kernels::fused_values<T>(np.problem, np.cost, np.xc.data_ptr<T>(), np.yc.data_ptr<T>(), values.data_ptr<T>(),
                                 ring.data_ptr(), stream);
      });
    });
  }
  return unbatch(values, np.p);
}

std::tuple<at::Tensor, at::Tensor> fused_backward_cuda(const at::Tensor& dvalues, const at::Tensor& x,
                                                       const at::Tensor& y, c10::string_view dist,
                                                       const at::Tensor& state, double gamma, int64_t bandwidth,
                                                       const c10::optional<at::Tensor>& x_lengths,
                                                       const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  at::AutoDispatchBelowADInplaceOrView below_autograd;
  const c10::cuda::CUDAGuard device_guard(x.device());
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const NamedProblem np = named_problem(x, y, dist, gamma, c, x_lengths, y_lengths, Values::skip);
  check_state(state, np.p, np.problem, np.compute);
  const at::Tensor dv = check_dvalues(dvalues, np.p, np.compute);
  at::Tensor gx = at::empty_like(np.xc), gy = at::empty_like(np.yc);
  if (np.p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_compute(np.compute, [&](auto t) {
        using T = decltype(t);
        kernels::fused_backward<T>(np.problem, np.cost, np.xc.data_ptr<T>(), np.yc.data_ptr<T>(), dv.data_ptr<T>(),
                                   gx.data_ptr<T>(), gy.data_ptr<T>(), state.data_ptr(), stream, dv.stride(0));
      });
    });
  }
  return {unbatch(gx.to(x.scalar_type()), np.p), unbatch(gy.to(y.scalar_type()), np.p)};
}

// Values alone (no gradient wanted): the values-only kernels, whose workspace holds no state.
at::Tensor soft_dtw_cost_cuda(const at::Tensor& D, double gamma, int64_t bandwidth,
                              const c10::optional<at::Tensor>& x_lengths, const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_cost(D, gamma, c, x_lengths, y_lengths, Values::check);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(D.scalar_type());
  const at::Tensor Dc = p.a.to(compute).contiguous();
  const kernels::Problem problem = make_problem(p, gamma, c);
  at::Tensor values = at::empty({p.batch}, Dc.options());
  if (p.batch > 0) {
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      const at::Tensor ring = values_ring(problem, compute, Dc);
      if (compute == at::kDouble)
        kernels::cost_values<double>(problem, Dc.data_ptr<double>(), values.data_ptr<double>(), ring.data_ptr(), stream);
      else
        kernels::cost_values<float>(problem, Dc.data_ptr<float>(), values.data_ptr<float>(), ring.data_ptr(), stream);
    });
  }
  return unbatch(values, p);
}

// x (B, N, D) and y (B, M, D) as given, or the pairs (X[x_index[p]], Y[y_index[p]]) of two sets.
at::Tensor sqeuclidean_values(const at::Tensor& x, const at::Tensor& y, kernels::Problem problem,
                              const at::Tensor& x_index, const at::Tensor& y_index) {
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const at::Tensor xc = as_read(x), yc = as_read(y);
  at::Tensor values = at::empty({problem.batch}, xc.options().dtype(compute));
  if (problem.batch == 0) return values;
  problem.x_index = x_index.defined() ? x_index.data_ptr<int64_t>() : nullptr;
  problem.y_index = y_index.defined() ? y_index.data_ptr<int64_t>() : nullptr;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  run([&] {
    const at::Tensor ring = values_ring(problem, compute, xc);
    with_input(xc.scalar_type(), [&](auto in) {
      using In = typename decltype(in)::type;
      using T = typename decltype(in)::compute;
      kernels::sqeuclidean_values<T>(problem, elements<In>(xc), elements<In>(yc), values.data_ptr<T>(), ring.data_ptr(),
                                     stream);
    });
  });
  return values;
}

at::Tensor soft_dtw_sqeuclidean_cuda(const at::Tensor& x, const at::Tensor& y, double gamma, int64_t bandwidth,
                                     const c10::optional<at::Tensor>& x_lengths,
                                     const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const Pair p = check_sqeuclidean(x, y, gamma, c, x_lengths, y_lengths, Values::check);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  return unbatch(sqeuclidean_values(p.a, p.b, make_problem(p, gamma, c), {}, {}), p);
}

// Indices on the device are clamped into their sets (reading them would sync), so a bad one
// gives a wrong pair, never an access out of bounds; the CPU operator names it.
at::Tensor pairwise_soft_dtw_sqeuclidean_cuda(const at::Tensor& X, const at::Tensor& Y, const at::Tensor& x_index,
                                              const at::Tensor& y_index, double gamma, int64_t bandwidth,
                                              const c10::optional<at::Tensor>& x_lengths,
                                              const c10::optional<at::Tensor>& y_lengths, int64_t sakoe_chiba_radius,
    double itakura_max_slope) {
  const Constraint c = operator_constraint(bandwidth, sakoe_chiba_radius, itakura_max_slope);
  const PairSets s = check_pair_sets(X, Y, x_index, y_index, gamma, c, x_lengths, y_lengths);
  const c10::cuda::CUDAGuard device_guard(X.device());
  const kernels::Problem problem =
      make_problem(s.pairs, X.size(1), Y.size(1), X.size(2), gamma, c, s.x_len, s.y_len);
  return sqeuclidean_values(X, Y, problem, s.x_index.clamp(0, X.size(0) - 1), s.y_index.clamp(0, Y.size(0) - 1));
}

}  // namespace

int64_t cuda_state_bytes(int64_t batch, int64_t n, int64_t m, int64_t dim, int64_t bandwidth, bool is_double,
                         bool values_only) {
  const kernels::Problem problem = make_problem(batch, n, m, dim, 1.0, operator_constraint(bandwidth, -1, 0.0));
  if (!values_only) return workspace_bytes(problem, is_double ? at::kDouble : at::kFloat);
  return static_cast<int64_t>(is_double ? kernels::values_workspace_bytes<double>(problem)
                                        : kernels::values_workspace_bytes<float>(problem));
}

// The kernel behind sdtw::sqeuclidean_cost: x (B, N, D) or (N, D), y likewise, one device; the
// same argument checks and compute dtype as the other operators.
at::Tensor sqeuclidean_cost_cuda(const at::Tensor& x, const at::Tensor& y) {
  const Pair p = check_xy(x, y);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const at::Tensor xc = as_read(p.a), yc = as_read(p.b);
  at::Tensor D = at::empty({p.batch, p.n, p.m}, xc.options().dtype(compute));
  if (p.batch > 0) {
    const kernels::Problem problem = make_problem(p, 1.0, Constraint{});
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_input(xc.scalar_type(), [&](auto in) {
        using In = typename decltype(in)::type;
        using T = typename decltype(in)::compute;
        kernels::sqeuclidean_cost<T>(problem, elements<In>(xc), elements<In>(yc), D.data_ptr<T>(), stream);
      });
    });
  }
  return unbatch(D, p);
}

namespace {

// sdtw::sqeuclidean_cost_backward: dL/dx = 2 (rowsum(G) x - G y), dL/dy = 2 (colsum(G) y - G^T x)
// in one kernel launch.
std::tuple<at::Tensor, at::Tensor> sqeuclidean_cost_backward_cuda(const at::Tensor& G, const at::Tensor& x,
                                                                   const at::Tensor& y) {
  const Pair p = check_xy(x, y);
  const c10::cuda::CUDAGuard device_guard(p.a.device());
  const at::ScalarType compute = compute_dtype(x.scalar_type());
  const at::Tensor xc = as_read(p.a), yc = as_read(p.b);
  const at::Tensor Gc = check_cost_gradient(G, p).to(compute).contiguous();
  at::Tensor gx = at::empty_like(xc), gy = at::empty_like(yc);
  if (p.batch > 0) {
    const kernels::Problem problem = make_problem(p, 1.0, Constraint{});
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    run([&] {
      with_input(xc.scalar_type(), [&](auto in) {
        using In = typename decltype(in)::type;
        using T = typename decltype(in)::compute;
        kernels::sqeuclidean_cost_backward<T>(problem, elements<In>(xc), elements<In>(yc), Gc.data_ptr<T>(),
                                              elements<In>(gx), elements<In>(gy), stream);
      });
    });
  }
  return {unbatch(gx.to(x.scalar_type()), p), unbatch(gy.to(y.scalar_type()), p)};
}

// D = ||x_i - y_j||^2 as one autograd node: the forward goes through the dispatcher (so fake
// tensors trace it), the backward one kernel (or torch ops under create_graph=True).
struct SqEuclideanCost : torch::autograd::Function<SqEuclideanCost> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& y) {
    ctx->save_for_backward({x, y});
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("sdtw::sqeuclidean_cost", "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
    return op.call(x, y);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &y = saved[1], &G = grads[0];
    if (!at::GradMode::is_enabled()) {  // through the dispatcher, so that fake tensors trace it
      static const auto op = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("sdtw::sqeuclidean_cost_backward", "")
                                 .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                           const at::Tensor&)>();
      auto [gx, gy] = op.call(G, x, y);
      return {gx, gy};
    }
    auto [gx, gy] = sqeuclidean_cost_backward_composite(G, x, y);  // create_graph=True: differentiable
    return {gx, gy};
  }
};

}  // namespace

at::Tensor sqeuclidean_cost_cuda_autograd(const at::Tensor& x, const at::Tensor& y) {
  return SqEuclideanCost::apply(x, y);
}

}  // namespace sdtw::ops::detail

TORCH_LIBRARY_IMPL(sdtw, CUDA, m) {
  m.impl("sqeuclidean_cost", TORCH_FN(sdtw::ops::detail::sqeuclidean_cost_cuda));
  m.impl("sqeuclidean_cost_backward", TORCH_FN(sdtw::ops::detail::sqeuclidean_cost_backward_cuda));
  m.impl("cost_forward", TORCH_FN(sdtw::ops::detail::cost_forward_cuda));
  m.impl("cost_backward", TORCH_FN(sdtw::ops::detail::cost_backward_cuda));
  m.impl("sqeuclidean_forward", TORCH_FN(sdtw::ops::detail::sqeuclidean_forward_cuda));
  m.impl("sqeuclidean_backward", TORCH_FN(sdtw::ops::detail::sqeuclidean_backward_cuda));
  m.impl("fused_forward", TORCH_FN(sdtw::ops::detail::fused_forward_cuda));
  m.impl("fused_backward", TORCH_FN(sdtw::ops::detail::fused_backward_cuda));
  m.impl("fused_values", TORCH_FN(sdtw::ops::detail::fused_values_cuda));
  m.impl("soft_dtw_cost", TORCH_FN(sdtw::ops::detail::soft_dtw_cost_cuda));
  m.impl("soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::soft_dtw_sqeuclidean_cuda));
  m.impl("pairwise_soft_dtw_sqeuclidean", TORCH_FN(sdtw::ops::detail::pairwise_soft_dtw_sqeuclidean_cuda));
}

// The checkpointed operators: they share this file's helpers.
#include "ops_checkpoint_cuda.inc"
