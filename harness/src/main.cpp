// sdtw-bench: verified sweeps of soft-DTW implementations, checks, profiling, comparisons.
#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <execinfo.h>
#include <ucontext.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "core/config.hpp"
#include "core/metadata.hpp"
#include "core/parallel_sweep.hpp"
#include "torch/commands.hpp"

namespace {

// A crash prints where it happened (faulting address, thread, backtrace) before the process dies
// of the signal, so a report has a trace (no allocation in the handler).
void print_backtrace_and_die(int sig, siginfo_t* info, void* context) {
  char line[160];
  const int len = std::snprintf(line, sizeof line, "sdtw-bench: crashed (signal %d at address %p, %s thread); backtrace:\n",
                                sig, info ? info->si_addr : nullptr,
                                ::gettid() == ::getpid() ? "main" : "another");
  if (len > 0 && ::write(2, line, static_cast<size_t>(len)) < 0) {
  }
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), 2);
#if defined(__x86_64__)
  // A jump to a bad address leaves nothing to unwind; the word on top of the stack is then the
  // return address of the call that made it.
  const auto* registers = static_cast<const ucontext_t*>(context)->uc_mcontext.gregs;
  void* at[2] = {reinterpret_cast<void*>(registers[REG_RIP]), *reinterpret_cast<void* const*>(registers[REG_RSP])};
  static const char called[] = "sdtw-bench: instruction pointer, then the word on top of the stack:\n";
  if (::write(2, called, sizeof called - 1) < 0) {
  }
  ::backtrace_symbols_fd(at, 2, 2);
#else
  (void)context;
#endif
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sdtw::bench;
  struct sigaction crash = {};
  crash.sa_sigaction = print_backtrace_and_die;
  crash.sa_flags = SA_SIGINFO;
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::sigaction(sig, &crash, nullptr);
  die_with_parent_if_worker();
  record_command_line(argc, argv);
  CLI::App app{
      "sdtw-bench: soft-DTW sweeps (forward + backward timed as in docs/DESIGN.md §5, verified against the "
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
  register_inputs(app);
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
