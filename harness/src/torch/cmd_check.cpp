// `sdtw-bench check`: property tests and gradient checks on every built implementation, with fresh
// random inputs (the seed is printed; --seed replays), a summary table, and the gradient error
// against the float64 reference over gamma and length, written as CSV for the paper.
#include <sdtw/reference/hard_dtw.hpp>
#include <sdtw/reference/sqeuclidean.hpp>

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include "core/lock.hpp"
#include "core/csv.hpp"
#include "core/text_table.hpp"
#include "torch/commands.hpp"
#include "torch/device_info.hpp"
#include "torch/implementation.hpp"
#include "torch/inputs.hpp"
#include "torch/reference_eval.hpp"
#include "torch/verify.hpp"

namespace sdtw::bench {

namespace {

struct Outcome {
  std::string status;  // PASS, FAIL, SKIP
  std::string detail;
};

struct Eval {
  at::Tensor values, gx, gy;  // CPU
};

at::Device device_of(const Point& p) { return p.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU); }

Eval run(const Implementation& impl, const Point& p, const at::Tensor& x_host, const at::Tensor& y_host) {
  auto x = x_host.to(device_of(p), scalar_type(p), false, true).requires_grad_(true);
  auto y = y_host.to(device_of(p), scalar_type(p), false, true).requires_grad_(true);
  auto v = impl.forward(x, y, p);
  v.sum().backward();
  return {v.detach().to(at::kCPU, at::kDouble), x.grad().to(at::kCPU, at::kDouble), y.grad().to(at::kCPU, at::kDouble)};
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

Point shape(const std::string& impl, const std::string& dev, int64_t b, int64_t n, int64_t m, int64_t d, double g,
            std::optional<int64_t> band = std::nullopt, bool norm = false) {
  Point p;
  p.impl = impl;
  p.device = dev;
  p.batch = b;
  p.n = n;
  p.m = m;
  p.dim = d;
  p.gamma = g;
  p.bandwidth = band;
  p.normalize = norm;
  return p;
}

}  // namespace

void register_check(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check", "Property tests and gradient checks on every built implementation (fresh random inputs, seed printed), "
               "summary table, and gradient error vs gamma and length as CSV");
  struct Args {
    uint64_t seed = 0;
    bool seed_set = false;
    std::vector<std::string> impls;
    std::vector<double> gammas = {1.0, 0.1, 0.01, 0.001};
    std::vector<int64_t> lengths = {128, 512, 1024, 2048};
    int64_t cpu_max_n = 512;
    int64_t batch = 4, dim = 8;
    std::string csv;
    bool quick = false;
  };
  static Args a;
  cmd->add_option("--seed", a.seed, "Base seed (default: from the clock; printed)")->each([](const std::string&) { a.seed_set = true; });
  cmd->add_option("--impl", a.impls, "Only these implementations (repeatable)");
  cmd->add_option("--gammas", a.gammas, "Gammas of the accuracy table (default 1 0.1 0.01 0.001)")
      ->check(finite_positive());
  cmd->add_option("--lengths", a.lengths, "Lengths N = M of the accuracy table (default 128 512 1024 2048)");
  cmd->add_option("--cpu-max-n", a.cpu_max_n, "Longest length run by CPU implementations in the table (default 512)");
  cmd->add_option("--accuracy-csv", a.csv, "Where to write the accuracy table (default results/<gpu-slug>/grad-accuracy.csv)");
  cmd->add_flag("--quick", a.quick, "Accuracy table with gammas 1 0.01 and lengths 64 256 only");
  cmd->callback([] {
    if (!a.seed_set) a.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000007ULL;
    if (a.quick) {
      a.gammas = {1.0, 0.01};
      a.lengths = {64, 256};
    }
    std::printf("sdtw-bench check: seed %llu (replay with --seed %llu)\n", static_cast<unsigned long long>(a.seed),
                static_cast<unsigned long long>(a.seed));
    uint64_t counter = 0;
    auto next_seed = [&] { return a.seed + 7919ULL * ++counter; };

    std::vector<std::pair<const Implementation*, std::string>> targets;
    for (const auto& impl : registry()) {
      if (!a.impls.empty() && std::find(a.impls.begin(), a.impls.end(), impl->name()) == a.impls.end()) continue;
      for (const std::string dev : {"cuda", "cpu"})
        if (impl->supports(shape(impl->name(), dev, 1, 8, 8, 2, 1.0)).ok) targets.emplace_back(impl.get(), dev);
    }
    Table summary;
    summary.header = {"impl", "device", "check", "shape", "result", "detail"};
    size_t failures = 0;
    auto record = [&](const Implementation& impl, const Point& p, const std::string& name, const std::function<Outcome()>& body) {
      Outcome o;
      try {
        const auto sup = impl.supports(p);
        o = sup.ok ? body() : Outcome{"SKIP", sup.reason};
      } catch (const NotSupported& e) {
        o = {"SKIP", e.what()};
      } catch (const std::exception& e) {
        std::string w = e.what();
        o = {"FAIL", "exception: " + w.substr(0, w.find('\n'))};
      }
      if (o.status == "FAIL") ++failures;
      std::string sh = "B=" + std::to_string(p.batch) + " N=" + std::to_string(p.n) + " M=" + std::to_string(p.m) +
                       " D=" + std::to_string(p.dim) + " g=" + format_double(p.gamma) +
                       (p.bandwidth ? " band=" + std::to_string(*p.bandwidth) : "") + (p.normalize ? " norm" : "");
      summary.rows.push_back({impl.name(), p.device, name, sh, o.status, o.detail});
    };

    for (const auto& [impl_ptr, dev] : targets) {
      const Implementation& impl = *impl_ptr;
      const std::string& d = dev;
      // 1. Value and gradient against the float64 reference on awkward shapes.
      for (const Point& p : {shape(impl.name(), d, 3, 17, 23, 5, 1.0), shape(impl.name(), d, 2, 64, 64, 1, 0.1),
                             shape(impl.name(), d, 4, 33, 31, 3, 1.0, 4), shape(impl.name(), d, 2, 20, 25, 4, 1.0, std::nullopt, true),
                             shape(impl.name(), d, 1, 1, 7, 2, 1.0)}) {
        record(impl, p, "matches reference", [&] {
          const auto in = make_inputs(p, next_seed());
          const auto e = run(impl, p, in.x, in.y);
          const auto r = reference_eval(in.x, in.y, p.gamma, p.bandwidth, p.normalize, true);
          const auto tol = impl.tolerance(p);
          const double ve = value_error(e.values, r.values);
          const double ge = std::max(rel_l2_error(e.gx, r.grad_x), rel_l2_error(e.gy, r.grad_y));
          const bool ok = ve <= tol.value_rel && ge <= tol.grad_rel_l2;
          return Outcome{ok ? "PASS" : "FAIL", "value " + fmt("%.2e", ve) + " grad " + fmt("%.2e", ge) + " (tol " +
                                                   fmt("%.0e", tol.value_rel) + "/" + fmt("%.0e", tol.grad_rel_l2) + ")"};
        });
      }
      // 2. Symmetry: sdtw(x, y) = sdtw(y, x) (the cost matrix is transposed).
      const Point ps = shape(impl.name(), d, 3, 24, 19, 3, 1.0);
      record(impl, ps, "symmetry", [&] {
        const auto in = make_inputs(ps, next_seed());
        Point q = ps;
        std::swap(q.n, q.m);
        const double err = value_error(run(impl, q, in.y, in.x).values, run(impl, ps, in.x, in.y).values);
        return Outcome{err <= impl.tolerance(ps).value_rel ? "PASS" : "FAIL", "rel diff " + fmt("%.2e", err)};
      });
      // 3. Batch independence: a pair's value and gradient do not depend on its neighbours.
      const Point pb = shape(impl.name(), d, 5, 30, 26, 4, 0.5);
      record(impl, pb, "batch independence", [&] {
        const auto in = make_inputs(pb, next_seed());
        const auto all = run(impl, pb, in.x, in.y);
        Point one = pb;
        one.batch = 1;
        double err = 0;
        for (int64_t b = 0; b < pb.batch; ++b) {
          const auto e = run(impl, one, in.x.narrow(0, b, 1), in.y.narrow(0, b, 1));
          err = std::max({err, value_error(e.values, all.values.narrow(0, b, 1)), rel_l2_error(e.gx, all.gx.narrow(0, b, 1))});
        }
        return Outcome{err <= impl.tolerance(pb).grad_rel_l2 ? "PASS" : "FAIL", "max rel diff " + fmt("%.2e", err)};
      });
      // 4. Translation invariance of the squared Euclidean cost: sum of all gradients is zero.
      const Point pt = shape(impl.name(), d, 2, 40, 35, 3, 1.0);
      record(impl, pt, "gradients sum to zero", [&] {
        const auto in = make_inputs(pt, next_seed());
        const auto e = run(impl, pt, in.x, in.y);
        const auto total = e.gx.sum({1}) + e.gy.sum({1});
        const double rel = total.abs().max().item<double>() / (e.gx.abs().sum({1}) + e.gy.abs().sum({1})).max().item<double>();
        return Outcome{rel <= 10 * impl.tolerance(pt).grad_rel_l2 ? "PASS" : "FAIL", "relative " + fmt("%.2e", rel)};
      });
      // 5. Soft-min is below the min: sdtw_gamma <= DTW, and tends to it as gamma -> 0.
      const Point ph = shape(impl.name(), d, 1, 32, 32, 2, 0.01);
      record(impl, ph, "below hard DTW", [&] {
        const auto in = make_inputs(ph, next_seed());
        const auto xm = in.x[0].to(at::kDouble).contiguous(), ym = in.y[0].to(at::kDouble).contiguous();
        reference::Matrix X = Eigen::Map<const reference::Matrix>(xm.data_ptr<double>(), ph.n, ph.dim);
        reference::Matrix Y = Eigen::Map<const reference::Matrix>(ym.data_ptr<double>(), ph.m, ph.dim);
        const double hard = reference::hard_dtw(reference::SqEuclideanCost(X, Y).compute()).value;
        const double soft = run(impl, ph, in.x, in.y).values[0].item<double>();
        const double slack = impl.tolerance(ph).value_rel * std::abs(hard);
        const double gap = hard - soft;  // in [0, gamma * log(paths)]
        const bool ok = gap >= -slack && gap <= ph.gamma * (ph.n + ph.m) * std::log(3.0) + slack;
        return Outcome{ok ? "PASS" : "FAIL", "DTW - sdtw = " + fmt("%.3e", gap)};
      });
      // 6. Gradient check by central differences along a random direction (float64 when supported).
      Point pf = shape(impl.name(), d, 2, 12, 15, 3, 0.5);
      pf.dtype = "float64";
      if (!impl.supports(pf).ok) pf.dtype = "float32";
      record(impl, pf, "finite differences (" + pf.dtype + ")", [&] {
        const auto in = make_inputs(pf, next_seed());
        at::Tensor x = in.x, y = in.y;
        const auto e = run(impl, pf, x, y);
        auto gen = at::make_generator<at::CPUGeneratorImpl>(next_seed());
        const auto vx = at::randn(x.sizes(), gen, at::kDouble), vy = at::randn(y.sizes(), gen, at::kDouble);
        const double h = pf.dtype == "float64" ? 1e-6 : 1e-2;
        auto f = [&](double t) {
          Point q = pf;
          return run(impl, q, (x.to(at::kDouble) + t * vx).to(scalar_type(pf)), (y.to(at::kDouble) + t * vy).to(scalar_type(pf)))
              .values.sum()
              .item<double>();
        };
        const double fd = (f(h) - f(-h)) / (2 * h);
        const double an = (e.gx * vx).sum().item<double>() + (e.gy * vy).sum().item<double>();
        const double rel = std::abs(fd - an) / std::max(std::abs(an), 1e-12);
        const double tol = pf.dtype == "float64" ? 1e-6 : 2e-2;
        return Outcome{rel <= tol ? "PASS" : "FAIL", "directional derivative rel diff " + fmt("%.2e", rel)};
      });
    }
    std::cout << "\n" << format_text_table(summary);

    // Gradient error against the float64 reference over gamma and length.
    Table acc;
    acc.header = {"impl", "device", "dtype", "B", "N", "D", "gamma", "value_err", "grad_err", "status", "seed"};
    for (const auto& [impl_ptr, dev] : targets) {
      if (impl_ptr->name() == "reference_cpu") continue;
      for (int64_t n : a.lengths) {
        if (dev == "cpu" && n > a.cpu_max_n) continue;
        for (double g : a.gammas) {
          const Point p = shape(impl_ptr->name(), dev, a.batch, n, n, a.dim, g);
          const uint64_t s = next_seed();
          std::vector<std::string> row = {p.impl, p.device, p.dtype, std::to_string(p.batch), std::to_string(n),
                                          std::to_string(p.dim), format_double(g)};
          try {
            const auto in = make_inputs(p, s);
            const auto e = run(*impl_ptr, p, in.x, in.y);
            const auto r = reference_eval(in.x, in.y, g, std::nullopt, false, true);
            row.push_back(fmt("%.3e", value_error(e.values, r.values)));
            row.push_back(fmt("%.3e", std::max(rel_l2_error(e.gx, r.grad_x), rel_l2_error(e.gy, r.grad_y))));
            row.push_back("ok");
          } catch (const NotSupported& e) {
            row.insert(row.end(), {"", "", "not_supported"});
          } catch (const std::exception& e) {
            row.insert(row.end(), {"", "", "error"});
          }
          row.push_back(std::to_string(s));
          acc.rows.push_back(row);
          std::printf("accuracy %s %s N=%ld gamma=%g: grad err %s\n", p.impl.c_str(), p.device.c_str(), static_cast<long>(n),
                      g, row[8].empty() ? row[9].c_str() : row[8].c_str());
          std::fflush(stdout);
        }
      }
    }
    const std::string out = a.csv.empty() ? "results/" + device_slug() + "/grad-accuracy.csv" : a.csv;
    if (!acc.rows.empty()) {
      create_parent_folder(out);
      write_csv(out, acc);
      std::cout << "\nGradient error vs gamma and length (rel-L2 against float64):\n" << format_text_table(acc);
      std::cout << "written to " << out << "\n";
    }
    std::printf("\ncheck: %zu implementation/device pairs, %zu checks, %zu failed; seed %llu\n", targets.size(),
                summary.rows.size(), failures, static_cast<unsigned long long>(a.seed));
    if (failures) exit_status() = 1;
  });
}

}  // namespace sdtw::bench
