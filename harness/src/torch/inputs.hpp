#pragma once
// Reproducible inputs of a point: standard normal x (B,N,D) and y (B,M,D) drawn in float64 from
// seed ^ FNV-1a(point key), rounded to the point's dtype, kept on the host.
#include <ATen/ATen.h>

#include <cstdint>

#include "core/point.hpp"

namespace sdtw::bench {

struct Inputs {
  at::Tensor x;  // CPU, point dtype
  at::Tensor y;
  uint64_t seed = 0;
};

uint64_t point_seed(const Point& p, uint64_t base_seed);
Inputs make_inputs(const Point& p, uint64_t seed);
at::ScalarType scalar_type(const Point& p);

}  // namespace sdtw::bench
