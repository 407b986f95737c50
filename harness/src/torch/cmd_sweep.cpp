// `sdtw-bench sweep FILE` / `sdtw-bench --sweep FILE`.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "core/config.hpp"
#include "core/memory_estimate.hpp"
#include "core/metadata.hpp"
#include "core/parallel_sweep.hpp"
#include "core/sweep.hpp"
#include "core/text_table.hpp"
#include "torch/commands.hpp"
#include "torch/device_info.hpp"
#include "torch/implementation.hpp"
#include "torch/runner.hpp"

#ifndef SDTW_SOURCE_DIR
#define SDTW_SOURCE_DIR "."
#endif

namespace sdtw::bench {

int& exit_status() {
  static int status = 0;
  return status;
}

namespace {

// A finite number for which `ok` holds; the message names `want` (as in "must be a finite number > 0").
CLI::Validator finite_where(bool (*ok)(double), const std::string& want) {
  const std::string must = "must be a finite number" + want;
  return CLI::Validator(
      [ok, must](std::string& text) -> std::string {
        const auto x = parse_number(text);
        if (!x) return must + " (got '" + text + "')";
        return std::isfinite(*x) && ok(*x) ? std::string() : must + " (got " + text + ")";
      },
      "FINITE" + want);
}

}  // namespace

const CLI::Validator& finite_positive() {
  static const CLI::Validator v = finite_where([](double x) { return x > 0; }, " > 0");
  return v;
}

const CLI::Validator& finite_non_negative() {
  static const CLI::Validator v = finite_where([](double x) { return x >= 0; }, " >= 0");
  return v;
}

const CLI::Validator& finite_number() {
  static const CLI::Validator v = finite_where([](double) { return true; }, "");
  return v;
}

CLI::Validator integer_at_least(int64_t low) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        int64_t v = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
        const std::string want = "must be an integer >= " + std::to_string(low);
        if (error == std::errc::result_out_of_range)
          return want + " that fits in 64 bits (got " + text + ")";
        if (error != std::errc() || end != text.data() + text.size()) return want + " (got '" + text + "')";
        return v >= low ? std::string() : want + " (got " + text + ")";
      },
      "INT >= " + std::to_string(low));
}

// The Python API's rule (sdtw_torch.functional._check_bandwidth): a band this wide keeps every cell.
constexpr double kNoBandFrom = 4611686018427387904.0;  // 2^62

std::optional<int64_t> band_of(double bandwidth) {
  if (!(bandwidth > 0) || bandwidth >= kNoBandFrom) return std::nullopt;
  return static_cast<int64_t>(std::floor(bandwidth));
}

CLI::Option* add_bandwidth_option(CLI::App* cmd, double& bandwidth) {
  return cmd
      ->add_option("--bandwidth", bandwidth,
                   "Sakoe-Chiba bandwidth (a fraction is floored); 0, negative or inf: no band (as sdtw_torch and "
                   "softdtw-cuda-torch; default none)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto v = parse_number(text);
            const bool infinite = text == "inf" || text == "-inf" || text == "+inf";
            if (infinite || (v && !std::isnan(*v))) return "";
            return "must be a number (0, negative or inf for no band), got '" + text + "'";
          },
          "NUMBER"));
}

void check_point_runs(const Point& p, const std::string& size_options) {
  const Implementation* impl = find_implementation(p.impl);
  if (!impl) throw std::invalid_argument("--impl " + p.impl + ": unknown (known: " + known_implementations_text() + ")");
  if (const auto d = device_support(p); !d.ok) throw std::invalid_argument("--device " + p.device + ": " + d.reason);
  if (const auto s = impl->supports(p); !s.ok) throw std::invalid_argument("--impl " + p.impl + ": " + s.reason);
  const std::string why = exceeds_capacity(p, point_peak_estimate(p), memory_capacity_bytes(p.device));
  if (!why.empty())
    throw std::invalid_argument(describe(p) + ": " + why + " (nothing allocated); reduce " + size_options);
}

