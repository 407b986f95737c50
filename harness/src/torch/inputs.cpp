#include "torch/inputs.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cstdlib>

#include "core/metadata.hpp"

namespace sdtw::bench {

std::string input_key(const Point& p) {
  return std::to_string(p.batch) + "|" + std::to_string(p.n) + "|" + std::to_string(p.m) + "|" +
         std::to_string(p.dim) + "|";
}

uint64_t point_seed(const Point& p, uint64_t base) {
  return base ^ std::strtoull(fnv1a64_hex(input_key(p)).c_str(), nullptr, 16);
}

at::ScalarType scalar_type(const Point& p) { return p.dtype == "float64" ? at::kDouble : at::kFloat; }

Inputs make_inputs(const Point& p, uint64_t seed) {
  Inputs in;
  in.seed = seed;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto opt = at::TensorOptions().dtype(at::kDouble);
  in.x = at::randn({p.batch, p.n, p.dim}, gen, opt).to(scalar_type(p));
  in.y = at::randn({p.batch, p.m, p.dim}, gen, opt).to(scalar_type(p));
  return in;
}

}  // namespace sdtw::bench
