#pragma once
// Reproducible inputs of a point, the one seed scheme of every tool (sdtw_results.inputs draws the
// same): standard normal x (B,N,D) then y (B,M,D) drawn in float64 from one CPU generator seeded with
// base ^ FNV-1a("B|N|M|D|"), independent of implementation and device, cast to the point's dtype,
// kept on the host.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "core/point.hpp"

namespace sdtw::bench {

struct Inputs {
  at::Tensor x;  // CPU, point dtype
  at::Tensor y;
  uint64_t seed = 0;
};

uint64_t point_seed(const Point& p, uint64_t base_seed);
// "B|N|M|D|": what a point's inputs depend on.
std::string input_key(const Point& p);
Inputs make_inputs(const Point& p, uint64_t seed);
at::ScalarType scalar_type(const Point& p);

}  // namespace sdtw::bench
