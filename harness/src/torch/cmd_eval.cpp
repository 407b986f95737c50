// `sdtw-bench eval X Y`: the soft-DTW value (and gradient) of two series from CSV or .npy files.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/point.hpp"
#include "core/series_io.hpp"
#include "torch/commands.hpp"
#include "torch/implementation.hpp"

namespace sdtw::bench {

namespace {

at::Tensor to_tensor(const Series& s) {
  return at::from_blob(const_cast<double*>(s.data.data()), {1, s.rows, s.cols}, at::kDouble).clone();
}

Series from_tensor(const at::Tensor& t) {
  const auto c = t.detach().to(at::kCPU, at::kDouble).contiguous();
  Series s;
  s.rows = c.size(1);
  s.cols = c.size(2);
  s.data.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  return s;
}

// The library's keywords of sdtw::nn::SoftDtwOptions, spelled as there; their combinations (a radius
// with itakura, a constraint with --bandwidth or --subsequence, ...) are the library's to refuse.
void add_problem_options(CLI::App* cmd, ProblemOptions& o) {
  cmd->add_option("--dist", o.dist, "Cost between time steps (default sqeuclidean)")
      ->check(CLI::IsMember({"sqeuclidean", "euclidean", "cosine", "l1", "negative_dot"}));
  cmd->add_option("--global-constraint", o.global_constraint, "tslearn's global constraint (default none)")
      ->check(CLI::IsMember({"sakoe_chiba", "itakura"}));
  cmd->add_option("--sakoe-chiba-radius", o.sakoe_chiba_radius,
                  "Radius of the sakoe_chiba constraint, tslearn's semantics for N != M (default 1; alone implies "
                  "--global-constraint sakoe_chiba)")
      ->check(integer_at_least(0));
  cmd->add_option("--itakura-max-slope", o.itakura_max_slope,
                  "Slope of the itakura parallelogram (default 2; alone implies --global-constraint itakura)")
      ->check(finite_positive());
  cmd->add_option("--warp", o.warp, "Penalty added to every vertical and horizontal move (default 0)")
      ->check(finite_number());
  cmd->add_flag("--subsequence", o.subsequence, "Subsequence soft-DTW: x against any stretch of y");
}

// Checked before any work: an output path whose folder is missing fails only after the computation.
CLI::Validator in_existing_folder() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const auto folder = std::filesystem::path(path).parent_path();
        if (!folder.empty() && !std::filesystem::is_directory(folder))
          return "folder " + folder.string() + " does not exist (got " + path + ")";
        // The CSV replaces the file whole (write, then rename): a folder or a device is not one.
        if (std::filesystem::exists(path) && !std::filesystem::is_regular_file(path))
          return "must name a regular file, and " + path + " is not one";
        return "";
      },
      "FILE");
}

}  // namespace

