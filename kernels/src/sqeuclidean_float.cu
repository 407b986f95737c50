// The squared Euclidean entry points in float32 compute, float32 / bfloat16 / half inputs.
#include "sqeuclidean.cuh"

namespace sdtw::kernels {

SDTW_INSTANTIATE_SQEUCLIDEAN(float, float)
SDTW_INSTANTIATE_SQEUCLIDEAN(float, __nv_bfloat16)
SDTW_INSTANTIATE_SQEUCLIDEAN(float, __half)

}  // namespace sdtw::kernels
