// Regenerates the golden fixtures of reference/tests/golden/ (see its README.md):
//   sdtw_make_golden [output directory, default: the source tree's reference/tests/golden]
#include <filesystem>
#include <fstream>
#include <iostream>

#include "golden_format.hpp"
#include "random_inputs.hpp"

namespace {

using sdtw::test::GoldenCase;
using sdtw::test::random_matrix;

struct Spec {
  const char* name;
  const char* mode;
  long n, m, dim;  // dim unused for "cost"
  double gamma;
  std::optional<long> bandwidth;
  std::uint64_t seed;
  double scale;  // inputs uniform in [-scale, scale) (costs in [0, 2 scale)); small where gamma is
};

// Small scales for gamma = 1e-3 keep |R| / gamma moderate, so the comparison tolerance stays 1e-12.
const Spec kSpecs[] = {
    {"cost_1x1", "cost", 1, 1, 0, 1.0, std::nullopt, 1, 1.0},
    {"cost_1x9_row", "cost", 1, 9, 0, 0.1, std::nullopt, 2, 1.0},
    {"cost_6x1_column", "cost", 6, 1, 0, 10.0, std::nullopt, 3, 1.0},
    {"cost_5x8_gamma1e-3", "cost", 5, 8, 0, 1e-3, std::nullopt, 4, 0.01},
    {"cost_12x9_band4", "cost", 12, 9, 0, 0.5, 4, 5, 1.0},
    {"sqeuclidean_8x8", "sqeuclidean", 8, 8, 3, 1.0, std::nullopt, 6, 1.0},
    {"sqeuclidean_10x6_gamma1e-2", "sqeuclidean", 10, 6, 2, 1e-2, std::nullopt, 7, 0.5},
    {"sqeuclidean_7x11_band5", "sqeuclidean", 7, 11, 4, 0.1, 5, 8, 1.0},
    {"sqeuclidean_1x5", "sqeuclidean", 1, 5, 2, 2.0, std::nullopt, 9, 1.0},
    {"sqeuclidean_30x27_band6", "sqeuclidean", 30, 27, 3, 0.05, 6, 10, 1.0},
    {"divergence_9x6", "divergence", 9, 6, 2, 0.5, std::nullopt, 11, 1.0},
    {"divergence_5x5_band1_gamma1e-3", "divergence", 5, 5, 1, 1e-3, 1, 12, 0.05},
};

GoldenCase make_case(const Spec& s) {
  GoldenCase c;
  c.name = s.name;
  c.mode = s.mode;
  c.gamma = s.gamma;
  c.bandwidth = s.bandwidth;
  c.seed = s.seed;
  if (c.mode == "cost") {
    c.D = random_matrix(s.n, s.m, s.seed, 0.0, 2 * s.scale);
  } else {
    c.x = random_matrix(s.n, s.dim, 2 * s.seed, -s.scale, s.scale);
    c.y = random_matrix(s.m, s.dim, 2 * s.seed + 1, -s.scale, s.scale);
  }
  sdtw::test::compute_outputs(c);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? argv[1] : SDTW_GOLDEN_DIR;
  std::filesystem::create_directories(dir);
  for (const Spec& s : kSpecs) {
    const std::filesystem::path file = dir / (std::string(s.name) + ".txt");
    std::ofstream out(file);
    sdtw::test::write_golden(out, make_case(s));
    if (!out) {
      std::cerr << "sdtw_make_golden: cannot write " << file << "\n";
      return 1;
    }
    std::cout << "wrote " << file.string() << "\n";
  }
  return 0;
}
