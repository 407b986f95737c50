#include "metadata.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#ifndef SDTW_BENCH_BUILD_TYPE
#define SDTW_BENCH_BUILD_TYPE "unknown"
#endif
#ifndef SDTW_BENCH_CXX_COMPILER
#define SDTW_BENCH_CXX_COMPILER "unknown"
#endif

namespace sdtw::bench {

std::string fnv1a64_hex(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string gpu_slug(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : lower + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!cur.empty()) {
      tokens.push_back(cur);
      cur.clear();
    }
  }
  std::string slug;
  for (const auto& t : tokens) {
    const bool memory = t.size() > 2 && t.compare(t.size() - 2, 2, "gb") == 0 && std::isdigit(static_cast<unsigned char>(t[0]));
    if (t == "nvidia" || t == "tesla" || memory || t.rfind("hbm", 0) == 0 || t == "pcie" || t.rfind("sxm", 0) == 0 ||
        t == "nvl" || t == "cpu")
      continue;
    slug += (slug.empty() ? "" : "-") + t;
  }
  return slug.empty() ? "cpu" : slug;
}

std::optional<std::string> capture(const std::string& command) {
  FILE* p = popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 512> buf{};
  size_t got;
  while ((got = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  const int rc = pclose(p);
  if (rc != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

GitInfo git_info(const std::string& dir) {
  GitInfo g;
  // A copy of the tree whose .git is missing or stale (a lent GPU machine) is named by the caller.
  if (const char* commit = std::getenv("SDTW_GIT_COMMIT"); commit && *commit) {
    g.commit = commit;
    if (const char* dirty = std::getenv("SDTW_GIT_DIRTY"); dirty && *dirty) g.dirty = dirty;
    return g;
  }
  const std::string q = "'" + dir + "'";
  if (auto c = capture("git -C " + q + " rev-parse HEAD"); c && !c->empty()) {
    g.commit = *c;
    if (auto s = capture("git -C " + q + " status --porcelain --untracked-files=no -- . ':(exclude)results'"))
      g.dirty = s->empty() ? "false" : "true";
  }
  return g;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
std::vector<std::string>& command_storage() {
  static std::vector<std::string> argv;
  return argv;
}
}  // namespace

void record_command_line(int argc, char** argv) { command_storage().assign(argv, argv + argc); }
const std::vector<std::string>& command_line() { return command_storage(); }

nlohmann::json host_metadata() {
  nlohmann::json j;
  j["compiler"] = SDTW_BENCH_CXX_COMPILER;
  j["compiler_version_macro"] = __VERSION__;
  j["build_type"] = SDTW_BENCH_BUILD_TYPE;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) j["host"] = host;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpu, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) j["cpu"] = line.substr(line.find_first_not_of(' ', colon + 1));
      break;
    }
  }
  j["cpu_threads"] = std::thread::hardware_concurrency();
  return j;
}

}  // namespace sdtw::bench
