// The cost tensor's entry points, the workspace's sizes and the cost names (sdtw/kernels/soft_dtw.hpp).
// The squared Euclidean's are in sqeuclidean_*.cu, the named costs' in named_*.cu, the checkpointed
// mode's in checkpoint.cu: one file per family and dtype, so that their kernels compile in parallel.
#include <string>
#include <utility>

#include "launch.cuh"
#include "sdtw/kernels/costs.cuh"
#include "sdtw/kernels/soft_dtw.hpp"

namespace sdtw::kernels {
namespace {

using detail::backward_args;
using detail::check;
using detail::launch_backward;
using detail::launch_forward;
using detail::layout_for;
using detail::reject_pair_indices;
using detail::require;

}  // namespace

template <typename T>
std::size_t workspace_bytes(const Problem& problem) {
  return layout_for<T>(problem).total;
}

template <typename T>
std::size_t values_workspace_bytes(const Problem& problem) {
  return layout_for<T>(problem, false).total;
}

template <typename T>
void cost_forward(const Problem& p, const T* D, T* values, void* workspace, cudaStream_t stream) {
  reject_pair_indices(p);
  require(D, "D");
  launch_forward(p, PrecomputedCost<T>{D, p.n, p.m}, values, workspace, stream);
}

template <typename T>
void cost_values(const Problem& p, const T* D, T* values, void* workspace, cudaStream_t stream) {
  reject_pair_indices(p);
  require(D, "D");
  launch_forward<T, PrecomputedCost<T>, false>(p, PrecomputedCost<T>{D, p.n, p.m}, values, workspace, stream);
}

template <typename T>
void cost_backward(const Problem& p, const T* dvalues, T* E, void* workspace, cudaStream_t stream,
                   int64_t dvalues_stride) {
  require(E, "E");
  const detail::BackwardArgs<T> args = backward_args(p, layout_for<T>(p), dvalues, dvalues_stride, E, workspace);
  if (p.x_len || p.y_len)
    check(cudaMemsetAsync(E, 0, sizeof(T) * p.batch * p.n * p.m, stream), "cudaMemsetAsync(E)");
  launch_backward(args, stream);
}

Cost cost_named(const std::string& name) {
  constexpr std::pair<const char*, Cost> kNames[] = {{"sqeuclidean", Cost::sqeuclidean}, {"l1", Cost::l1},
                                                     {"euclidean", Cost::euclidean},     {"cosine", Cost::cosine},
                                                     {"negative_dot", Cost::negative_dot}};
  for (const auto& [known, cost] : kNames)
    if (name == known) return cost;
  throw std::invalid_argument("sdtw::kernels: cost must be 'sqeuclidean', 'l1', 'euclidean', 'cosine' or "
                              "'negative_dot' (got '" + name + "')");
}

#define SDTW_INSTANTIATE(T)                                                                                   \
  template std::size_t workspace_bytes<T>(const Problem&);                                                    \
  template std::size_t values_workspace_bytes<T>(const Problem&);                                             \
  template void cost_values<T>(const Problem&, const T*, T*, void*, cudaStream_t);                            \
  template void cost_forward<T>(const Problem&, const T*, T*, void*, cudaStream_t);                           \
  template void cost_backward<T>(const Problem&, const T*, T*, void*, cudaStream_t, int64_t);
SDTW_INSTANTIATE(float)
SDTW_INSTANTIATE(double)
#undef SDTW_INSTANTIATE

}  // namespace sdtw::kernels