void add_sweep_options(CLI::App* app, SweepArgs& a) {
  app->add_option("--out", a.out_dir, "Directory for <sweep>.csv and <sweep>.json (default results/<gpu-slug>, "
                                      "e.g. results/h100, results/cpu without a GPU)");
  app->add_option("--shard", a.shard, "Run every Nth point of the sweep: K/N with 1 <= K <= N (file <sweep>.shard-K-of-N.csv); "
                                      "join the shards with `sdtw-bench merge`");
  app->add_option("--impl", a.impls, "Run only these implementations (repeatable)")
      ->check(CLI::IsMember(known_implementations()));
  app->add_flag("--fresh", a.fresh, "Start the result files over instead of resuming");
  app->add_flag("--dry-run", a.dry_run, "List the points (after --shard and --impl) and exit");
  app->add_flag("--strict", a.strict, "Exit 1 when any row is failed or error");
  app->add_flag("--no-table", a.no_table, "Do not print the summary table at the end");
  app->add_option("--gpus", a.gpus,
                  "One worker process per GPU: 'all' or indices like 0,1 (each worker gets one as "
                  "CUDA_VISIBLE_DEVICES and every Nth point, as --shard K/N); the rows are merged into the one "
                  "result file, each naming its GPU in the `gpu` column; rerun to resume");
  app->add_option("--limit", a.limit, "Run at most this many new points, then stop (resume later); >= 0")
      ->check(integer_at_least(0));
}

namespace {

// --strict: any row failed or error.
bool has_failures(const Table& t) {
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& d = t.at(r, "disposition");
    if (d == disposition::failed || d == disposition::error) return true;
  }
  return false;
}

// The GPUs --gpus names, as CUDA_VISIBLE_DEVICES entries (this process's own list applied).
std::vector<std::string> resolve_gpus(const std::string& text) {
  int count = 0;
#ifdef SDTW_BENCH_HAVE_CUDA
  count = visible_gpu_count();
  const char* why = "no CUDA device is visible (CUDA_VISIBLE_DEVICES, /proc/driver/nvidia/gpus)";
#else
  const char* why = "this sdtw-bench was built without CUDA";
#endif
  if (count == 0) throw std::invalid_argument(std::string("--gpus ") + text + ": " + why);
  const std::vector<std::string> visible = cuda_visible_devices();
  std::vector<std::string> ids;
  if (text == "all") {
    for (int i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  } else {
    ids = parse_gpu_list(text);
    for (const auto& id : ids)
      if (std::stoi(id) >= count)
        throw std::invalid_argument("--gpus: GPU " + id + " does not exist (" + std::to_string(count) + " visible)");
  }
  if (!visible.empty())
    for (auto& id : ids) id = visible.at(static_cast<size_t>(std::stoi(id)));
  return ids;
}

int run_on_gpus(const SweepArgs& a, const SweepConfig& cfg, const std::vector<std::string>& gpus,
                const std::string& dir) {
  ParallelSweep s;
  s.exe = std::filesystem::read_symlink("/proc/self/exe").string();
  s.worker_args = {"sweep", a.config, "--no-table"};
  for (const auto& i : a.impls) s.worker_args.insert(s.worker_args.end(), {"--impl", i});
  if (a.limit >= 0) s.worker_args.insert(s.worker_args.end(), {"--limit", std::to_string(a.limit)});
  s.gpus = gpus;
  s.name = cfg.name;
  s.csv = (std::filesystem::path(dir) / (cfg.name + ".csv")).string();
  s.points = cfg.points;
  s.fresh = a.fresh;
  std::cout << "sdtw-bench: sweep " << cfg.name << " on " << gpus.size() << " GPU(s), one worker each" << std::endl;
  const ParallelOutcome o = run_parallel_sweep(s);
  for (const auto& r : o.repairs) std::cerr << "sdtw-bench: " << r << "\n";
  int status = 0;
  for (size_t k = 0; k < o.workers.size(); ++k) {
    const auto& w = o.workers[k];
    std::cout << "sdtw-bench: worker " << k + 1 << " (GPU " << w.gpu << "): "
              << (w.status == 0 ? std::string("done") : "exit status " + std::to_string(w.status) + ", log " + w.log)
              << "\n";
    if (w.status != 0) status = 1;
  }
  const Table& merged = o.merged;
  if (!a.no_table) std::cout << "\n" << format_results_summary(merged);
  std::cout << "\nsdtw-bench: wrote " << s.csv << " (" << merged.rows.size() << " rows)" << std::endl;
  if (status != 0) std::cerr << "sdtw-bench: a worker failed: its unfinished points run when the same command is run again\n";
  if (a.strict && has_failures(merged)) status = 1;
  return status;
}

}  // namespace

