// The named costs' values-only forward in float64 (the other entry points: named_costs_double.cu).
#include "named_costs.cuh"

namespace sdtw::kernels {

template void fused_values<double>(const Problem&, Cost, const double*, const double*, double*, void*, cudaStream_t);

}  // namespace sdtw::kernels
