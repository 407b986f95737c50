#pragma once
// The subcommands of sdtw-bench; each adds itself to the app and runs from its callback.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdtw::bench {

// Exit status the callbacks set (0 unless a command fails).
int& exit_status();

struct SweepArgs {
  std::string config;
  std::string out_dir;  // default results/<gpu-slug>
  std::string shard = "1/1";
  std::vector<std::string> impls;  // only these implementations
  bool fresh = false;
  bool dry_run = false;
  bool strict = false;
  bool no_table = false;
  long limit = -1;
  std::string gpus;  // "all" or "0,1,...": one worker process per GPU
};
void add_sweep_options(CLI::App* app, SweepArgs& args);
int run_sweep_command(const SweepArgs& args);

// CLI11 check: a finite number > 0 (the accuracy table's gammas).
const CLI::Validator& finite_positive();
// CLI11 check: a finite number >= 0 (gamma, where 0 is exact DTW; relative amounts such as --mem-tol).
const CLI::Validator& finite_non_negative();
// CLI11 check: a finite number (eval's warp).
const CLI::Validator& finite_number();
// CLI11 check: a whole number >= low that fits in 64 bits (sizes, counts); the message names the bound.
CLI::Validator integer_at_least(int64_t low);
// --bandwidth read as sdtw_torch reads it: NaN refused; <= 0, inf or >= 2^62 is no band, else floor.
CLI::Option* add_bandwidth_option(CLI::App* cmd, double& bandwidth);
std::optional<int64_t> band_of(double bandwidth);

struct Point;
// For the one-point commands (profile, eval), before any allocation: the point's implementation
// exists and supports it, its device is present, and its estimated peak memory fits the device
// (the sweep's estimate); else an error naming the option, the value and the sizes.
void check_point_runs(const Point& p, const std::string& size_options);

void register_sweep(CLI::App& app);
void register_merge(CLI::App& app);
void register_compare(CLI::App& app);
void register_table(CLI::App& app);
void register_list(CLI::App& app);
void register_check(CLI::App& app);
void register_profile(CLI::App& app);
void register_eval(CLI::App& app);
void register_inputs(CLI::App& app);

}  // namespace sdtw::bench
