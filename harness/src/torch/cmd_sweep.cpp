// `sdtw-bench sweep FILE` / `sdtw-bench --sweep FILE`.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/config.hpp"
#include "core/metadata.hpp"
#include "core/sweep.hpp"
#include "core/text_table.hpp"
#include "torch/commands.hpp"
#include "torch/device_info.hpp"
#include "torch/runner.hpp"

#ifndef SDTW_SOURCE_DIR
#define SDTW_SOURCE_DIR "."
#endif

namespace sdtw::bench {

int& exit_status() {
  static int status = 0;
  return status;
}

void add_sweep_options(CLI::App* app, SweepArgs& a) {
  app->add_option("--out", a.out_dir, "Directory for <sweep>.csv and <sweep>.json (default results/<gpu-slug>, "
                                      "e.g. results/h100, results/cpu without a GPU)");
  app->add_option("--shard", a.shard, "Run every Nth point of the sweep: K/N with 1 <= K <= N (file <sweep>.shard-K-of-N.csv); "
                                      "join the shards with `sdtw-bench merge`");
  app->add_option("--impl", a.impls, "Run only these implementations (repeatable)");
  app->add_flag("--fresh", a.fresh, "Start the result files over instead of resuming");
  app->add_flag("--dry-run", a.dry_run, "List the points (after --shard and --impl) and exit");
  app->add_flag("--strict", a.strict, "Exit 1 when any row is failed or error");
  app->add_flag("--no-table", a.no_table, "Do not print the summary table at the end");
  app->add_option("--limit", a.limit, "Run at most this many new points, then stop (resume later)");
}

int run_sweep_command(const SweepArgs& a) {
  SweepConfig cfg = load_config(a.config);
  const Shard shard = parse_shard(a.shard);
  std::vector<Point> points = select_shard(cfg.points, shard);
  if (!a.impls.empty())
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const Point& p) { return std::find(a.impls.begin(), a.impls.end(), p.impl) == a.impls.end(); }),
                 points.end());
  if (a.dry_run) {
    for (const auto& p : points) std::cout << p.index << "\t" << p.grid << "\t" << describe(p) << "\n";
    std::cout << points.size() << " points\n";
    return 0;
  }
  const std::string dir = a.out_dir.empty() ? "results/" + device_slug() : a.out_dir;
  std::string stem = cfg.name;
  if (shard.n > 1) stem += ".shard-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.n);
  const std::string csv = (std::filesystem::path(dir) / (stem + ".csv")).string();
  const std::string json = (std::filesystem::path(dir) / (stem + ".json")).string();

  nlohmann::json meta = device_metadata();
  const nlohmann::json host = host_metadata();
  for (const auto& [k, v] : host.items()) meta[k] = v;
  const GitInfo git = git_info(SDTW_SOURCE_DIR);
  meta["git_commit"] = git.commit;
  meta["git_dirty"] = git.dirty;
  meta["date"] = utc_now_iso8601();
  meta["sweep"] = cfg.name;
  meta["config_path"] = cfg.path;
  meta["config_hash"] = "fnv1a64:" + fnv1a64_hex(cfg.text);
  meta["config"] = cfg.text;
  meta["shard"] = a.shard;
  meta["settings"] = {{"warmup", cfg.settings.warmup},
                      {"reps", cfg.settings.reps},
                      {"seed", cfg.settings.seed},
                      {"verify", cfg.settings.verify},
                      {"verify_max_cells", cfg.settings.verify_max_cells}};
  meta["method"] =
      "forward+backward of sum(sdtw(x,y)) on fresh leaf copies; warmup then reps steps timed one by one with CUDA "
      "events (GPU) or steady_clock (CPU); median/min/max ms; peak_mb = CUDA caching allocator peak allocated bytes "
      "(MiB) over the timed steps after resetPeakStats";

  ResultsStore store(csv, json, meta, a.fresh);
  size_t todo = 0;
  double weight = 0;
  for (const auto& p : points)
    if (!store.has(point_key(p))) {
      ++todo;
      weight += Progress::point_weight(p);
    }
  if (a.limit >= 0 && static_cast<long>(todo) > a.limit) todo = static_cast<size_t>(a.limit);
  std::cout << "sdtw-bench: sweep " << cfg.name << " (" << cfg.path << "), " << points.size() << " points in shard "
            << a.shard << ", " << store.resumed_rows() << " rows already in " << csv << ", " << todo << " to run"
            << std::endl;
  Progress progress(todo, weight, isatty(fileno(stdout)) != 0, stdout);
  const auto summary = run_sweep(points, store, [&](const Point& p) { return run_point(p, cfg.settings, cfg.name); },
                                 &progress, a.limit);

  if (!a.no_table) {
    // The rows of this shard's points, in sweep order.
    Table shown;
    shown.header = store.table().header;
    for (size_t r = 0; r < store.table().rows.size(); ++r) {
      const auto key = row_key(store.table(), r);
      if (std::any_of(points.begin(), points.end(), [&](const Point& p) { return point_key(p) == key; }))
        shown.rows.push_back(store.table().rows[r]);
    }
    std::cout << "\n" << format_results_summary(shown);
  }
  std::cout << "\nsdtw-bench: ran " << summary.ran << ", skipped " << summary.skipped << " (already in the file)";
  for (const auto& [d, n] : summary.dispositions) std::cout << ", " << d << " " << n;
  std::cout << "\nsdtw-bench: wrote " << csv << " and " << json << std::endl;
  if (a.strict) {
    for (size_t r = 0; r < store.table().rows.size(); ++r) {
      const auto& d = store.table().at(r, "disposition");
      if (d == disposition::failed || d == disposition::error) return 1;
    }
  }
  return 0;
}

void register_sweep(CLI::App& app) {
  auto* cmd = app.add_subcommand("sweep", "Run a YAML sweep: time, measure memory and verify every point; resumable");
  static SweepArgs args;
  cmd->add_option("config", args.config, "Sweep config (configs/*.yaml)")->required()->check(CLI::ExistingFile);
  add_sweep_options(cmd, args);
  cmd->callback([] { exit_status() = run_sweep_command(args); });
}

}  // namespace sdtw::bench
