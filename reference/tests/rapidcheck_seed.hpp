#pragma once
// RapidCheck draws a fresh seed when RC_PARAMS names none. The property tests run on a fixed seed
// instead, so that a red run is the code's doing; SDTW_FRESH_SEEDS=1 (the `fuzz` ctest entries)
// lets RapidCheck draw one. Either way the seed is printed (see rapidcheck_seed) and
// RC_PARAMS="seed=..." replays it.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rapidcheck.h>

namespace sdtw::test {

inline constexpr std::uint64_t kFixedRapidCheckSeed = 20261126;

// Sets RC_PARAMS before RapidCheck first reads it: the fixed seed unless RC_PARAMS names one or
// SDTW_FRESH_SEEDS=1, and `defaults` (e.g. "max_success=3000") for each key RC_PARAMS leaves out.
inline void fix_rapidcheck_seed(const std::string& defaults = "") {
  static bool done = false;
  if (done) return;
  done = true;
  const char* env = std::getenv("RC_PARAMS");
  std::string params = env ? env : "";
  const char* fresh = std::getenv("SDTW_FRESH_SEEDS");
  const bool fresh_seeds = fresh && std::strcmp(fresh, "1") == 0;
  if (params.find("seed=") == std::string::npos && !fresh_seeds)
    params += " seed=" + std::to_string(kFixedRapidCheckSeed);
  if (!defaults.empty() && params.find(defaults.substr(0, defaults.find('='))) == std::string::npos)
    params += " " + defaults;
  ::setenv("RC_PARAMS", params.c_str(), 1);
}

// The seed RapidCheck runs on, for failure messages.
inline std::string rapidcheck_seed() {
  return "RC_PARAMS=\"seed=" + std::to_string(rc::detail::configuration().testParams.seed) + "\" replays this seed";
}

}  // namespace sdtw::test
