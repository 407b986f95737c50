// The named costs' entry points in float32.
#include "named_costs.cuh"

namespace sdtw::kernels {

template void fused_values<float>(const Problem&, Cost, const float*, const float*, float*, void*, cudaStream_t);
template void fused_forward<float>(const Problem&, Cost, const float*, const float*, float*, void*, cudaStream_t);
template void fused_backward<float>(const Problem&, Cost, const float*, const float*, const float*, float*,
                                    float*, void*, cudaStream_t, int64_t);
template void fused_cost<float>(const Problem&, Cost, const float*, const float*, float*, cudaStream_t);

}  // namespace sdtw::kernels
