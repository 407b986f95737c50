// sdtw-bench: verified sweeps of soft-DTW implementations, checks, profiling, comparisons.
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>

#include <iostream>

#include "core/config.hpp"
#include "torch/commands.hpp"

int main(int argc, char** argv) {
  using namespace sdtw::bench;
  CLI::App app{
      "sdtw-bench: soft-DTW sweeps (forward + backward timed as in DESIGN.md section 5, verified against the "
      "float64 reference), checks, profiling and result comparison.\n"
      "Main use: sdtw-bench --sweep configs/paper.yaml"};
  app.require_subcommand(0, 1);
  SweepArgs top;
  app.add_option("--sweep", top.config, "Run the sweep in this YAML config (same as `sdtw-bench sweep FILE`)")
      ->check(CLI::ExistingFile);
  add_sweep_options(&app, top);
  register_sweep(app);
  register_check(app);
  register_profile(app);
  register_eval(app);
  register_compare(app);
  register_merge(app);
  register_table(app);
  register_list(app);
  // Parse errors print CLI11's message; command errors one line (config errors with file:line).
  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      if (top.config.empty()) {
        std::cout << app.help();
        return 2;
      }
      return run_sweep_command(top);
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ConfigError& e) {
    std::cerr << "sdtw-bench: config error: " << e.what() << "\n";
    return 2;
  } catch (const c10::Error& e) {
    // The message only: the C++ backtrace is for torch's developers, not for a bad input.
    std::cerr << "sdtw-bench: " << e.what_without_backtrace() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "sdtw-bench: " << e.what() << "\n";
    return 1;
  }
  return exit_status();
}