void register_eval(CLI::App& app) {
  auto* cmd = app.add_subcommand("eval", "Soft-DTW value (and gradient with --grad) of two series read from CSV "
                                         "(one time step per line) or .npy (N or N x D) files");
  struct Args {
    std::string x, y, impl = "auto", device = "cpu", dtype = "float64", grad_x_out, grad_y_out;
    double gamma = 1.0, band = -1;
    bool normalize = false, grad = false;
    ProblemOptions problem;
  };
  static Args a;
  cmd->add_option("x", a.x, "First series (.csv or .npy)")->required()->check(CLI::ExistingFile);
  cmd->add_option("y", a.y, "Second series (.csv or .npy)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--gamma", a.gamma, "Smoothing gamma >= 0, 0 for exact DTW (default 1)")->check(finite_non_negative());
  add_bandwidth_option(cmd, a.band);
  cmd->add_flag("--normalize", a.normalize, "Soft-DTW divergence sdtw(x,y) - (sdtw(x,x) + sdtw(y,y)) / 2");
  add_problem_options(cmd, a.problem);
  cmd->add_option("--device", a.device, "cpu or cuda (default cpu)")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--dtype", a.dtype, "float64 (default) or float32")->check(CLI::IsMember({"float32", "float64"}));
  std::vector<std::string> impls = known_implementations();
  impls.insert(impls.begin(), "auto");
  cmd->add_option("--impl", a.impl, "Implementation (default: ours on the device, else reference_cpu)")
      ->check(CLI::IsMember(impls));
  auto* grad = cmd->add_flag("--grad", a.grad, "Also compute the gradient with respect to x and y");
  cmd->add_option("--grad-x-out", a.grad_x_out, "Write d sdtw / d x as CSV here (default: print)")
      ->needs(grad)
      ->check(in_existing_folder());
  cmd->add_option("--grad-y-out", a.grad_y_out, "Write d sdtw / d y as CSV here (default: print)")
      ->needs(grad)
      ->check(in_existing_folder());
  cmd->callback([] {
    const Series xs = read_series(a.x), ys = read_series(a.y);
    if (xs.cols != ys.cols)
      throw std::runtime_error("x (" + a.x + ") has " + std::to_string(xs.cols) + " features per time step, y (" + a.y +
                               ") has " + std::to_string(ys.cols) + ": they must be the same");
    Point p;
    p.device = a.device;
    p.dtype = a.dtype;
    p.batch = 1;
    p.n = xs.rows;
    p.m = ys.rows;
    p.dim = xs.cols;
    p.gamma = a.gamma;
    p.bandwidth = band_of(a.band);
    p.normalize = a.normalize;
    p.problem = a.problem;
    p.impl = a.impl;
    if (a.impl == "auto") {
      // The first of the library's that runs the point (ours_unfused: warp or subsequence on CUDA).
      p.impl = "reference_cpu";
      for (const char* ours : {"ours_fused", "ours_unfused", "ours_cpu"}) {
        const auto* o = find_implementation(ours);
        if (o && o->supports(p).ok) {
          p.impl = ours;
          break;
        }
      }
    }
    check_point_runs(p, "the series' lengths or features");
    const Implementation* impl = find_implementation(p.impl);
    const at::Device dev = a.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    const auto st = a.dtype == "float64" ? at::kDouble : at::kFloat;
    at::Tensor x = to_tensor(xs).to(dev, st).requires_grad_(a.grad);
    at::Tensor y = to_tensor(ys).to(dev, st).requires_grad_(a.grad);
    at::Tensor v = impl->forward(x, y, p);
    const std::string set = p.problem.set_options();
    std::printf("impl %s, device %s, %s, N=%ld M=%ld D=%ld gamma=%g%s%s%s\n", p.impl.c_str(), p.device.c_str(),
                p.dtype.c_str(), static_cast<long>(p.n), static_cast<long>(p.m), static_cast<long>(p.dim), p.gamma,
                p.normalize ? " (divergence)" : "", set.empty() ? "" : " ", set.c_str());
    std::printf("sdtw = %.17g\n", v.to(at::kCPU, at::kDouble).item<double>());
    if (a.grad) {
      v.sum().backward();
      for (int k = 0; k < 2; ++k) {
        const Series g = from_tensor(k == 0 ? x.grad() : y.grad());
        const std::string& out = k == 0 ? a.grad_x_out : a.grad_y_out;
        if (!out.empty()) {
          write_series_csv(out, g);
          std::printf("d sdtw / d %s written to %s\n", k == 0 ? "x" : "y", out.c_str());
        } else {
          std::printf("d sdtw / d %s (%ld x %ld):\n", k == 0 ? "x" : "y", g.rows, g.cols);
          for (long r = 0; r < g.rows; ++r) {
            for (long c = 0; c < g.cols; ++c) std::printf("%s%.9g", c ? "," : "", g.data[static_cast<size_t>(r * g.cols + c)]);
            std::printf("\n");
          }
        }
      }
    }
  });
}

}  // namespace sdtw::bench