int run_sweep_command(const SweepArgs& a) {
  SweepConfig cfg = load_config(a.config);
  const Shard shard = parse_shard(a.shard);
  std::vector<Point> points = select_shard(cfg.points, shard);
  if (!a.impls.empty())
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const Point& p) { return std::find(a.impls.begin(), a.impls.end(), p.impl) == a.impls.end(); }),
                 points.end());
  for (const auto& want : a.impls)
    if (std::none_of(cfg.points.begin(), cfg.points.end(), [&](const Point& p) { return p.impl == want; }))
      throw std::invalid_argument("--impl " + want + ": no point of sweep " + cfg.name + " uses it");
  std::vector<std::string> gpus;
  if (!a.gpus.empty()) {
    if (a.shard != "1/1") throw std::invalid_argument("--gpus deals the shards itself: drop --shard " + a.shard);
    gpus = resolve_gpus(a.gpus);
  }
  if (a.dry_run) {
    // The estimate is what the point's step is predicted to hold at its peak (runner.cpp refuses
    // a point whose estimate exceeds the device before allocating).
    for (const auto& p : points) {
      const double est = point_peak_estimate(p), cap = memory_capacity_bytes(p.device);
      std::cout << p.index << "\t" << p.grid << "\t" << describe(p) << "\tpeak ~" << format_bytes(est)
                << (p.device == "cuda" ? " GPU" : " host");
      if (cap > 0 && est > cap) std::cout << " (> " << format_bytes(cap) << ": out_of_memory)";
      if (!gpus.empty())
        std::cout << "\tGPU " << gpus[shard_of(p, gpus.size())];
      std::cout << "\n";
    }
    std::cout << points.size() << " points\n";
    return 0;
  }
  const std::string dir = a.out_dir.empty() ? "results/" + device_slug() : a.out_dir;
  if (std::filesystem::exists(dir) && !std::filesystem::is_directory(dir))
    throw std::invalid_argument("--out " + dir + ": exists and is not a folder");
  if (!gpus.empty()) return run_on_gpus(a, cfg, gpus, dir);
  const std::string stem = shard_stem(cfg.name, shard);
  const std::string csv = (std::filesystem::path(dir) / (stem + ".csv")).string();
  const std::string json = json_sibling(csv);

  nlohmann::json meta = device_metadata();
  const nlohmann::json host = host_metadata();
  for (const auto& [k, v] : host.items()) meta[k] = v;
  const GitInfo git = git_info(SDTW_SOURCE_DIR);
  meta["git_commit"] = git.commit;
  meta["git_dirty"] = git.dirty;
  meta["tool"] = kToolName;
  meta["command"] = command_line();
  meta["commit"] = git.commit;
  meta["dirty"] = git.dirty;
  meta["seed"] = cfg.settings.seed;
  meta["date"] = utc_now_iso8601();
  meta["sweep"] = cfg.name;
  meta["config_path"] = cfg.path;
  meta["config_hash"] = "fnv1a64:" + fnv1a64_hex(cfg.text);
  meta["config"] = cfg.text;
  meta["shard"] = a.shard;
  meta["settings"] = {{"warmup", cfg.settings.warmup},
                      {"warmup_min_ms", cfg.settings.warmup_min_ms},
                      {"reps", cfg.settings.reps},
                      {"seed", cfg.settings.seed},
                      {"verify", cfg.settings.verify},
                      {"verify_max_cells", cfg.settings.verify_max_cells}};
  meta["method"] =
      "forward+backward of sum(sdtw(x,y)) on fresh leaf copies; warmup steps (at least warmup_min_ms of them) then reps "
      "steps timed one by one with CUDA "
      "events (GPU) or steady_clock (CPU); nearest-rank median/p10/p90 ms; step_peak_mb = CUDA caching allocator "
      "peak allocated bytes of a timed step minus those allocated just before it (largest over the steps), "
      "abs_peak_mb = peak allocated bytes since the point started (MiB); inputs from seed ^ FNV-1a(\"B|N|M|D|\")";

  ResultsStore store(csv, meta, a.fresh);
  for (const auto& r : store.repairs()) std::cerr << "sdtw-bench: " << r << "\n";
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
  if (a.strict && has_failures(store.table())) return 1;
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
