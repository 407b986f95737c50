// The named costs' entry points in float64 but the values-only forward (named_values_double.cu),
// which alone compiles as long as the others.
#include "named_costs.cuh"

namespace sdtw::kernels {

template void fused_forward<double>(const Problem&, Cost, const double*, const double*, double*, void*, cudaStream_t);
template void fused_backward<double>(const Problem&, Cost, const double*, const double*, const double*, double*,
                                     double*, void*, cudaStream_t, int64_t);
template void fused_cost<double>(const Problem&, Cost, const double*, const double*, double*, cudaStream_t);

}  // namespace sdtw::kernels
