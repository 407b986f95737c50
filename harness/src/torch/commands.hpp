#pragma once
// The subcommands of sdtw-bench; each adds itself to the app and runs from its callback.
#include <CLI/CLI.hpp>

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

// CLI11 check: a finite number > 0 (gamma).
const CLI::Validator& finite_positive();
// Sakoe-Chiba option text: <= 0 means no band, as in sdtw_torch and softdtw-cuda-torch.
inline constexpr const char* kBandwidthHelp =
    "Sakoe-Chiba bandwidth; 0 or negative: no band (as sdtw_torch and softdtw-cuda-torch; default none)";

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
