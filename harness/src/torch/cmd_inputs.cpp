// `sdtw-bench inputs`: writes the inputs a sweep draws at a point (the one seed scheme), so that
// another tool can check it draws the same ones.
#include <cstdio>

#include "core/series_io.hpp"
#include "torch/commands.hpp"
#include "torch/inputs.hpp"

namespace sdtw::bench {

namespace {
// The (B, L, D) tensor as one series of B x L rows (batch-major) in float64.
Series stacked(const at::Tensor& t) {
  const auto c = t.to(at::kDouble).contiguous();
  Series s;
  s.rows = c.size(0) * c.size(1);
  s.cols = c.size(2);
  s.data.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  return s;
}
}  // namespace

void register_inputs(CLI::App& app) {
  auto* cmd = app.add_subcommand("inputs", "Write the inputs x (B x N rows) and y (B x M rows) a sweep draws at a "
                                           "point, as CSV of D columns, and print the point's seed");
  struct Args {
    int64_t batch = 1, n = 1, m = 1, dim = 1;
    uint64_t seed = 0;
    std::string dtype = "float64", x_out, y_out;
  };
  static Args a;
  cmd->add_option("--B", a.batch, "Batch size B >= 1")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--N", a.n, "Length N of x >= 1")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--M", a.m, "Length M of y >= 1")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--D", a.dim, "Features D >= 1")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", a.seed, "The sweep's base seed (settings.seed; default 0)");
  cmd->add_option("--dtype", a.dtype, "float64 (default) or float32: the cast a point of that dtype measures")
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_option("--x-out", a.x_out, "CSV file for x")->required();
  cmd->add_option("--y-out", a.y_out, "CSV file for y")->required();
  cmd->callback([] {
    Point p;
    p.batch = a.batch;
    p.n = a.n;
    p.m = a.m;
    p.dim = a.dim;
    p.dtype = a.dtype;
    const uint64_t seed = point_seed(p, a.seed);
    const Inputs in = make_inputs(p, seed);
    write_series_csv(a.x_out, stacked(in.x));
    write_series_csv(a.y_out, stacked(in.y));
    std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  });
}

}  // namespace sdtw::bench
