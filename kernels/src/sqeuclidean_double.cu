// The squared Euclidean entry points in float64.
#include "sqeuclidean.cuh"

namespace sdtw::kernels {

SDTW_INSTANTIATE_SQEUCLIDEAN(double, double)

}  // namespace sdtw::kernels
