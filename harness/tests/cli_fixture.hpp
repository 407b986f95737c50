#pragma once
// The fixture of the end-to-end tests: a temporary directory and a way to run sdtw-bench in it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "csv.hpp"

namespace sdtw::bench::test_support {

namespace fs = std::filesystem;

inline const std::string kExe = SDTW_BENCH_EXE;

class BenchCliFixture : public ::testing::Test {
 public:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sdtw_bench_cli_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir);
  }
  // Runs the executable with `args` (after shell assignments `env`, if any), returns its exit
  // status; output in `out`.
  int bench(const std::string& args, const std::string& env = "") {
    const auto log = (dir / "log.txt").string();
    const int rc = std::system((env + (env.empty() ? "" : " ") + kExe + " " + args + " > '" + log + "' 2>&1").c_str());
    out = read_file(log);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  // Starts the executable with `args` as a child process (stdout and stderr in `log`) and returns
  // its pid, for tests that watch, kill or measure it; -1 if it could not fork.
  pid_t start(const std::vector<std::string>& args, const std::string& log) const {
    std::vector<char*> argv{const_cast<char*>(kExe.c_str())};  // built before the fork
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (!freopen(log.c_str(), "w", stdout) || ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(126);
      ::execv(kExe.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }
  std::string p(const std::string& f) const { return (dir / f).string(); }
  fs::path dir;
  std::string out;
};

}  // namespace sdtw::bench::test_support
